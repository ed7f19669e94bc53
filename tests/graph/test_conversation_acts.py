"""Hello, thanks, goodbye, "never mind" and asking for a person, through the compiled graph."""

from __future__ import annotations

from typing import Any

from langgraph.types import Command

from state import Context
from tests.conftest import ALICE, nodes_visited, say

CONFIG = {"configurable": {"thread_id": "t1"}}


def state(app: Any) -> dict[str, Any]:
    return app.get_state(CONFIG).values


def last(out: dict[str, Any]) -> str:
    return str(out["messages"][-1].content)


def handoffs(app: Any) -> list[dict[str, Any]]:
    return [p["handoff"] for p in state(app)["protocol"] if p.get("handoff")]


def test_a_hello_is_answered_with_what_the_agent_can_do(app):
    assert nodes_visited(app, "你好") == ["intent"]
    reply = last(state(app))
    assert reply.startswith("您好") and "查询订单状态" in reply and "预约挂号" in reply
    assert "没太明白" not in reply


def test_a_hello_lists_only_what_the_callers_role_may_do(app):
    customer = last(say(app, "你好"))
    assert "转账" in customer and "预约挂号" in customer
    # staff tasks the executor would refuse a customer are not offered to one
    assert "批量通知" not in customer and "销售" not in customer
    analyst = last(
        say(app, "hello", thread="t2", context=Context(user_id="u_90001", user_role="analyst"))
    )
    assert "sales figures" in analyst and "weather" in analyst
    assert "refund" not in analyst and "transfer" not in analyst
    unsure = last(say(app, "那个那个……", thread="t3"))  # not understood: one question, no menu
    assert "没太明白" in unsure and "查询订单状态" not in unsure and "导出销售报表" not in unsure


def test_thanks_and_goodbye_are_answered_in_the_users_language(app):
    assert "不客气" in last(say(app, "好的谢谢"))
    assert "再见" in last(say(app, "再见"))
    assert "welcome" in last(say(app, "thanks!", thread="t2"))
    assert "Goodbye" in last(say(app, "bye", thread="t2"))


def test_never_mind_drops_the_task_that_waits_for_slots(app):
    assert "科室" in last(say(app, "帮我挂个号"))
    out = say(app, "算了不挂了")
    assert last(out) == "好的，不预约挂号了。还有什么可以帮您？"
    values = state(app)
    assert values["missing_slots"] == [] and values["slots"] == {}
    # asking again starts afresh, and asks for everything again
    assert "科室" in last(say(app, "帮我挂个号"))


def test_never_mind_in_a_transfer_keeps_nothing_it_was_told(app, db):
    say(app, "给 ACC-2002 转 50 元")
    assert state(app)["slots"]  # the payee and the amount were taken
    out = say(app, "不转了")
    assert "不转账了" in last(out)
    assert state(app)["slots"] == {}
    assert db.query("SELECT * FROM transfers") == []


def test_a_hello_or_thanks_in_the_middle_of_a_task_asks_its_question_again(app):
    say(app, "我的订单到哪了")
    assert "订单号" in last(say(app, "你好"))
    assert "订单号" in last(say(app, "谢谢"))
    assert "配送中" in last(say(app, "OD-20240618-001"))  # the task went on


def test_goodbye_in_the_middle_of_a_task_keeps_it_for_later(app):
    say(app, "我的订单到哪了")
    assert "还没有办完" in last(say(app, "拜拜"))
    assert "配送中" in last(say(app, "OD-20240618-001"))


def test_asking_for_a_person_hands_over(app):
    assert nodes_visited(app, "我要找人工") == ["intent", "handoff"]
    assert "转接人工客服" in last(state(app))
    assert handoffs(app) == [{"to": "human", "reason": "user_request"}]


def test_a_complaint_is_handed_to_a_person(app):
    out = say(app, "我想投诉骑手态度差")
    assert "投诉" in last(out) and "人工" in last(out)
    assert handoffs(app) == [{"to": "human", "reason": "complaint"}]
    assert "human agent" in last(say(app, "I want to talk to a human", thread="t2"))


def test_asking_for_a_person_while_a_refund_waits_runs_nothing(app, db):
    say(app, "我要退款 OD-20240618-002")
    assert app.get_state(CONFIG).interrupts
    out = say(app, "转人工")
    texts = [str(m.content) for m in out["messages"] if m.type == "ai"]
    assert any("已取消" in t for t in texts[-2:])  # the pending refund was closed, unrun
    assert "转接人工客服" in texts[-1]
    assert not app.get_state(CONFIG).interrupts
    assert db.query("SELECT * FROM refunds") == []


def test_a_greeting_in_front_of_a_question_answers_the_question(app):
    assert "配送中" in last(say(app, "你好，OD-20240618-001 到哪了"))


def test_a_follow_up_asks_the_last_request_again_with_what_it_changes(app):
    say(app, "OD-20240618-001 到哪了")
    out = say(app, "那 OD-20240618-002 呢")
    assert "OD-20240618-002" in last(out) and "已送达" in last(out)
    assert state(app)["intent"] == "CHECK_ORDER_STATUS"


def test_a_follow_up_keeps_the_other_slots_but_no_secret(app):
    say(app, "帮我转100元给ACC-2001，密码123456")
    app.invoke(Command(resume="确认"), CONFIG, context=ALICE)
    out = say(app, "那 ACC-3001 呢")
    values = state(app)
    assert values["slots"]["to_account"] == "ACC-3001"
    assert values["slots"]["amount_cents"] == 10_000  # kept
    assert "pin" not in values["slots"] and "密码" in last(out)  # asked again


def test_without_a_follow_up_cue_a_bare_value_starts_nothing(app):
    say(app, "OD-20240618-001 到哪了")
    assert state(app)["intent"] == "CHECK_ORDER_STATUS"
    out = say(app, "今天心情不错")
    assert "没太明白" in last(out)


def test_a_request_no_task_serves_goes_to_a_person_with_the_reason(app, db):
    cases = [
        ("退掉我的机票", "退票", "flight_change"),
        ("I need to change my flight", "ticket", "flight_change"),
        ("帮我改一下收货地址", "收货地址", "address_change"),
        ("我要开发票", "发票", "invoice"),
        ("能帮我把刚才那笔转账撤回吗", "撤回", "transfer_reversal"),
    ]
    for number, (text, said, request) in enumerate(cases):
        thread = f"beyond-{number}"
        assert nodes_visited(app, text, thread=thread) == ["intent", "handoff"], text
        values = app.get_state({"configurable": {"thread_id": thread}}).values
        reply = str(values["messages"][-1].content)
        assert said in reply and ("人工" in reply or "human" in reply), reply
        handed = [p["handoff"] for p in values["protocol"] if p.get("handoff")]
        assert handed == [{"to": "human", "reason": "not_served", "request": request}]
        # read as the nearest task before: a booking that asked for an ID number
        assert values.get("missing_slots") in (None, [])
    assert db.query("SELECT * FROM flight_bookings") == []


def test_a_request_beyond_us_while_a_confirmation_waits_is_read_as_its_answer(app):
    say(app, "我要退款 OD-20240618-002")
    assert app.get_state(CONFIG).interrupts
    out = say(app, "我要开发票")  # not the pending refund's yes: that path decides
    assert not any(p.get("handoff") for p in state(app)["protocol"][-2:])
    assert out["messages"][-1].content
