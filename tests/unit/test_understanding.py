from __future__ import annotations

from datetime import date

import pytest

from scenarios.appointment.understanding import extract as appointment_extract
from scenarios.flights.understanding import extract as flights_extract
from scenarios.transfer.understanding import extract as transfer_extract
from tests.recognizer import reader, recognizer
from understanding.recognizer import CONFIDENCE_THRESHOLD, detect_language
from understanding.view import DialogueView

U = recognizer()


def confidently(text: str, intent: str) -> bool:
    """Tell whether the rules read ``text`` as ``intent``, sure enough to act on it."""
    result = U.classify(text)
    return result.intent == intent and result.confidence >= CONFIDENCE_THRESHOLD


LABELLED = [
    # (text, intent the user means)
    ("我的订单怎么还没到？", "CHECK_ORDER_STATUS"),
    ("外卖到哪了", "CHECK_ORDER_STATUS"),
    ("帮我查一下订单状态", "CHECK_ORDER_STATUS"),
    ("OD-20240618-001 什么时候到", "CHECK_ORDER_STATUS"),
    ("我的快递物流信息", "CHECK_ORDER_STATUS"),
    ("where is my order?", "CHECK_ORDER_STATUS"),
    ("My order hasn't arrived yet", "CHECK_ORDER_STATUS"),
    ("can you check the status of order 202506001", "CHECK_ORDER_STATUS"),
    ("track my delivery please", "CHECK_ORDER_STATUS"),
    ("when will my food arrive", "CHECK_ORDER_STATUS"),
    ("我要退款", "REQUEST_REFUND"),
    ("订单 OD-20240618-002 送到了但是洒了，我要退款", "REQUEST_REFUND"),
    ("东西坏了，把钱退给我", "REQUEST_REFUND"),
    ("申请退费", "REQUEST_REFUND"),
    ("I want a refund for order 202506001", "REQUEST_REFUND"),
    ("give me my money back", "REQUEST_REFUND"),
    ("please refund me", "REQUEST_REFUND"),
    ("帮我催一下单", "URGE_DELIVERY"),
    ("催单！太慢了", "URGE_DELIVERY"),
    ("能不能加急送", "URGE_DELIVERY"),
    ("快点送过来好吗", "URGE_DELIVERY"),
    ("please hurry up with my order", "URGE_DELIVERY"),
    ("can you speed up the delivery", "URGE_DELIVERY"),
    ("rush my order please", "URGE_DELIVERY"),
    ("嗯……那个……", "UNKNOWN"),
    ("你好", "UNKNOWN"),
    ("hello there", "UNKNOWN"),
    ("讲个笑话吧", "UNKNOWN"),
    ("北京今天天气怎么样", "QUERY_WEATHER"),
    ("what's the weather in Shanghai", "QUERY_WEATHER"),
    ("上月销售额最高的产品", "QUERY_SALES"),
    ("which product had the best sales last month", "QUERY_SALES"),
    ("订单", "UNKNOWN"),
    ("order", "UNKNOWN"),
    ("订单还没到，我要退款", "REQUEST_REFUND"),
    ("太慢了，订单到底什么时候到", "CHECK_ORDER_STATUS"),
]


@pytest.mark.parametrize(
    ("text", "intent"), [row for row in LABELLED if row[1] != "UNKNOWN" and "，" not in row[0]]
)
def test_clear_requests_are_recognized_above_threshold(text, intent):
    result = U.classify(text)
    assert result.intent == intent
    assert result.confidence >= CONFIDENCE_THRESHOLD


@pytest.mark.parametrize(
    "text",
    # "订单" alone lists the caller's orders (LIST_MY_ORDERS, sure): that is an answer, not a guess
    # a bare order number is the order's status (``Scenario.bare``), asked or not
    # "order" alone lists the caller's orders, as "订单" does
    ["嗯……那个……", "你好", "hello there", "讲个笑话吧"],
)
def test_vague_messages_stay_below_threshold(text):
    assert U.classify(text).confidence < CONFIDENCE_THRESHOLD


def test_conflicting_cues_lower_the_confidence():
    clear = U.classify("我要退款").confidence
    mixed = U.classify("订单还没到，我要退款").confidence
    assert mixed < clear


def test_confidence_is_calibrated_on_the_labelled_set():
    """Confidence is P(the named intent is what the user wants); measure how well it tracks.

    A message meaning nothing actionable (truth UNKNOWN) counts as a miss for any intent, so
    its confidence should be low.
    """
    outcomes = []
    for text, truth in LABELLED:
        result = U.classify(text)
        outcomes.append((result.confidence, truth != "UNKNOWN" and result.intent == truth))
    confidences = [c for c, _ in outcomes]
    assert len(set(confidences)) > 5  # not a constant
    brier = sum((c - ok) ** 2 for c, ok in outcomes) / len(outcomes)
    bins: dict[int, list[tuple[float, bool]]] = {}
    for c, ok in outcomes:
        bins.setdefault(min(int(c * 5), 4), []).append((c, ok))
    ece = sum(
        len(items)
        / len(outcomes)
        * abs(sum(c for c, _ in items) / len(items) - sum(ok for _, ok in items) / len(items))
        for items in bins.values()
    )
    correct = [c for c, ok in outcomes if ok]
    wrong = [c for c, ok in outcomes if not ok]
    print(f"brier={brier:.3f} ece={ece:.3f} n={len(outcomes)}")
    assert brier < 0.08
    assert ece < 0.15
    if wrong:
        assert sum(correct) / len(correct) > sum(wrong) / len(wrong)


def test_language_detection():
    assert detect_language("我的订单") == "zh"
    assert detect_language("where is my order") == "en"
    assert detect_language("OD-20240618-001") is None
    assert detect_language("202506001") is None


@pytest.mark.parametrize(
    ("text", "order_id"),
    [
        ("OD-20240618-001", "OD-20240618-001"),
        ("订单号是od-20240618-001", "OD-20240618-001"),
        ("my order is OD20240618001", "OD-20240618-001"),
        ("202506001", "202506001"),
        ("订单 123456789012 到哪了", "123456789012"),
        ("order #2025 0600 1", "202506001"),
    ],
)
def test_order_id_is_extracted(text, order_id):
    assert U.extract_slots(text, "CHECK_ORDER_STATUS").slots == {"order_id": order_id}


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("订单号是 12345", "5 digits"),
        ("my order number is 13800138000", "phone number"),
        ("OD-20241399-001", "bad date"),
        ("1234567890123", "13 digits"),
        ("订单号是 ABC-XYZ", "not an order number"),
    ],
)
def test_anything_else_is_not_an_order_id(text, reason):
    result = U.extract_slots(text, "CHECK_ORDER_STATUS")
    assert result.slots == {}
    assert reason in result.invalid["order_id"]


def test_two_order_ids_are_two_requests():
    result = U.extract_slots("OD-20240618-001 and OD-20240618-002", "CHECK_ORDER_STATUS")
    assert result.slots == {} and result.invalid == {}
    assert result.several == {"order_id": ("OD-20240618-001", "OD-20240618-002")}


def test_no_order_id_is_ever_invented():
    for text in ["我的订单怎么还没到？", "where is my order", "退款", "2024年6月18号的订单"]:
        assert U.extract_slots(text, "CHECK_ORDER_STATUS").slots == {}


def test_reconsider_continues_a_task_waiting_for_the_slot():
    result = U.reconsider(
        "OD-20240618-001", pending_intent="URGE_DELIVERY", missing_slots=["order_id"]
    )
    assert result.intent == "URGE_DELIVERY"
    assert result.confidence >= CONFIDENCE_THRESHOLD


def test_reconsider_without_context_does_not_guess():
    result = U.reconsider("嗯……那个……", pending_intent=None, missing_slots=[])
    assert result.confidence < CONFIDENCE_THRESHOLD


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("cancle my order", "CANCEL_ORDER"),
        ("wheres my oder", "CHECK_ORDER_STATUS"),
        ("i wnat a refund", "REQUEST_REFUND"),
        ("申请退宽", "REQUEST_REFUND"),
        ("取xiao订单", "CANCEL_ORDER"),
    ],
)
def test_typos_are_tolerated_at_the_first_look(text, intent):
    # character n-grams (homophones folded) and the embedding carry a misspelled word
    result = U.classify(text)
    assert result.intent == intent and result.confidence >= CONFIDENCE_THRESHOLD


def test_a_request_whose_one_word_is_misspelled_is_asked_about_not_handed_over():
    # "I want a refnd": the refund is among the nearest tasks; nobody is called for
    (command,) = reader().generate("I want a refnd", DialogueView()).commands
    assert command.kind == "cannot_tell" and "REQUEST_REFUND" in command.candidates


@pytest.mark.parametrize(
    ("text", "cents"),
    [
        ("transfer 300 to ACC-2001", 30_000),
        ("send 12.5 to ACC-2001", 1_250),
        ("转300给ACC-2001", 30_000),
        ("帮我转 500 元给 ACC-2001", 50_000),
        ("往 ACC-3001 汇 3000 元", 300_000),
        ("transfer to ACC-2001", None),  # no amount: asked for, never guessed
        ("转给 ACC-2001 2 笔", None),
        ("ACC-2001 转账", None),
        ("转账给ACC-2001 一百块钱", 10_000),  # Chinese numerals
        ("给ACC-2001打两百块", 20_000),
        ("转两千零五十元到ACC-2001", 205_000),
        ("给 ACC-3001 汇一万二千元", 1_200_000),
        ("转ACC-2001三块五", None),  # 3.50 in speech: asked for, not read as 3
        ("给ACC-2001转五百", 50_000),  # payee, verb, a number ending the sentence
        ("给ACC-2001转500。", 50_000),
        ("给ACC-2001转五百次", None),  # not the end of the sentence: no amount
    ],
)
def test_the_transfer_amount_with_or_without_a_currency_or_digits(text, cents):
    slots = transfer_extract(text, "TRANSFER_MONEY", today=date(2024, 6, 18)).slots
    assert slots.get("amount_cents") == cents
    assert slots.get("to_account") in ("ACC-2001", "ACC-3001")


def test_a_transfer_in_chinese_numerals_to_an_account_is_understood():
    # "打" alone is no transfer verb: the account and the amount say it together
    result = U.classify("给ACC-2001打两百块")
    assert result.intent == "TRANSFER_MONEY"
    assert result.confidence >= CONFIDENCE_THRESHOLD


@pytest.mark.parametrize(
    # "汇了 500 元过去" (past tense: "I sent 500 over") is read as taking a transfer back, 0.46
    "text", ["给张三转200元", "帮我给房东转3000块", "打两百块给我妈"]
)
def test_a_transfer_verb_before_an_amount_is_a_transfer_whoever_the_payee(text):
    result = U.classify(text)
    assert result.intent == "TRANSFER_MONEY"
    assert result.confidence >= CONFIDENCE_THRESHOLD


@pytest.mark.parametrize("text", ["转人工", "订单200元能便宜点吗", "打电话给客服"])
def test_a_transfer_word_without_an_amount_is_no_confident_transfer(text):
    assert not confidently(text, "TRANSFER_MONEY")


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("外卖还在路上吗", "CHECK_ORDER_STATUS"),
        ("my parcel never showed up", "CHECK_ORDER_STATUS"),
        ("给老婆转点钱", "TRANSFER_MONEY"),
        ("皮肤科明天还有号吗", "BOOK_APPOINTMENT"),
        ("挂个内科", "BOOK_APPOINTMENT"),
        ("下礼拜一想去看下牙医", "BOOK_APPOINTMENT"),
        ("眼科有号没", "BOOK_APPOINTMENT"),
        ("这单不要了 OD-20240618-001", "CANCEL_ORDER"),
    ],
)
def test_phrasings_outside_the_labelled_rows(text, intent):
    # written after four labelled rows were fixed, to check the new cues reach beyond them
    result = U.classify(text)
    assert result.intent == intent
    assert result.confidence >= CONFIDENCE_THRESHOLD


@pytest.mark.parametrize("text", ["手机有号码吗", "电话挂了", "show me the menu"])
def test_the_new_cues_take_no_unrelated_message(text):
    assert U.classify(text).confidence < CONFIDENCE_THRESHOLD


@pytest.mark.parametrize(
    "text", ["帮我订张后天去广州的票", "买一张去北京的票", "订个明天飞上海的票"]
)
def test_a_ticket_booked_to_a_city_is_a_flight(text):
    result = U.classify(text)
    assert result.intent == "BOOK_FLIGHT"
    assert result.confidence >= CONFIDENCE_THRESHOLD


@pytest.mark.parametrize(
    "text", ["帮我约个周三下午的牙科", "我想看眼科", "明天能看妇科吗", "挂个骨科的号"]
)
def test_booking_a_department_the_clinic_lacks_is_still_an_appointment(text):
    # the clinic's own list then says which departments there are
    assert confidently(text, "BOOK_APPOINTMENT")


@pytest.mark.parametrize("text", ["看一下科技新闻", "我本科毕业", "看科幻片吗", "约个朋友看电影"])
def test_a_word_ending_in_ke_that_is_no_department_books_nothing(text):
    assert not confidently(text, "BOOK_APPOINTMENT")


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("帮我约个周三下午的牙科", "牙科"),
        ("我想看眼科", "眼科"),
        ("明天能看妇产科吗", "妇产科"),
        ("挂个耳鼻喉科的号", "耳鼻喉科"),
        ("我想问眼科有号没", "眼科"),  # asked about, no verb before it
        ("下礼拜一想去看下牙医", "牙科"),  # named by the doctor, not the department
        ("i need a dentist tomorrow", "dentistry"),
        ("帮我约个明天的皮肤科", None),  # the clinic has it
        ("心内科还有号吗", None),  # read as 内科
        ("我想挂号", None),  # none named
    ],
)
def test_a_department_the_clinic_lacks_is_an_invalid_slot_naming_it(text, named):
    found = appointment_extract(text, "BOOK_APPOINTMENT", today=date(2026, 12, 1))
    assert found.invalid == ({"department": f"{named}: not_offered"} if named else {})
    if named:
        assert "department" not in found.slots


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("皮肤科20号还有没有号啊", "BOOK_APPOINTMENT"),
        ("I need to see a skin doctor on the 20th", "BOOK_APPOINTMENT"),
        ("上个月卖的最好的是啥", "QUERY_SALES"),
    ],
)
def test_fresh_phrasings_of_the_seventh_round(text, intent):
    # phrasings written before their rules (a 24-conversation sample; see the issue note)
    assert confidently(text, intent)


@pytest.mark.parametrize(
    ("text", "department"),
    [("下周二能挂个小孩看病的号不", "儿科"), ("I need to see a skin doctor on the 20th", "皮肤科")],
)
def test_a_department_said_in_other_words(text, department):
    found = U.extract_slots(text, "BOOK_APPOINTMENT").slots
    assert found["department"] == department


@pytest.mark.parametrize(
    ("text", "period"),
    [
        ("帮我挂20号下午的内科", "afternoon"),
        ("明天上午有号吗", "morning"),
        ("晚上的号", "evening"),
        ("下午或者晚上", "afternoon"),  # the first named
        ("in the morning", "morning"),
        ("都行", "any"),
        ("可以", "any"),
        ("6月20号", None),
    ],
)
def test_the_part_of_the_day_an_appointment_asks_for(text, period):
    slots = appointment_extract(text, "BOOK_APPOINTMENT", today=date(2024, 6, 18)).slots
    assert slots.get("period") == period


@pytest.mark.parametrize(
    ("text", "slots"),
    [
        ("200", {"amount_cents": 20_000}),
        ("两百", {"amount_cents": 20_000}),
        ("99.5", {"amount_cents": 9_950}),
        ("123456", {"pin": "123456"}),  # six digits alone: the PIN intake vaulted
        ("１２３４５６", {"pin": "123456"}),
        ("ACC-2001", {"to_account": "ACC-2001"}),
        ("好的", {}),
    ],
)
def test_a_bare_answer_in_a_transfer(text, slots):
    found = transfer_extract(text, "TRANSFER_MONEY", today=date(2024, 6, 18))
    # what slot filling takes when nothing is known yet: the slots, or the likelier reading
    assert (found.slots or (found.either[0] if found.either else {})) == slots


def test_six_digits_are_the_pin_or_else_the_amount():
    found = transfer_extract("100000", "TRANSFER_MONEY", today=date(2024, 6, 18))
    assert found.slots == {}
    assert found.either == ({"pin": "100000"}, {"amount_cents": 10_000_000})


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("张三", "张三"),
        ("张三 110101199001011237", "张三"),
        ("欧阳娜娜", "欧阳娜娜"),
        ("王小明。", "王小明"),
        ("Zhang San", "Zhang San"),
        ("Zhang San, 110101199001011237", "Zhang San"),
        ("Shanghai", None),
        ("武汉", None),  # a city
        ("高铁票", None),
        ("确认", None),
        ("明天", None),  # a date
    ],
)
def test_a_passenger_name_said_alone(text, name):
    slots = flights_extract(text, "BOOK_FLIGHT", today=date(2024, 6, 18)).slots
    assert slots.get("passenger_name") == name


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("帮我把明天的皮肤科取消掉", "CANCEL_APPOINTMENT"),
        ("取消内科的预约", "CANCEL_APPOINTMENT"),
        ("帮我预约内科", "BOOK_APPOINTMENT"),
        ("my headphones havent arrived", "CHECK_ORDER_STATUS"),
    ],
)
def test_fresh_phrasings_of_the_last_round(text, intent):
    result = U.classify(text)
    assert result.intent == intent and result.confidence >= 0.6
