"""What a case changed in the business database: snapshots, the expected state, the diff.

A case is scored by state, not by words: ``snapshot`` reads the tables a scenario writes,
``expected_state`` applies a case's declared changes to the seed's snapshot, and ``diff`` and
``duplicates`` say what differs and what was written twice.
"""

from __future__ import annotations

from collections import Counter

from config.limits import JsonObject
from eval.backends import (
    Database,
)

LIST_KEYS = ("refunds", "transfers", "flight_bookings", "appointments")


COUNT_KEYS = ("urges", "notifications")


MERGE_KEYS = ("balances", "seats", "slots")


def snapshot(db: Database) -> JsonObject:
    """Return the business state the cases are scored on."""
    return {
        "refunds": sorted(
            [r["order_id"], r["amount_cents"], r["status"]]
            for r in db.query("SELECT order_id, amount_cents, status FROM refunds")
        ),
        "urges": {
            r["order_id"]: r["n"]
            for r in db.query(
                "SELECT order_id, COUNT(*) AS n FROM delivery_urges GROUP BY order_id"
            )
        },
        "notifications": {
            f"{r['user_id']}:{r['channel']}": r["n"]
            for r in db.query(
                "SELECT user_id, channel, COUNT(*) AS n FROM notifications GROUP BY 1, 2"
            )
        },
        "balances": {
            r["account_id"]: r["balance_cents"]
            for r in db.query("SELECT account_id, balance_cents FROM accounts")
        },
        "transfers": sorted(
            [r["from_account"], r["to_account"], r["amount_cents"], r["status"]]
            for r in db.query(
                "SELECT from_account, to_account, amount_cents, status FROM transfers"
            )
        ),
        "flight_bookings": sorted(
            [r["flight_no"], r["flight_date"], r["user_id"], r["passenger_name"]]
            for r in db.query(
                "SELECT flight_no, flight_date, user_id, passenger_name FROM flight_bookings"
            )
        ),
        "seats": {
            f"{r['flight_no']}@{r['flight_date']}": r["seats_left"]
            for r in db.query("SELECT flight_no, flight_date, seats_left FROM flights")
        },
        "appointments": sorted(
            [r["slot_id"], r["user_id"]]
            for r in db.query("SELECT slot_id, user_id FROM appointments")
        ),
        "slots": {
            r["slot_id"]: r["status"]
            for r in db.query("SELECT slot_id, status FROM appointment_slots")
        },
    }


def expected_state(seed: JsonObject, changes: JsonObject) -> JsonObject:
    """Apply a case's expected changes to the seed snapshot."""
    unknown = set(changes) - set(seed)
    if unknown:
        msg = f"unknown state keys {sorted(unknown)}; known: {sorted(seed)}"
        raise ValueError(msg)
    state = {key: value for key, value in seed.items()}
    for key, value in changes.items():
        if key in MERGE_KEYS:
            state[key] = {**seed[key], **value}
        elif key in LIST_KEYS:
            state[key] = sorted(list(row) for row in value)
        else:
            state[key] = dict(value)
    return state


def duplicates(actual: JsonObject, expected: JsonObject) -> int:
    """Count business rows created more often than the case asked for."""
    extra = 0
    for key in LIST_KEYS:
        have = Counter(tuple(row) for row in actual[key])
        want = Counter(tuple(row) for row in expected[key])
        extra += sum(max(0, n - max(want[row], 1)) for row, n in have.items())
    for key in COUNT_KEYS:
        for item, n in actual[key].items():
            extra += max(0, n - max(expected[key].get(item, 0), 1))
    return extra


def diff(actual: JsonObject, expected: JsonObject) -> JsonObject:
    """Return the keys whose actual value differs: ``{key: {"got": ..., "want": ...}}``."""
    return {
        key: {"got": actual[key], "want": expected[key]}
        for key in expected
        if actual[key] != expected[key]
    }
