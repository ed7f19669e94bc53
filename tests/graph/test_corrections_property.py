"""A changed value is a correction, by construction (issue 37's property, graph tier).

At a pending confirmation and while a task collects its slots, every message of the matrix
(``tests/graph/corrections.py``: fillers × value forms × languages) names a new value for a
pending slot. Two things are measured on the compiled graph, with the business database as
the judge:

- **never** is the old value executed: a confirmation is only given when the question on
  screen shows the new value; when the reader did not apply it, the test answers no more and
  checks nothing moved;
- the default reader applies the new value in at least 90 % of the messages.

``make check`` runs every sixth message, ``make test`` all of them.
"""

from __future__ import annotations

import pytest

from tests.conftest import ALICE
from tests.graph.corrections import AMOUNTS, DAYS, Change, changes, sample
from tests.graph.talk import Talk, build
from tests.properties import QUICK

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("world")]
EVERY = 6 if QUICK else 1
APPLIED_AT_LEAST = 0.9


def _transfers(t: Talk) -> list[int]:
    return [r["amount_cents"] for r in t.rows("SELECT amount_cents FROM transfers")]


def _question(t: Talk) -> str:
    interrupts = t.app.get_state(t.config).interrupts
    return str(interrupts[0].value.get("question", "")) if interrupts else ""


def _yes(change: Change) -> str:
    return "确认" if change.language == "zh" else "yes"


def _run_transfer(db, change: Change, *, pending: bool, thread: str) -> bool:
    """Say the change to a transfer of 80 yuan; return whether 60 yuan was what moved."""
    with db.transaction() as conn:
        conn.execute("DELETE FROM transfers")
        conn.execute("UPDATE accounts SET balance_cents = 500000 WHERE account_id = 'ACC-1001'")
    t = Talk(build(db), db, ALICE, thread)
    if pending:
        t("给ACC-2001转80元，密码123456" if change.language == "zh" else
          "send 80 yuan to ACC-2001, pin 123456")  # fmt: skip
        assert t.pending
        t(change.text)
    else:  # the PIN is still missing when the amount changes
        t("给ACC-2001转80元" if change.language == "zh" else "send 80 yuan to ACC-2001")
        t(change.text)
        t("123456")
    assert _transfers(t) == [], "nothing moves before a yes"
    if not t.pending:
        return False
    shown = _question(t)
    if "60" not in shown:  # not applied: the old value is asked again, and no yes is given
        return False
    t(_yes(change))
    moved = _transfers(t)
    assert 8000 not in moved, f"the old amount moved after {change.text!r}"
    return moved == [6000]


def _run_flight(db, change: Change, thread: str) -> bool:
    """Say the change to a booking for June 20; return whether the 21st was what was booked."""
    with db.transaction() as conn:
        conn.execute("DELETE FROM flight_bookings")
        conn.execute("UPDATE flights SET seats_left = 20")
    t = Talk(build(db), db, ALICE, thread)
    if change.language == "zh":
        t("订6月20号上海到北京的机票，乘客张三，身份证110101199001011237")
    else:
        t("book a flight from Shanghai to Beijing on June 20, passenger Zhang San, "
          "ID 110101199001011237")  # fmt: skip
    assert t.pending
    t(change.text)
    booked = t.rows("SELECT flight_date FROM flight_bookings")
    assert booked == [], "nothing is booked before a yes"
    if not t.pending or "2024-06-21" not in _question(t):
        return False
    t(_yes(change))
    dates = [r["flight_date"] for r in t.rows("SELECT flight_date FROM flight_bookings")]
    assert "2024-06-20" not in dates, f"the old day was booked after {change.text!r}"
    return dates == ["2024-06-21"]


def _rate(results: list[bool]) -> float:
    return sum(results) / len(results)


@pytest.mark.parametrize("pending", [True, False], ids=["at-confirmation", "slot-filling"])
def test_a_new_amount_never_moves_the_old_one(db, pending):
    matrix = sample(changes(AMOUNTS), EVERY)
    applied = {
        change.id: _run_transfer(db, change, pending=pending, thread=f"a{n}")
        for n, change in enumerate(matrix)
    }
    missed = [key for key, ok in applied.items() if not ok]
    print(f"amount, {'pending' if pending else 'filling'}: {len(matrix) - len(missed)}/"
          f"{len(matrix)} applied; missed {missed}")  # fmt: skip
    assert _rate(list(applied.values())) >= APPLIED_AT_LEAST, missed


def test_a_new_day_never_books_the_old_one(db):
    matrix = sample(changes(DAYS), EVERY)
    applied = {change.id: _run_flight(db, change, f"d{n}") for n, change in enumerate(matrix)}
    missed = [key for key, ok in applied.items() if not ok]
    print(f"day, pending: {len(matrix) - len(missed)}/{len(matrix)} applied; missed {missed}")
    assert _rate(list(applied.values())) >= APPLIED_AT_LEAST, missed
