"""Understanding as commands, on the compiled graph and the business database.

A correction for every task that has slots (at a confirmation, before one, after an answer,
inside the finance and appointment agents), several requests and several entities in one
message, and a property: after any sequence of corrections, what runs is what the user said
last.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scenarios import SCENARIOS
from state import Context
from tests.conftest import ALICE
from tests.graph.talk import Talk, build

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("world")]

STAFF = Context(user_id="u_90001", user_role="agent")
ANALYST = Context(user_id="u_80001", user_role="analyst")


# ---- a correction for every task that has slots ---------------------------------------------


@dataclass(frozen=True)
class Correction:
    intent: str
    turns: tuple[str, ...]
    check: Callable[[Talk], None]
    role: str = "customer"

    @property
    def context(self) -> Context:
        return {"customer": ALICE, "agent": STAFF, "analyst": ANALYST}[self.role]


def _refund(t: Talk) -> None:
    assert [r["order_id"] for r in t.rows("SELECT order_id FROM refunds")] == ["OD-20240618-001"]


def _cancel_order(t: Talk) -> None:
    statuses = {r["order_id"]: r["status"] for r in t.rows("SELECT order_id, status FROM orders")}
    assert statuses["202506001"] == "cancelled" and statuses["OD-20240618-001"] == "delivering"


def _urged(t: Talk) -> None:
    urged = t.results("urge_delivery")
    assert urged[-1]["status"] == "success"
    assert urged[-1]["data"]["order_id"] == "OD-20240618-001"


def _status(t: Talk) -> None:
    assert t.results("query_order_status")[-1]["data"]["order_id"] == "OD-20240618-002"
    assert "已送达" in t.replies


def _weather(t: Talk) -> None:
    assert "上海" in t.replies and "北京" not in t.replies


def _search(t: Talk) -> None:
    assert "2024-06-21" in t.replies and "MU5101" in t.replies and "CA1858" not in t.replies
    assert t.rows("SELECT * FROM flight_bookings") == []  # a search books nothing


def _flight(t: Talk) -> None:
    rows = t.rows("SELECT flight_date FROM flight_bookings")
    assert [r["flight_date"] for r in rows] == ["2024-06-21"]


def _transfer(t: Talk) -> None:
    rows = t.rows("SELECT to_account, amount_cents, status FROM transfers")
    assert rows == [{"to_account": "ACC-2001", "amount_cents": 5000, "status": "completed"}]


def _transfer_payee(t: Talk) -> None:
    rows = t.rows("SELECT to_account, amount_cents FROM transfers")
    assert rows == [{"to_account": "ACC-3001", "amount_cents": 50000}]


def _appointment(t: Talk) -> None:
    rows = t.rows(
        "SELECT s.slot_date, d.name_zh FROM appointments a JOIN appointment_slots s"
        " ON s.slot_id = a.slot_id JOIN doctors r ON r.doctor_id = s.doctor_id"
        " JOIN departments d ON d.dept_id = r.dept_id"
    )
    assert rows == [{"slot_date": "2024-06-21", "name_zh": "内科"}]


def _appointment_department(t: Talk) -> None:
    rows = t.rows(
        "SELECT d.name_zh FROM appointments a JOIN appointment_slots s ON s.slot_id = a.slot_id"
        " JOIN doctors r ON r.doctor_id = s.doctor_id JOIN departments d ON d.dept_id = r.dept_id"
    )
    assert rows == [{"name_zh": "皮肤科"}]


def _cancelled_appointment(t: Talk) -> None:
    rows = t.rows(
        "SELECT d.name_zh FROM appointments a JOIN appointment_slots s ON s.slot_id = a.slot_id"
        " JOIN doctors r ON r.doctor_id = s.doctor_id JOIN departments d ON d.dept_id = r.dept_id"
    )
    assert rows == [{"name_zh": "内科"}]  # the dermatology one went, as corrected


def _bulk_notice(t: Talk) -> None:
    started = t.results("send_bulk_notification")
    assert started[-1]["status"] == "success"
    ran = [c for c in t.out["pending_tool_calls"] if c["name"] == "send_bulk_notification"]
    assert ran[-1]["parameters"]["send_via"] == "in_app"


def _sales(t: Talk) -> None:
    assert "2024年6月" in t.replies and "2024年5月" not in t.replies


def _export(t: Talk) -> None:
    assert "2024-06" in t.replies


CORRECTIONS = [
    Correction(
        "REQUEST_REFUND",
        ("我要退款 OD-20240618-002", "不对，是 OD-20240618-001", "确认"),
        _refund,
    ),
    Correction(
        "CANCEL_ORDER", ("取消订单 OD-20240618-001", "不对，是 202506001", "确认"), _cancel_order
    ),
    Correction("URGE_DELIVERY", ("催一下 OD-20240618-002", "不对，是 OD-20240618-001"), _urged),
    Correction(
        "CHECK_ORDER_STATUS", ("OD-20240618-001 到哪了", "不对，是 OD-20240618-002"), _status
    ),
    Correction("QUERY_WEATHER", ("北京天气怎么样", "不对，我是说上海"), _weather),
    Correction("SEARCH_FLIGHTS", ("6月20号上海到北京有哪些航班", "不对，是6月21号"), _search),
    Correction(
        "BOOK_FLIGHT",
        (
            "帮我订6月20号上海到北京的机票",
            "乘客张三，身份证110101199001011237",
            "改成6月21号",
            "确认",
        ),
        _flight,
    ),
    Correction(
        "TRANSFER_MONEY", ("给ACC-2001转账，密码123456", "500", "不对，改成50", "确认"), _transfer
    ),
    Correction("BOOK_APPOINTMENT", ("帮我预约6月20号的内科", "改成6月21号", "确认"), _appointment),
    Correction(
        "CANCEL_APPOINTMENT",
        (
            "帮我预约6月20号的内科",
            "确认",
            "帮我预约6月20号的皮肤科",
            "确认",
            "取消内科的预约",
            "不对，是皮肤科那个",
            "确认",
        ),
        _cancelled_appointment,
    ),
    Correction(
        "NOTIFY_CUSTOMERS",
        ("通知所有配送中订单的客户，发短信：餐品将延迟送达", "改成站内信", "确认"),
        _bulk_notice,
        "agent",
    ),
    Correction(
        "QUERY_SALES",
        ("2024年5月销售额最高的产品", "不对，我是说2024年6月销售额最高的产品"),
        _sales,
        "analyst",
    ),
    Correction("EXPORT_SALES", ("导出2024年5月的销售报表", "不对，改成6月"), _export, "analyst"),
]


def test_every_task_with_slots_has_a_correction_case():
    with_slots = {
        task.intent for scenario in SCENARIOS for task in scenario.tasks if task.required_slots
    }
    assert {case.intent for case in CORRECTIONS} == with_slots


@pytest.mark.parametrize("case", CORRECTIONS, ids=lambda case: case.intent)
def test_a_correction_is_what_runs(talk, case):
    t = talk(case.context)(*case.turns)
    case.check(t)


def test_a_correction_at_the_confirmation_says_what_changed_and_asks_again(talk):
    t = talk()("给ACC-2001转账，密码123456", "500")
    assert t.pending and t.rows("SELECT * FROM transfers") == []
    t("不对，改成50")
    assert "已将转账金额改为 50.00 元" in t.replies
    question = t.app.get_state(t.config).interrupts[0].value["question"]
    assert "已将转账金额改为 50.00 元" in question and "转账 50.00 元" in question
    assert t.rows("SELECT * FROM transfers") == []  # nothing moved on the old or new amount


def test_a_correction_given_as_a_resume_is_read_not_run(talk):
    t = talk()("给ACC-2001转账，密码123456", "500", "!resume 不对，改成50")
    assert t.pending and t.rows("SELECT * FROM transfers") == []
    assert "50.00 元" in t.replies
    t("!resume 确认")
    assert t.rows("SELECT amount_cents FROM transfers") == [{"amount_cents": 5000}]


def test_words_that_are_neither_yes_nor_no_nor_a_correction_ask_again(talk):
    t = talk()("帮我预约6月20号的内科", "嗯让我想想这个医生怎么样")
    assert t.pending and "没能确定" in t.replies
    assert t.rows("SELECT * FROM appointments") == []


def test_the_appointment_agent_rechecks_a_corrected_day(talk):
    t = talk()("帮我预约6月20号的皮肤科", "改成6月21号")
    assert not t.pending and "没有可预约的号" in t.replies  # 21st: no dermatology left
    t("确认")
    assert t.rows("SELECT * FROM appointments") == []


def test_a_correction_before_the_confirmation_is_kept(talk):
    t = talk()("帮我预约皮肤科", "改成内科，20号", "确认")
    _appointment_name = t.rows(
        "SELECT d.name_zh FROM appointments a JOIN appointment_slots s ON s.slot_id = a.slot_id"
        " JOIN doctors r ON r.doctor_id = s.doctor_id JOIN departments d ON d.dept_id = r.dept_id"
    )
    assert _appointment_name == [{"name_zh": "内科"}]


# ---- several requests, several entities ------------------------------------------------------


def test_an_order_and_the_weather_in_one_message_both_answered_in_one_step(talk):
    t = talk()
    steps = [
        list(chunk)
        for chunk in t.app.stream(
            {"messages": [("user", "查一下 OD-20240618-001 到哪了，再帮我看看北京天气")]},
            t.config,
            context=ALICE,
            stream_mode="updates",
        )
    ]
    tools = [s for s in steps if "tool" in s]
    assert len(tools) == 1  # both calls in one step
    state = t.app.get_state(t.config).values
    assert {r["tool"] for r in state["tool_results"]} == {"query_order_status", "query_weather"}
    reply = state["messages"][-1].content
    assert "配送中" in reply and "北京" in reply


def test_two_cities_two_answers(talk):
    t = talk()("北京和上海今天天气怎么样")
    assert "北京" in t.replies and "上海" in t.replies
    assert len(t.results("query_weather")) == 2


def test_two_orders_two_answers(talk):
    t = talk()("OD-20240618-001 和 OD-20240618-002 到哪了")
    assert "配送中" in t.replies and "已送达" in t.replies


def test_each_success_or_failure_is_said_on_its_own(talk):
    t = talk()("北京和广州今天天气怎么样")  # the demo API knows no Guangzhou
    assert "北京现在晴" in t.replies
    assert "广州" in t.replies and "未找到" in t.replies


def test_an_answer_and_a_new_request_in_one_message(talk):
    t = talk()("我要退款", "OD-20240618-002，另外帮我催一下 OD-20240618-001")
    assert "已帮您催促骑手" in t.replies and "接下来为您申请退款" in t.replies
    assert t.pending and t.rows("SELECT * FROM refunds") == []
    t("确认")
    assert [r["order_id"] for r in t.rows("SELECT order_id FROM refunds")] == ["OD-20240618-002"]


def test_two_writes_in_one_message_run_in_order_each_confirmed(talk):
    t = talk()("取消订单 OD-20240618-001，然后给ACC-2001转账100元，密码123456")
    assert t.pending and "取消订单 OD-20240618-001（黄焖鸡米饭" in t.replies
    t("确认")
    assert "已取消" in t.replies and "接下来为您转账" in t.replies
    assert t.pending and t.rows("SELECT * FROM transfers") == []
    t("确认")
    assert t.rows("SELECT amount_cents FROM transfers") == [{"amount_cents": 10000}]


def test_booking_then_notifying_waits_for_the_booking(talk):
    t = talk()(
        "帮我订一张6月20号从上海到北京的机票，乘客张三，身份证110101199001011237，订好了通知我"
    )
    assert t.pending and t.rows("SELECT * FROM notifications") == []
    t("确认")
    assert len(t.rows("SELECT * FROM flight_bookings")) == 1
    notices = t.rows("SELECT content FROM notifications")
    assert len(notices) == 1 and "FL-20240620001" in notices[0]["content"]


def test_a_declined_booking_sends_no_notice(talk):
    t = talk()(
        "帮我订一张6月20号从上海到北京的机票，乘客张三，身份证110101199001011237，订好了通知我",
        "不用了",
    )
    assert t.rows("SELECT * FROM flight_bookings") == []
    assert t.rows("SELECT * FROM notifications") == []
    assert "没有执行任何操作" in t.replies and "arguments" not in t.replies


def test_a_new_request_at_a_confirmation_keeps_it_pending_and_nothing_moves(talk):
    t = talk()("帮我转500元给ACC-2001，密码123456", "今天北京天气怎么样")
    assert "北京现在晴" in t.replies and "还在等您确认" in t.replies
    assert t.pending and t.rows("SELECT * FROM transfers") == []
    t("算了")
    assert not t.pending and t.rows("SELECT * FROM transfers") == []


def test_dropping_one_queued_request(talk):
    t = talk()("我要退款，另外帮我查一下北京天气")
    assert "北京" in t.replies and "订单号" in t.replies  # the weather at once, then asks


# ---- after any corrections, what runs is the last value said ------------------------------

PHRASINGS = ("不对，改成{}", "改成{}元", "不是这个数，是{}", "金额改为{}")


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    amounts=st.lists(st.integers(min_value=1, max_value=900), min_size=1, max_size=3),
    phrasings=st.lists(st.sampled_from(PHRASINGS), min_size=3, max_size=3),
    before=st.booleans(),
)
def test_the_transfer_moves_the_last_amount_said(db, amounts, phrasings, before):
    with db.transaction() as conn:
        conn.execute("DELETE FROM transfers")
        conn.execute("UPDATE accounts SET balance_cents = 500000 WHERE account_id = 'ACC-1001'")
    app = build(db)
    thread = f"p{abs(hash((tuple(amounts), tuple(phrasings), before)))}"
    t = Talk(app, db, ALICE, thread)
    if before:  # corrections while the PIN is still missing, then at the confirmation
        t("给ACC-2001转账888元")
        t(phrasings[0].format(amounts[0]))
        t("密码123456")
        rest = amounts[1:]
    else:
        t("给ACC-2001转账888元，密码123456")
        rest = amounts
    for amount, phrasing in zip(rest, phrasings[1:] if before else phrasings, strict=False):
        t(phrasing.format(amount))
    assert t.pending
    t("确认")
    assert t.rows("SELECT amount_cents FROM transfers") == [{"amount_cents": amounts[-1] * 100}]
