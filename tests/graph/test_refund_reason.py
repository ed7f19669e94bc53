"""A refund is filed with the user's own reason when they gave one (issue 38).

It was always "用户申请退款", also after "…送到了但是洒了，我要退款".
"""

from __future__ import annotations

import pytest

from scenarios.delivery.tools import DEFAULT_REFUND_REASON


def _reasons(t) -> list[str]:
    return [r["reason"] for r in t.rows("SELECT reason FROM refunds ORDER BY order_id")]


def test_the_reason_said_with_the_request_is_filed_and_confirmed(talk, world):
    t = talk()("订单 OD-20240618-002 送到了但是洒了，我要退款")
    assert "原因：送到了但是洒了" in t.replies
    t("确认")
    assert _reasons(t) == ["送到了但是洒了"]


def test_a_reason_given_at_the_confirmation_changes_it_and_is_said(talk, world):
    t = talk()("我要退款 OD-20240618-002")
    assert "原因" not in t.replies  # none given: the question names none
    t("原因是包装破了")
    assert "已将退款原因改为 包装破了" in t.replies and t.pending
    t("确认")
    assert _reasons(t) == ["包装破了"]


def test_without_a_reason_the_default_is_filed(talk, world):
    t = talk()("我要退款", "OD-20240618-002", "确认")
    assert _reasons(t) == [DEFAULT_REFUND_REASON]


def test_a_correction_of_the_order_is_no_reason(talk, world):
    t = talk()("我要退款 OD-20240618-002")
    t("不对，是订单 OD-20240618-001")
    assert "原因" not in t.replies and "OD-20240618-001" in t.replies
    t("确认")
    assert _reasons(t) == [DEFAULT_REFUND_REASON]


def test_an_english_reason(talk, world):
    t = talk()("I want a refund for OD-20240618-002 because it arrived cold")
    assert "because: it arrived cold" in t.replies
    t("yes")
    assert _reasons(t) == ["it arrived cold"]


@pytest.mark.parametrize("said", ["202506001 的耳机坏了，我要退款"])
def test_a_large_refund_handed_to_finance_keeps_the_reason(talk, world, said):
    t = talk()(said, "确认")
    assert _reasons(t) == ["耳机坏了"]
