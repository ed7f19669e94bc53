"""What trying phrasings nobody wrote rules for found (issue 27's last check), kept fixed.

Each case failed before its fix, with the business database as the judge (the second round,
stop 35, is at the end): a correction at
the appointment's confirmation ("不是20号，21号") was not read and the 20th was booked; a
yes to the one other day offered asked for the day again; a transfer's account number alone
switched the conversation to English; a name said as its own clause before the ID number was
asked for again.
"""

from __future__ import annotations

import pytest

from state import Context
from tests.graph.talk import Talk

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("world")]
ANALYST = Context(user_id="u_80001", user_role="analyst")


def _booked(t: Talk) -> list[str]:
    rows = t.rows(
        "SELECT s.slot_date FROM appointments a JOIN appointment_slots s ON s.slot_id = a.slot_id"
    )
    return [r["slot_date"] for r in rows]


@pytest.mark.parametrize(
    "correction",
    ["不是20号，21号", "不是20号,是21号", "不要20号，要21号", "not the 20th, the 21st"],
)
def test_not_this_but_that_at_the_appointment_confirmation_books_the_new_day(talk, correction):
    t = talk()("帮我约6月20号皮肤科")
    assert t.pending
    t(correction)
    assert "2024-06-21" in t.replies and _booked(t) == []
    t("确认")
    assert "2024-06-20" not in _booked(t)  # never the day the user took back


def test_a_yes_to_the_one_day_offered_books_that_day(talk):
    t = talk()("帮我约个明天的儿科")
    assert "最近有号的日子：2024-06-20" in t.replies and not t.pending
    t("好的")
    assert t.pending  # the booking's own confirmation, with the offered day
    t("!resume 确认")
    assert _booked(t) == ["2024-06-20"]


def test_a_yes_with_several_days_offered_or_none_takes_no_day(talk):
    t = talk()("帮我约个明天的儿科", "好的", "!resume 不要了")
    assert _booked(t) == []
    t("那就明天吧")  # 6-19 is full: asked again, no day taken by itself
    assert _booked(t) == [] and not t.pending


def test_an_account_number_alone_keeps_the_conversation_in_chinese(talk):
    t = talk()("转账", "ACC-2001")
    assert "还需要" in t.replies and "I still need" not in t.replies
    t("1000", "123456")
    assert t.pending
    t("!resume 确认")
    rows = t.rows("SELECT to_account, amount_cents FROM transfers")
    assert rows == [{"to_account": "ACC-2001", "amount_cents": 100000}]
    assert "转账 1,000.00 元" in t.replies


def test_a_name_said_before_the_id_number_is_the_passenger(talk):
    t = talk()("订6月20号上海到北京的票，张三，110101199001011237")
    assert t.pending and "为张三（身份证" in t.replies
    t("改成21号")
    assert "2024-06-21" in t.replies
    t("!resume 确认")
    rows = t.rows("SELECT passenger_name, flight_date FROM flight_bookings")
    assert rows == [{"passenger_name": "张三", "flight_date": "2024-06-21"}]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("上海明天下雨吗，要带伞不", "查不到 2024-06-19 的预报"),
        ("wether in shanghai tomorow?", "not the forecast for 2024-06-19"),
    ],
)
def test_weather_for_another_day_says_only_the_weather_now_is_known(talk, text, said):
    t = talk()(text)
    assert said in t.replies and ("现在" in t.replies or "right now" in t.replies)


def test_weather_today_says_nothing_of_a_forecast(talk):
    t = talk()("北京今天天气怎么样")
    assert "北京现在晴" in t.replies and "预报" not in t.replies


# ---- second round (stop 35): 32 new phrasings, 4 failed in rules mode, each fixed here ----


def test_two_orders_asked_about_each_are_both_answered(talk):
    # "分别" (each) held 别 (don't): the whole request was read as a denial
    t = talk()("OD-20240618-001 和 OD-20240618-002 分别啥情况")
    assert "OD-20240618-001" in t.replies and "OD-20240618-002" in t.replies
    assert "配送中" in t.replies and "已送达" in t.replies


def test_a_corrected_order_number_in_the_same_message_is_the_only_one_read(talk):
    t = talk()("帮我查下OD-20240618-001，不对，是OD-20240618-002")
    assert "OD-20240618-002" in t.replies and "OD-20240618-001" not in t.replies


def test_a_bare_check_order_asks_which_order_and_the_answer_is_read(talk):
    # below the threshold, one task cued and nothing given: its own question, not the menu
    t = talk()("查订单")
    assert "订单号" in t.replies and "OD-20240618-001（黄焖鸡米饭" in t.replies
    assert "我可以帮您" not in t.replies
    t("OD-20240618-002")
    assert "OD-20240618-002（麻辣香锅）已送达" in t.replies


def test_a_request_sure_of_its_task_is_answered_and_the_waiting_task_goes_on(talk):
    t = talk()("转账给ACC-2001")
    assert "还需要：转账金额" in t.replies
    # the recognizer is sure (0.91) this asks for the caller's orders: they are listed, and
    # the transfer is set aside, not dropped (the rules used to ask for the amount again)
    t("看看订单")
    assert "OD-20240618-001（黄焖鸡米饭" in t.replies
    t("500")
    assert "还需要：6 位支付密码" in t.replies  # the transfer goes on where it was
    assert t.rows("SELECT * FROM transfers") == []


# ---- fourth round (stop 35): 30 more, 7 failed in rules mode, each fixed here ----


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("is od-20240618-002 delivered yet", "OD-20240618-002 (麻辣香锅) has been delivered"),
        ("whats the wheather in hangzhou", "Hangzhou"),  # a letter added after the first
    ],
)
def test_english_a_user_types(talk, text, said):
    t = talk()(text)
    assert said in t.replies and "not sure what you need" not in t.replies


def test_which_orders_did_i_place_lists_them(talk):
    t = talk()("我最近都下了哪些单")
    assert "OD-20240618-001" in t.replies and "202506001" in t.replies
    assert "OD-20240619-003" not in t.replies  # 李四's


def test_a_full_width_id_number_is_the_same_number(talk):
    t = talk()("订６月２１号上海到北京机票，乘客张三，身份证１１０１０１１９９００１０１１２３７")
    assert t.pending and "校验位" not in t.replies
    t("确认")
    rows = t.rows("SELECT flight_date, passenger_name FROM flight_bookings")
    assert rows == [{"flight_date": "2024-06-21", "passenger_name": "张三"}]


def test_an_amount_in_english_words_is_the_amount(talk):
    t = talk()("I'd like to send two hundred yuan to ACC-2001, my pin is 123456")
    assert t.pending
    t("yes")
    assert t.rows("SELECT to_account, amount_cents FROM transfers") == [
        {"to_account": "ACC-2001", "amount_cents": 20000}
    ]


def test_a_second_request_named_by_its_values_alone_runs(talk):
    # "book me pediatrics on the 20th" has no verb of its own: its values say the task
    t = talk()("check OD-20240618-002 and book me pediatrics on the 20th")
    assert "has been delivered" in t.replies and t.pending
    t("yes")
    slots = t.rows(
        "SELECT s.doctor_id, s.slot_date FROM appointments a "
        "JOIN appointment_slots s ON s.slot_id = a.slot_id"
    )
    assert slots == [{"doctor_id": "DR-03", "slot_date": "2024-06-20"}]


def test_how_many_portions_of_a_product_sold(talk, db):
    expected = db.query(
        "SELECT SUM(quantity) AS n FROM sales WHERE month = '2024-05' AND product = '酸菜鱼'"
    )[0]["n"]
    t = talk(ANALYST)("2024年5月酸菜鱼卖了几份")
    assert t.replies == f"2024年5月「酸菜鱼」的销量为 {expected} 件。"


# ---- fifth round (stop 35): 30 more, 4 failed in rules mode, each fixed here ----


def test_where_is_a_numeric_order_number(talk):
    t = talk()("Where's 202506001 at?")
    assert "202506001" in t.replies and "not sure what you need" not in t.replies


def test_cancelling_an_appointment_by_its_number(talk):
    t = talk()("帮我取消AP-12345678这个预约")
    assert "没有找到您的预约 AP-12345678" in t.replies and not t.pending


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("转账被扣了两次，帮我找财务处理", {None, "charge_dispute"}),  # a person either way
        ("I was charged twice for one transfer", {"charge_dispute"}),
    ],
)
def test_a_double_charge_goes_to_a_person_not_to_a_new_transfer(talk, text, named):
    t = talk()(text)
    protocol = t.app.get_state(t.config).values["protocol"]
    handed = [p["handoff"] for p in protocol if p.get("handoff")]
    assert handed and handed[-1]["to"] == "human"
    assert handed[-1].get("request") in named
    assert "收款账户" not in t.replies and "payee" not in t.replies


@pytest.mark.parametrize(
    ("text", "urged"),
    [
        ("查询OD-20240618-001和OD-20240618-002的状态，顺便催一下第一个", "OD-20240618-001"),
        ("check OD-20240618-001 and OD-20240618-002, and hurry the first", "OD-20240618-001"),
    ],
)
def test_the_first_or_the_latter_of_two_orders(talk, text, urged):
    t = talk()(text)
    assert [r["order_id"] for r in t.rows("SELECT order_id FROM delivery_urges")] == [urged]


def test_each_task_of_a_message_is_answered_when_the_last_one_is_refused(talk):
    # the reply said only the second order and the refusal: the first order's answer was lost
    t = talk()("check OD-20240618-001 and OD-20240618-002, and hurry the latter")
    assert t.rows("SELECT * FROM delivery_urges") == []  # delivered: nothing to hurry
    lines = t.replies.splitlines()
    assert len(lines) == 3 and "OD-20240618-001" in lines[0] and "15 minutes" in lines[0]
    assert "OD-20240618-002" in lines[1] and "can't be hurried" in lines[2]


@pytest.mark.parametrize("text", ["帮我订两张明天上海到北京的票", "book two tickets to Beijing"])
def test_tickets_for_several_passengers_go_to_a_person_not_to_a_booking_for_one(talk, text):
    # it asked for one passenger's name and ID: one ticket would have been booked for "two"
    t = talk()(text)
    assert "一位乘客" in t.replies or "one passenger" in t.replies
    assert t.rows("SELECT * FROM flight_bookings") == [] and not t.pending
    handed = [
        p["handoff"] for p in t.app.get_state(t.config).values["protocol"] if p.get("handoff")
    ]
    assert handed == [{"to": "human", "reason": "not_served", "request": "group_booking"}]


# ---- sixth round (stop 35): 30 more, 7 failed in rules mode, each fixed here ----


def _flights(t: Talk) -> list[dict[str, str]]:
    return t.rows("SELECT flight_no, flight_date FROM flight_bookings")


def test_a_month_slash_day_date(talk):
    t = talk()("订6/21上海到北京的机票，乘客张三，身份证110101199001011237")
    assert t.pending
    t("确认")
    assert _flights(t) == [{"flight_no": "MU5101", "flight_date": "2024-06-21"}]


def test_the_flight_named_is_the_flight_booked(talk):
    # the earliest flight with a seat was booked (MU5101 08:00), whatever flight was named
    t = talk()("订20号上海到北京下午那班CA1858，张三，110101199001011237")
    assert "的 CA1858 航班" in t.replies
    t("确认")
    assert _flights(t) == [{"flight_no": "CA1858", "flight_date": "2024-06-20"}]
    t2 = talk(thread="t2")("订20号上海到北京的CA1858，李四，110101199001011237", "确认")
    assert "CA1858 没有可订的座位（已售罄）" in t2.replies  # its one seat went above
    assert len(_flights(t2)) == 1


def test_an_answer_to_a_task_set_aside_resumes_it(talk):
    t = talk()("转账给ACC-2001", "先帮我查下北京天气")
    assert "北京现在晴" in t.replies
    t("500")  # the transfer's amount, asked before the weather
    assert "还需要：6 位支付密码" in t.replies
    t("123456", "确认")
    assert t.rows("SELECT amount_cents FROM transfers") == [{"amount_cents": 50000}]


def test_a_plain_yes_at_the_appointments_confirmation_books_the_part_of_day_asked(talk):
    # "yes" also means "any time" to the appointment's extractor: it changed the afternoon
    t = talk()("book internal medicine on june 20 in the afternoon")
    assert t.pending
    t("yes")
    slots = t.rows(
        "SELECT s.slot_time FROM appointments a JOIN appointment_slots s ON s.slot_id = a.slot_id"
    )
    assert slots == [{"slot_time": "14:00"}] and "Changed" not in t.replies


def test_a_city_in_latin_letters_beside_chinese(talk):
    t = talk()("杭州和Shanghai天气")
    assert "杭州" in t.replies and "Shanghai" in t.replies


def test_an_amount_with_a_thousands_comma(talk):
    t = talk()("给ACC-2001转1,000元 密码123456")
    assert t.pending
    t("确认")
    assert t.rows("SELECT amount_cents FROM transfers") == [{"amount_cents": 100000}]


def test_an_order_number_alone_asks_its_status_unless_a_task_waits_for_it(talk):
    t = talk()("北京天气", "OD-20240618-001呢")
    assert "OD-20240618-001（黄焖鸡米饭）正在配送中" in t.replies
    t = talk(thread="t2")("我要退款")  # which order? the bare number answers it
    t("OD-20240618-002")
    assert t.pending and "为订单 OD-20240618-002（麻辣香锅）申请退款" in t.replies


def test_one_ticket_with_nothing_else_asks_for_the_flight(talk):
    t = talk()("订一张票")  # the menu of every task before: flights are the only tickets here
    assert "预订机票" in t.replies and "出发城市" in t.replies
