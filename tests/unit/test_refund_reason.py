"""The refund reason is the user's own words, only when the message says why."""

from __future__ import annotations

import pytest

from scenarios.delivery.reasons import refund_reason


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("订单 OD-20240618-002 送到了但是洒了，我要退款", "送到了但是洒了"),
        ("OD-20240618-002 外卖洒了 退钱", "外卖洒了"),
        ("帮我退款，因为一直没送到", "一直没送到"),
        ("申请退款，原因：买错了", "买错了"),
        ("退款 OD-20240618-002 东西坏了", "东西坏了"),
        ("202506001 的耳机坏了，我要退款", "耳机坏了"),
        (
            "refund OD-20240618-002 please, the soup spilled everywhere",
            "the soup spilled everywhere",
        ),
        ("I want a refund for OD-20240618-002 because it arrived cold", "it arrived cold"),
    ],
)
def test_the_reason_is_what_the_user_said(text, reason):
    assert refund_reason(text) == reason


@pytest.mark.parametrize(
    "text",
    [
        "我要退款 OD-20240618-002",
        "OD-20240618-002",
        "我要退款",
        "refund order OD-20240618-002",
        "不对，是订单 OD-20240618-001",
        "帮我把 OD-20240618-002 退了",
        "确认",
        "好的没问题",
    ],
)
def test_no_reason_is_made_up(text):
    assert refund_reason(text) is None
