from __future__ import annotations

import pytest
from langgraph.graph import END

from contract.scenario import ScenarioSet
from nodes.routing import (
    MAX_TASK_STEPS,
    route_after_intent,
    route_after_reflect,
    route_after_slots,
    route_after_tool,
)
from scenarios import SCENARIOS

CATALOG = ScenarioSet(SCENARIOS)


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        ({"intent": "CHECK_ORDER_STATUS", "confidence": 0.9}, "slot_filling"),
        ({"intent": "CHECK_ORDER_STATUS", "confidence": 0.6}, "slot_filling"),
        ({"intent": "CHECK_ORDER_STATUS", "confidence": 0.599}, "reflect_refine"),
        ({"intent": "UNKNOWN", "confidence": 0.95}, "reflect_refine"),
        ({}, "reflect_refine"),
    ],
)
def test_route_after_intent(state, expected):
    assert route_after_intent(state, scenarios=CATALOG) == expected


def test_route_after_intent_uses_the_configured_threshold():
    assert route_after_intent(
        {"intent": "REQUEST_REFUND", "confidence": 0.7}, threshold=0.8, scenarios=CATALOG
    ) == ("reflect_refine")


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        ({"decision": "continue", "intent": "REQUEST_REFUND"}, "slot_filling"),
        ({"decision": "continue", "intent": "UNKNOWN"}, "clarify"),
        ({"decision": "clarify", "intent": "REQUEST_REFUND"}, "clarify"),
        ({"decision": "retry", "intent": "CHECK_ORDER_STATUS"}, "tool"),
        ({"decision": "handoff"}, "handoff"),
        ({"decision": "retry", "step_count": MAX_TASK_STEPS}, "handoff"),
    ],
)
def test_route_after_reflect(state, expected):
    assert route_after_reflect(state, scenarios=CATALOG) == expected


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        ({"missing_slots": ["order_id"], "pending_tool_calls": []}, "clarify"),
        ({"missing_slots": [], "pending_tool_calls": []}, "clarify"),
        ({"missing_slots": [], "pending_tool_calls": [{"name": "x"}]}, "propose"),
        ({"missing_slots": [], "pending_tool_calls": [], "decision": "answered"}, END),
    ],
)
def test_route_after_slots(state, expected):
    assert route_after_slots(state) == expected


def failure(error_type="system", retryable=True):
    return {"status": "failed", "error_type": error_type, "retryable": retryable}


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        ({"error": None}, "reply"),
        ({"error": failure("not_found", False)}, "reply"),
        ({"error": failure("user_fixable", False)}, "reply"),
        ({"error": failure("permission_denied", False)}, "reply"),
        ({"error": failure("validation", False)}, "reply"),
        ({"error": failure(), "retry_count": 0}, "reflect_refine"),
        ({"error": failure(), "retry_count": 1}, "reflect_refine"),
        ({"error": failure(), "retry_count": 2}, "handoff"),  # exhausted
        ({"error": failure(retryable=False), "retry_count": 0}, "handoff"),
        ({"error": failure(), "retry_count": 0, "step_count": MAX_TASK_STEPS}, "handoff"),
    ],
)
def test_route_after_tool(state, expected):
    assert route_after_tool(state, max_retries=2, scenarios=CATALOG) == expected


def test_retry_limit_zero_hands_over_at_once():
    assert (
        route_after_tool({"error": failure(), "retry_count": 0}, max_retries=0, scenarios=CATALOG)
        == "handoff"
    )


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        ({"status": "rejected", "error_type": None}, "reply"),  # the user declined
        ({"status": "rejected", "error_type": "rate_limited", "data": None}, "reply"),
        ({"status": "rejected", "error_type": "rate_limited", "data": {"guard": "x"}}, "handoff"),
        ({"status": "rejected", "error_type": "circuit_open"}, "handoff"),
        ({"status": "unknown", "error_type": "system", "retryable": False}, "handoff"),
    ],
)
def test_route_after_tool_for_executor_outcomes(error, expected):
    assert route_after_tool({"error": error, "retry_count": 0}, scenarios=CATALOG) == expected
