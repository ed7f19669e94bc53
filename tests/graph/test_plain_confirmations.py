"""Every confirmation in the user's language, in the scenario's own words (issue 38).

"即将执行：request_refund（order_id=…, reason=用户申请退款）", "execute_transfer (…,
amount_cents=8000, risk_ticket=RISK-…)", "book_flight_ticket（…, flight_no=None）" became what
will happen, to what, for how much: no tool name, ``key=value``, ``None``, cents or raw state
in the question, the card's title, its description or the fields it shows.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from state import Context
from tests.conftest import ALICE
from tests.graph.talk import Talk

STAFF = Context(user_id="u_90001", user_role="agent")
TOOLS = re.compile(
    r"request_refund|cancel_order|book_flight_ticket|execute_transfer|book_appointment"
    r"|cancel_appointment|send_bulk_notification|[a-z]+_[a-z_]+="
)
CASES = [
    # (turns, who, what the question must say)
    (
        ("订单 OD-20240618-002 送到了但是洒了，我要退款",),
        ALICE,
        "申请退款 36.00 元，原因：送到了但是洒了",
    ),
    (("I want a refund for OD-20240618-002",), ALICE, "Request a refund of 36.00 yuan for order"),
    (("帮我取消订单 OD-20240618-001",), ALICE, "取消订单 OD-20240618-001（黄焖鸡米饭，42.50 元）"),
    (
        ("帮我订6月20号上海到北京的机票，乘客张三，身份证110101199001011237",),
        ALICE,
        "预订 2024-06-20 上海→北京 的 MU5101 航班（08:00 起飞，10:15 到达），票价 980 元",
    ),
    (
        ("给ACC-2001转账80元，密码123456",),
        ALICE,
        "从您尾号 1001 的账户向尾号 2001 的账户转账 80.00 元",
    ),
    (("transfer 80 yuan to ACC-2001, pin 123456",), ALICE, "Move 80.00 yuan from your account"),
    (("帮我预约6月20号的皮肤科",), ALICE, "预约 2024-06-20 15:00 皮肤科赵医生的号"),
    (
        ("给所有配送中订单的客户发短信：餐品将延迟送达",),
        STAFF,
        "通过短信向所有配送中订单的客户发送通知：“餐品将延迟送达”",
    ),
]


def _card(t: Talk) -> dict[str, Any]:
    (interrupt,) = t.app.get_state(t.config).interrupts
    return dict(interrupt.value)


def _read(value: dict[str, Any]) -> list[str]:
    """Everything of the card a person reads: question, titles, descriptions, fields."""
    out = [str(value["question"])]
    for action in value["action_requests"]:
        out += [str(action["name"]), str(action.get("description", ""))]
        out += [f"{label} {shown}" for label, shown in action["args"].items()]
    out += [str(c["action_name"]) for c in value["review_configs"]]
    return out


@pytest.mark.parametrize(("turns", "who", "said"), CASES, ids=lambda v: str(v)[:24])
def test_the_question_and_the_card_say_it_plainly(talk, world, turns, who, said):
    t = talk(context=who)(*turns)
    assert t.pending, t.replies
    value = _card(t)
    assert said in value["question"]
    # the chat says it too; a sub-agent's task (transfer, clinic) says it is working on it,
    # its question is the card's (the interrupt is raised inside the agent)
    assert said in t.replies or t.replies.startswith(("好的，正在为您", "Sure, working on it"))
    for text in [*_read(value), t.replies]:
        assert not TOOLS.search(text), text
        for internal in ("None", "cents", "RISK-", "risk_ticket", "8000", "pii:", "S-0"):
            assert internal not in text, (internal, text)
    description = value["action_requests"][0]["description"]
    assert description in value["question"]  # the card's description is the same sentence
    assert value["actions"][0]["tool"]  # the tool's name stays for programs, not for people


def test_a_changed_value_is_said_and_the_question_asked_again(talk, world):
    t = talk()("给ACC-2001转账80元，密码123456", "不对，改成50")
    assert "已将转账金额改为 50.00 元" in t.replies
    assert "转账 50.00 元" in _card(t)["action_requests"][0]["description"]


def test_an_existing_refund_says_its_state_in_words(talk, world):
    t = talk()("OD-20240618-002 我要退款", "确认")
    t = talk(thread="again")("OD-20240618-002 我要退款", "确认")
    assert "状态：已提交，等待审核" in t.replies and "submitted" not in t.replies
