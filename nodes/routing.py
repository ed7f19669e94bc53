"""Routers: each reads state and names the next node. No router changes state.

Which intents exist, and which sub-agent carries a task out, come from the scenarios; the
builder binds them with ``functools.partial``. A sub-agent's node is named after the agent,
so a router returns its name (a ``str``) besides the generic nodes' literal names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from langgraph.graph import END

from contract.scenario import ScenarioSet
from state import RouteView
from tools.registry.cards import ToolRegistry


class Bound:
    """A router with its keyword arguments bound, whose input LangGraph can see is ``RouteView``.

    ``functools.partial`` hides the router's annotation, and LangGraph then reads the whole
    state for the edge; a method's annotation it reads.
    """

    def __init__(self, route: Callable[..., Any], **bound: Any) -> None:
        """Call ``route`` with ``bound`` added to every call."""
        self.route = route
        self.bound = bound
        self.__name__ = route.__name__

    def __call__(self, state: RouteView) -> Any:
        """Route ``state``."""
        return self.route(state, **self.bound)


USER_FACING = frozenset(
    {"user_fixable", "validation", "not_found", "permission_denied", "conflict", "not_requested"}
)
"""Failures the reply explains; the user can act on them."""

MAX_TASK_STEPS = 25
"""A task that has taken this many node steps is handed over instead of looping on."""


def route_start(state: RouteView) -> Literal["job_update", "intent"]:
    """Send a run a finished job started to the job update; every user turn to intent.

    Such a run's input is only ``job_event``: it must not be read as a user message, and
    its answer must not touch the topic the user is on (intent, slots, task, awaiting).
    """
    return "job_update" if state.get("job_event") else "intent"


def route_after_intent(
    state: RouteView, *, scenarios: ScenarioSet, threshold: float = 0.6
) -> Literal["reflect_refine", "slot_filling", "tool", "handoff"] | str:
    """Send an unsure or unknown intent to reflect-refine, a clear one to slot filling.

    A message that answers a pending confirmation goes back to the node that asked; one
    asking for a person (or complaining) goes to the hand-off.
    """
    awaiting = state.get("awaiting")
    if state.get("decision") == "confirm" and awaiting:
        return awaiting["node"]
    if state.get("decision") == "answered":
        return END
    if state.get("decision") == "handoff":
        return "handoff"
    if state.get("confidence", 0.0) < threshold or scenarios.task(state.get("intent")) is None:
        return "reflect_refine"
    return "slot_filling"


def route_after_reflect(
    state: RouteView, *, scenarios: ScenarioSet
) -> Literal["slot_filling", "tool", "clarify", "handoff"]:
    """Act on reflect-refine's decision."""
    decision = state.get("decision")
    if state.get("step_count", 0) >= MAX_TASK_STEPS:
        return "handoff"
    if decision == "retry":
        return "tool"
    if decision == "continue" and scenarios.task(state.get("intent")) is not None:
        return "slot_filling"
    if decision == "handoff":
        return "handoff"
    return "clarify"


def route_after_slots(state: RouteView) -> Literal["clarify", "propose"] | str:
    """Ask for missing slots; once all are known, say what is about to happen.

    A task slot filling answered itself (the user has no record it could be about) ends the
    turn.
    """
    if state.get("decision") == "answered":
        return END
    if state.get("missing_slots") or not state.get("pending_tool_calls"):
        return "clarify"
    return "propose"


def route_after_propose(state: RouteView, *, scenarios: ScenarioSet) -> Literal["tool"] | str:
    """Run the tool, or hand the task to its own agent."""
    task = scenarios.task(state.get("intent"))
    if task is not None and task.agent is not None and task.agent in scenarios.agents:
        return task.agent
    return "tool"


def route_after_tool(
    state: RouteView,
    *,
    scenarios: ScenarioSet,
    max_retries: int = 2,
    registry: ToolRegistry | None = None,
) -> Literal["reply", "reflect_refine", "handoff", "intent"] | str:
    """Reply on success, a user-fixable failure or a declined action; else retry or hand over.

    Transient failures go back through reflect-refine while retries remain, except those of
    a call the user confirmed (the executor already retried it within the call; another
    round would ask the user to confirm again, with no word of why); a result that names
    another agent (``data.handoff``) goes to that agent. Words given instead of a yes or a
    no ("不对，改成50") go back to understanding: nothing ran.
    """
    if state.get("decision") == "reread":
        return "intent"
    error = state.get("error")
    if not error:
        return "reply"
    handoff_to = (error.get("data") or {}).get("handoff")
    if handoff_to in scenarios.agents:
        return str(handoff_to)  # not this agent's to do: that agent decides
    error_type = error.get("error_type")
    if error_type in USER_FACING or (error_type is None and error.get("status") == "rejected"):
        return "reply"
    if error_type == "rate_limited" and not (error.get("data") or {}).get("guard"):
        return "reply"
    if error.get("retryable") and state.get("retry_count", 0) < max_retries:
        if state.get("step_count", 0) < MAX_TASK_STEPS and not _confirmed(error, registry):
            return "reflect_refine"
    task = scenarios.task(state.get("intent"))
    if task is not None and not task.handoff_on_failure:
        return "reply"  # say it is unavailable; no human needed for a weather report
    return "handoff"


def route_after_reply(state: RouteView) -> Literal["slot_filling"] | str:
    """End the turn, or go on with the next task the message queued ("接下来…")."""
    return "slot_filling" if state.get("decision") == "next" else END


def route_after_agent(state: RouteView) -> Literal["reply", "intent"]:
    """Reply with the sub-agent's results; words instead of a yes or a no are read again."""
    return "intent" if state.get("decision") == "reread" else "reply"


def _confirmed(error: Mapping[str, Any], registry: ToolRegistry | None) -> bool:
    """Whether the failed call was one the user had to confirm (a high-risk tool)."""
    card = registry.get(str(error.get("tool", ""))) if registry is not None else None
    return card is not None and card.risk == "high"


def route_after_slots_skipping_idle(
    state: RouteView, *, scenarios: ScenarioSet, registry: ToolRegistry
) -> str:
    """Go through propose only when it has something to do, saving a superstep otherwise.

    Propose writes a question before a high-risk call or a sub-agent's task, and clears a
    stale ``awaiting``; for anything else it returns no change but its step count, yet
    costs a superstep and a checkpoint. Then the call goes straight where propose would
    have sent it.
    """
    target = route_after_slots(state)
    if target != "propose" or state.get("awaiting"):
        return target
    task = scenarios.task(state.get("intent", ""))
    if task is not None and task.agent is not None:
        return target
    for call in state.get("pending_tool_calls") or []:
        card = registry.get(call["name"])
        if card is None or card.risk == "high":
            return target
    return route_after_propose(state, scenarios=scenarios)
