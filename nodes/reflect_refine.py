"""Reflect-refine: look again when the agent is unsure, or when a tool call failed.

Two triggers, one node, as the design has it: an intent below the confidence threshold
(re-examine the request with the conversation's context) and a transient tool failure with
retries left (count the retry and send the call again). It decides; routers act on
``decision``.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from nodes.common import Node, context_of, latest_user_message, message_text, protocol_message
from nodes.services import Services
from nodes.tasks import UNKNOWN
from state import AgentState, Context, ToolResult


def make_reflect_refine_node(services: Services) -> Node:
    """Build the reflect-refine node."""

    def reflect_refine(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
        """Decide to retry a failed tool, refine an unclear intent, or ask the user."""
        error = state.get("error")
        if error and error.get("retryable"):
            return _after_tool_failure(state, runtime, error)
        return _refine_intent(services, state, runtime)

    return reflect_refine


def _after_tool_failure(
    state: AgentState,
    runtime: Runtime[Context],
    error: ToolResult,
) -> dict[str, Any]:
    retries = state.get("retry_count", 0) + 1
    note = protocol_message(
        state,
        runtime,
        role="agent",
        content={
            "stage": "reflect_refine",
            "trigger": "tool_failure",
            "tool": error.get("tool"),
            "decision": "retry",
            "attempt": retries + 1,
        },
        error=error.get("message"),
        retry_count=retries,
    )
    return {"retry_count": retries, "decision": "retry", "step_count": 1, "protocol": [note]}


def _refine_intent(
    services: Services, state: AgentState, runtime: Runtime[Context]
) -> dict[str, Any]:
    text = message_text(latest_user_message(state))
    pending = state.get("intent")
    refined = services.understand_for(context_of(runtime).model).reconsider(
        text,
        pending_intent=pending if state.get("missing_slots") else None,
        missing_slots=list(state.get("missing_slots") or []),
    )
    resolved = refined.intent != UNKNOWN and refined.confidence >= services.confidence_threshold
    decision = "continue" if resolved else "clarify"
    note = protocol_message(
        state,
        runtime,
        role="agent",
        content={
            "stage": "reflect_refine",
            "trigger": "low_confidence",
            "before": {"intent": pending, "confidence": state.get("confidence")},
            "after": {"intent": refined.intent, "confidence": refined.confidence},
            "evidence": list(refined.evidence),
            "candidates": list(refined.candidates),
            "decision": decision,
            "source": refined.source,
        },
        confidence=refined.confidence,
        error=refined.error,
    )
    update: dict[str, Any] = {
        "decision": decision,
        "confidence": refined.confidence,
        "intent_evidence": list(refined.evidence),
        "step_count": 1,
        "protocol": [note],
    }
    if resolved:
        update["intent"] = refined.intent
    else:
        update["intent_candidates"] = list(refined.candidates)
    return update
