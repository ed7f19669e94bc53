"""Typed messages on a thread that waits for a confirmation, as chat front-ends send them."""

from __future__ import annotations

from tests.conftest import say

CONFIG = {"configurable": {"thread_id": "t1"}}


def refunds(db) -> list[str]:
    return [r["order_id"] for r in db.query("SELECT order_id FROM refunds")]


def pending(app) -> bool:
    return bool(app.get_state(CONFIG).interrupts)


def test_a_typed_yes_answers_the_pending_refund_once(app, db):
    say(app, "我要退款 OD-20240618-002")
    assert pending(app) and refunds(db) == []
    say(app, "确认")
    say(app, "确认")  # a second yes answers nothing: the refund exists once
    assert refunds(db) == ["OD-20240618-002"]


def test_a_new_question_with_an_order_id_keeps_the_refund_pending_unrun(app, db):
    say(app, "我要退款 OD-20240618-002")
    out = say(app, "OD-20240618-001 到哪了？")
    texts = [m.content for m in out["messages"] if m.type == "ai"]
    assert any("还在等您确认" in t and "没有执行" in t for t in texts)  # said so
    assert any("配送中" in t for t in texts)  # answered the new question first
    assert "接下来为您申请退款" in "".join(texts)  # then the refund is asked about again
    assert pending(app) and refunds(db) == []
    say(app, "确认")
    assert refunds(db) == ["OD-20240618-002"]


def test_a_correction_asks_again_about_the_corrected_order(app, db):
    say(app, "我要退款 OD-20240618-002")
    out = say(app, "不对，是订单 OD-20240618-001")
    assert pending(app) and "OD-20240618-001" in out["messages"][-1].content
    assert refunds(db) == []


def test_an_unclear_message_asks_again_and_changes_nothing(app, db):
    say(app, "我要退款 OD-20240618-002")
    out = say(app, "嗯……")
    assert pending(app) and "没能确定" in out["messages"][-1].content
    assert refunds(db) == []
