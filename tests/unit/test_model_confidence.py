from datetime import date

from understanding.evidence import (
    evidence_confidence,
    label_probability,
    resolvable_dates,
    slot_supported,
)
from understanding.recognizer import IntentResult

TODAY = date(2024, 6, 18)


def rules(intent, confidence):
    return IntentResult(intent=intent, confidence=confidence, language="zh")


def test_label_probability_sums_the_label_tokens():
    tokens = [
        {"token": '{"', "logprob": 0.0},
        {"token": "intent", "logprob": -0.01},
        {"token": '": "', "logprob": 0.0},
        {"token": "CHECK", "logprob": -0.2},
        {"token": "_ORDER", "logprob": -0.05},
        {"token": "_STATUS", "logprob": 0.0},
        {"token": '"}', "logprob": 0.0},
    ]
    p = label_probability({"content": tokens}, "CHECK_ORDER_STATUS")
    assert abs(p - 0.7788) < 1e-3  # exp(-0.25)
    assert label_probability({"content": tokens}, "REQUEST_REFUND") is None
    assert label_probability(None, "CHECK_ORDER_STATUS") is None


def test_agreement_raises_disagreement_with_sure_rules_lowers():
    agree = evidence_confidence(0.7, "REQUEST_REFUND", rules("REQUEST_REFUND", 0.8))
    alone = evidence_confidence(0.7, "REQUEST_REFUND", rules("UNKNOWN", 0.08))
    against = evidence_confidence(0.7, "REQUEST_REFUND", rules("URGE_DELIVERY", 0.9))
    assert agree > alone > against
    assert agree == round(1 - 0.3 * 0.2, 3)
    assert against == round(0.7 * (1 - 0.45), 3)


def test_logprob_drives_confidence_and_evidence_adjusts_it():
    low = evidence_confidence(0.3, "QUERY_WEATHER", rules("UNKNOWN", 0.08))
    high = evidence_confidence(0.98, "QUERY_WEATHER", rules("UNKNOWN", 0.08))
    assert low < 0.6 < high
    with_slot = evidence_confidence(
        0.6, "QUERY_WEATHER", rules("UNKNOWN", 0.08), slot_evidence=True
    )
    invented = evidence_confidence(0.6, "QUERY_WEATHER", rules("UNKNOWN", 0.08), refused_slots=1)
    plain = evidence_confidence(0.6, "QUERY_WEATHER", rules("UNKNOWN", 0.08))
    assert with_slot > plain > invented


def test_slot_values_need_evidence_in_the_text():
    text = "订单 od 20240618 001 送错了，退 12.5 元"
    assert slot_supported("order_id", "OD-20240618-001", text, today=TODAY)
    assert not slot_supported("order_id", "OD-20240618-002", text, today=TODAY)
    assert slot_supported("amount_cents", 1250, text, today=TODAY)
    assert not slot_supported("amount_cents", 9900, text, today=TODAY)
    assert slot_supported("city", "Beijing", "weather in beijing?", today=TODAY)
    assert not slot_supported("city", "Beijing", "北京天气", today=TODAY)
    assert slot_supported("city", "Beijing", "北京天气", today=TODAY, rules_value="Beijing")


def test_dates_must_be_resolvable_from_the_text():
    assert date(2024, 6, 20) in resolvable_dates("6月20号从上海出发", TODAY)
    assert date(2024, 6, 19) in resolvable_dates("明天的内科", TODAY)
    assert date(2024, 6, 21) in resolvable_dates("on June 21st", TODAY)
    assert slot_supported("day", "2024-06-20", "后天上午", today=TODAY)
    assert not slot_supported("day", "2024-06-25", "后天上午", today=TODAY)
    assert not slot_supported("departure_date", "2024-06-20", "帮我订机票", today=TODAY)
