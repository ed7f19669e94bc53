from __future__ import annotations

import pytest

from nodes.confirmation import confirmation_request, read_decision
from tests.helpers import default_registry
from tools.executor import ActionExecutor, Decision
from tools.registry import ToolContext


@pytest.mark.parametrize(
    "answer",
    [
        "确认",
        "确认退款",
        "好的",
        "是",
        "yes",
        "Yes please",
        "ok",
        {"decision": "approve"},
        Decision("approve"),
    ],
)
def test_approvals(answer):
    assert read_decision(answer).kind == "approve"


@pytest.mark.parametrize(
    "answer",
    [
        "取消",
        "不确认",
        "算了",
        "不要退了",
        "no",
        "No thanks",
        "cancel",
        "嗯……",
        "",
        None,
        42,
        {"decision": "maybe"},
        {"decision": "edit"},
    ],
)
def test_anything_unclear_is_a_rejection(answer):
    assert read_decision(answer).kind == "reject"


def test_edit_carries_the_new_parameters():
    decision = read_decision({"decision": "edit", "parameters": {"reason": "x"}})
    assert decision == Decision("edit", {"reason": "x"})


def test_confirmation_request_lists_masked_actions(db):
    executor = ActionExecutor(default_registry())
    ctx = ToolContext(user_id="u_10001", user_role="customer", resources=db)
    prepared = executor.prepare(
        {
            "name": "request_refund",
            "parameters": {"order_id": "OD-20240618-002", "reason": "电话13800138000"},
        },
        ctx,
    )
    payload = confirmation_request([prepared], "zh")
    assert payload["type"] == "confirm_action"
    assert "request_refund" in payload["question"]
    assert "13800138000" not in str(payload)
    assert payload["actions"][0]["request_id"] == prepared.request_id
