"""Cancelling an order: confirmed first, owner-checked, once, and only before delivery."""

from __future__ import annotations

from langgraph.types import Command

from graph import time_travel
from tests.conftest import ALICE, BOB, say

CONFIG = {"configurable": {"thread_id": "t1"}}


def status_of(db, order_id: str) -> str:
    return db.query_one("SELECT status FROM orders WHERE order_id = ?", (order_id,))["status"]


def test_cancel_asks_first_then_cancels_once(app, db):
    say(app, "帮我取消订单 OD-20240618-001")
    interrupts = app.get_state(CONFIG).interrupts
    assert interrupts and status_of(db, "OD-20240618-001") == "delivering"
    out = app.invoke(Command(resume={"decision": "approve"}), CONFIG, context=ALICE)
    assert "已取消" in out["messages"][-1].content
    assert status_of(db, "OD-20240618-001") == "cancelled"
    # replaying the tool node from before the confirmation does not cancel twice
    before_tool = next(e for e in reversed(time_travel.history(app, "t1")) if e.next == ("tool",))
    replayed = time_travel.replay(app, "t1", before_tool.checkpoint_id, ALICE)
    assert replayed["tool_results"][-1]["duplicated"] is True
    assert status_of(db, "OD-20240618-001") == "cancelled"


def test_declined_cancel_changes_nothing(app, db):
    say(app, "cancel my order OD-20240618-001")
    out = app.invoke(Command(resume="no"), CONFIG, context=ALICE)
    assert "won't cancel an order" in out["messages"][-1].content
    assert status_of(db, "OD-20240618-001") == "delivering"


def test_a_delivered_order_cannot_be_cancelled(app, db):
    say(app, "取消订单 OD-20240618-002")
    out = app.invoke(Command(resume="确认"), CONFIG, context=ALICE)
    assert "已无法取消" in out["messages"][-1].content
    assert status_of(db, "OD-20240618-002") == "delivered"


def test_someone_elses_order_is_not_found_and_not_cancelled(app, db):
    out = say(app, "帮我取消订单 OD-20240618-001", context=BOB)
    assert not app.get_state(CONFIG).interrupts
    assert "没有找到订单" in out["messages"][-1].content
    assert status_of(db, "OD-20240618-001") == "delivering"
