"""What a case changed in the business database: snapshots, the expected state, the diff.

A case is scored by state, not by words: ``snapshot`` reads the tables a scenario writes,
``expected_state`` applies a case's declared changes to the seed's snapshot, and ``diff`` and
``duplicates`` say what differs and what was written twice.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any, Literal, TypedDict, cast

from eval.backends import (
    Database,
)

Row = list[Any]
"""A business row as the snapshot lists it: its scored columns, in order."""


class DbChanges(TypedDict, total=False):
    """A case's expected changes to the seed snapshot (its ``db`` block): the keys it names."""

    refunds: list[Row]
    """order, amount in cents, status"""
    urges: dict[str, int]
    """order → urges"""
    notifications: dict[str, int]
    """``user:channel`` → notifications"""
    balances: dict[str, int]
    """account → balance in cents"""
    transfers: list[Row]
    """from, to, amount in cents, status"""
    flight_bookings: list[Row]
    """flight, date, user, passenger"""
    seats: dict[str, int]
    """``flight@date`` → seats left"""
    appointments: list[Row]
    """slot, user"""
    slots: dict[str, str]
    """slot → status"""


class DbState(DbChanges, total=True):
    """The business state a case is scored on (``snapshot``): every key of ``DbChanges``."""


class Mismatch(TypedDict):
    """One key of the state that differs from what the case expects."""

    got: Any
    want: Any


LIST_KEYS: tuple[Literal["refunds", "transfers", "flight_bookings", "appointments"], ...] = (
    "refunds",
    "transfers",
    "flight_bookings",
    "appointments",
)


COUNT_KEYS: tuple[Literal["urges", "notifications"], ...] = ("urges", "notifications")


MERGE_KEYS = ("balances", "seats", "slots")


def snapshot(db: Database) -> DbState:
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


def expected_state(seed: DbState, changes: DbChanges) -> DbState:
    """Apply a case's expected changes to the seed snapshot."""
    unknown = set(changes) - set(seed)
    if unknown:
        msg = f"unknown state keys {sorted(unknown)}; known: {sorted(seed)}"
        raise ValueError(msg)
    before: Mapping[str, Any] = seed  # read by the keys the case names
    state = {key: value for key, value in before.items()}
    asked: Mapping[str, Any] = changes
    for key, value in asked.items():
        if key in MERGE_KEYS:
            state[key] = {**before[key], **value}
        elif key in LIST_KEYS:
            state[key] = sorted(list(row) for row in value)
        else:
            state[key] = dict(value)
    return cast("DbState", state)


def duplicates(actual: DbState, expected: DbState) -> int:
    """Count business rows created more often than the case asked for."""
    extra = 0
    for key in LIST_KEYS:
        have = Counter(tuple(row) for row in actual[key])
        want = Counter(tuple(row) for row in expected[key])
        extra += sum(max(0, n - max(want[row], 1)) for row, n in have.items())
    for counted in COUNT_KEYS:
        for item, n in actual[counted].items():
            extra += max(0, n - max(expected[counted].get(item, 0), 1))
    return extra


def diff(actual: DbState, expected: DbState) -> dict[str, Mismatch]:
    """Return the keys whose actual value differs: ``{key: {"got": ..., "want": ...}}``."""
    got: Mapping[str, Any] = actual
    want: Mapping[str, Any] = expected
    return {key: {"got": got[key], "want": want[key]} for key in want if got[key] != want[key]}
