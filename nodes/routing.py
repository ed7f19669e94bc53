"""Routers: each reads state and names the next node. No router changes state."""

from __future__ import annotations

from typing import Literal

from nodes.tasks import TASKS
from state import AgentState

USER_FACING = frozenset({"user_fixable", "validation", "not_found", "permission_denied"})
"""Failures the reply explains; the user can act on them."""

MAX_TASK_STEPS = 25
"""A task that has taken this many node steps is handed over instead of looping on."""


def route_after_intent(
    state: AgentState, *, threshold: float = 0.6
) -> Literal["reflect_refine", "slot_filling"]:
    """Send an unsure or unknown intent to reflect-refine, a clear one to slot filling."""
    if state.get("confidence", 0.0) < threshold or state.get("intent") not in TASKS:
        return "reflect_refine"
    return "slot_filling"


def route_after_reflect(
    state: AgentState,
) -> Literal["slot_filling", "tool", "clarify", "handoff"]:
    """Act on reflect-refine's decision."""
    decision = state.get("decision")
    if state.get("step_count", 0) >= MAX_TASK_STEPS:
        return "handoff"
    if decision == "retry":
        return "tool"
    if decision == "continue" and state.get("intent") in TASKS:
        return "slot_filling"
    if decision == "handoff":
        return "handoff"
    return "clarify"


def route_after_slots(
    state: AgentState,
) -> Literal["clarify", "tool", "finance", "appointment"]:
    """Ask for missing slots; once all are known, run the tool or the task's own agent."""
    if state.get("missing_slots") or not state.get("pending_tool_calls"):
        return "clarify"
    spec = TASKS.get(state.get("intent", ""))
    if spec is not None and spec.agent == "finance":
        return "finance"
    if spec is not None and spec.agent == "appointment":
        return "appointment"
    return "tool"


def route_after_tool(
    state: AgentState, *, max_retries: int = 2
) -> Literal["reply", "reflect_refine", "handoff", "tool", "finance"]:
    """Reply on success, a user-fixable failure or a declined action; else retry or hand over.

    Transient failures go back through reflect-refine while retries remain.
    """
    if state.get("decision") == "revise":
        return "tool"  # the user corrected a detail instead of confirming: ask again
    error = state.get("error")
    if not error:
        return "reply"
    if (error.get("data") or {}).get("handoff") == "finance":
        return "finance"  # not this agent's to do: the finance agent decides
    error_type = error.get("error_type")
    if error_type in USER_FACING or (error_type is None and error.get("status") == "rejected"):
        return "reply"
    if error_type == "rate_limited" and not (error.get("data") or {}).get("guard"):
        return "reply"
    if error.get("retryable") and state.get("retry_count", 0) < max_retries:
        if state.get("step_count", 0) < MAX_TASK_STEPS:
            return "reflect_refine"
    spec = TASKS.get(state.get("intent", ""))
    if spec is not None and not spec.handoff_on_failure:
        return "reply"  # say it is unavailable; no human needed for a weather report
    return "handoff"
