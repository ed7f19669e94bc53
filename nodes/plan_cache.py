"""Learned action plans in the graph: reuse what the model planned for the same kind of request.

The model planner (``planning.planner``) costs one model call (two with a repair) each time
a task's slots are complete. A plan it made that then ran without a failure is kept by
``planning.plans.PlanCache`` as tool names and argument templates, keyed by scenario, intent,
slot shape and the caller's role. The next request of that kind takes the plan from the cache
instead of asking the model:

- ``cached_calls`` (slot filling, before the model): the plan is filled from the verified
  slots, every value passes the same evidence check as a model's call (a value of a named
  thing must be a verified slot or the user's own words), and the calls become
  ``pending_tool_calls`` like any other, so the tool node runs them through the executor's
  every check (schema, permission, ownership, confirmation, guards). The slot-filling
  protocol message says ``planner.source == "cache"`` and names the plan, and the trace's
  ``arguments`` record carries it (``reach trace``).
- ``learn_from_results`` (tool node, after the executor): when the calls that ran are the ones
  slot filling planned, a model's plan whose every call succeeded is recorded, and a cached
  plan with a call that failed because of the plan (validation, permission, not found, a
  system error: not the user's "no", a transient error, a hand-over or a state the user can
  fix) is evicted, so the next request asks the model again.

What is recorded is deliberately narrow, because the key is the slot *shape*, not the user's
words: every argument must come from a slot (no constants, no free text such as a refund
reason the user gave; an argument equal to the tool's declared default is left out, which
makes the same call), and every tool must be one the shape asks for (the task's own tool, or
an on-request tool whose slot is filled). A model's extra call prompted by words the rules did
not catch (a notification asked for as "给我发个消息") is therefore never replayed for a user
who did not ask for it.

Nothing here names an intent, a slot or a tool: they come from the ``TaskSpec``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from contract.scenario import TaskSpec
from nodes.services import Services
from planning.planner import evidence_names, invented_arguments, plan_call_id, scenario_cards
from planning.plans import PlanCall, PlanInstantiationError, instantiate
from state import AgentState, ToolCall
from tools.registry.types import Arguments

PLANNER_STAGE = "slot_filling"
"""The protocol stage whose ``planner`` note says where the pending calls came from."""

TRANSIENT_ERRORS = frozenset({"rate_limited", "circuit_open"})
"""Failures that say nothing about the plan: a retry may succeed with the same calls."""


@dataclass(frozen=True)
class CachedCalls:
    """A cached plan made concrete for this request."""

    key: str
    """The plan's cache key (scenario, intent, slot shape, role: no values)."""
    calls: list[ToolCall]
    successes: int
    """How often the plan has completed a task."""


def scenario_name(services: Services, task: TaskSpec) -> str:
    """Return the name of the scenario serving ``task`` (empty for a task outside any)."""
    scenario = services.catalog.scenario_of.get(task.intent)
    return scenario.name if scenario is not None else ""


def allowed_tools(task: TaskSpec, slots: Mapping[str, Any]) -> set[str]:
    """Tools the slot shape asks for: the task's own, and each on-request tool whose slot is set."""
    return {task.tool, *(tool for slot, tool in task.on_request if slots.get(slot))}


def cached_calls(
    services: Services,
    task: TaskSpec,
    slots: Mapping[str, Any],
    *,
    role: str,
    task_id: str,
    user_texts: Sequence[str],
) -> CachedCalls | None:
    """Return the calls of a proven plan for this kind of request, or ``None`` to ask the model.

    A plan that no longer fits (a tool gone or no longer offered to the role, a template the
    slots cannot fill, a value the evidence check refuses) is evicted on the spot.
    """
    cache = services.plans
    plan = cache.lookup(scenario_name(services, task), task.intent, slots, role)
    if plan is None:
        return None
    offered = {card.name for card in scenario_cards(services.tools, services.catalog, task, role)}
    names = [step["name"] for step in plan["steps"]]
    if not set(names) <= offered & allowed_tools(task, slots) or task.tool not in names:
        cache.evict(plan["key"])
        return None
    try:
        concrete = instantiate(plan, slots)
    except PlanInstantiationError:
        cache.evict(plan["key"])
        return None
    checked = evidence_names(services.catalog, task)
    calls: list[ToolCall] = []
    for call in concrete:
        if invented_arguments(
            call, checked=checked, slots=slots, texts=user_texts, today=services.today()
        ):
            cache.evict(plan["key"])
            return None
        calls.append(
            {
                "id": plan_call_id(task_id, call["name"], call["parameters"]),
                "name": call["name"],
                "parameters": call["parameters"],
            }
        )
    unique = list({call["id"]: call for call in calls}.values())
    return CachedCalls(key=plan["key"], calls=unique, successes=int(plan.get("successes", 0)))


def planner_note(state: AgentState) -> Mapping[str, Any] | None:
    """Return the latest slot-filling protocol message of the current task, if any."""
    task_id = state.get("task_id", "")
    for message in reversed(state.get("protocol") or []):
        if not isinstance(message, Mapping):
            continue
        content = message.get("content")
        if isinstance(content, Mapping) and content.get("stage") == PLANNER_STAGE:
            return message if message.get("task_id", task_id) == task_id else None
    return None


def learn_from_results(
    services: Services,
    state: AgentState,
    calls: Sequence[ToolCall],
    results: Sequence[Mapping[str, Any]],
    *,
    role: str,
) -> str | None:
    """Record a model's plan that succeeded, evict a cached one that failed.

    Only when the calls that ran are exactly the ones slot filling planned (a correction at
    the confirmation re-plans with the rules, and those are not the model's). Returns what
    was done (``"recorded"``, ``"evicted"``) or ``None``.
    """
    task = services.catalog.task(state.get("intent"))
    note = planner_note(state)
    if task is None or note is None or not calls:
        return None
    planner = (note.get("content") or {}).get("planner")
    if not isinstance(planner, Mapping) or planner.get("source") not in ("model", "cache"):
        return None
    planned = [str(c.get("id")) for c in note.get("tool_calls") or [] if isinstance(c, Mapping)]
    if sorted(planned) != sorted(call["id"] for call in calls):
        return None
    slots = dict(state.get("slots") or {})
    failures = [r for r in results if r.get("status") != "success"]
    if planner["source"] == "cache":
        if any(_plan_failed(result) for result in failures):
            services.plans.evict(str(planner.get("plan")))
            return "evicted"
        if failures:
            return None
    elif failures or not {call["name"] for call in calls} <= allowed_tools(task, slots):
        return None
    sequence: list[PlanCall] = [
        {"name": call["name"], "parameters": explicit(services, call, slots), "result": result}
        for call, result in zip(calls, results, strict=True)
    ]
    plan = services.plans.record(
        scenario_name(services, task),
        task.intent,
        slots,
        sequence,
        min_steps=1,
        constants=False,
        role=role,
    )
    return "recorded" if plan is not None else None


def explicit(services: Services, call: ToolCall, slots: Mapping[str, Any]) -> Arguments:
    """Return the call's arguments without those equal to the tool's declared default.

    Leaving such an argument out makes the same call, and a model that fills in a default
    (``reason="用户申请退款"``) would otherwise make its plan uncacheable as free text. A value
    a slot holds stays (as ``$slots.<name>``): the next request may fill that slot otherwise.
    """
    card = services.tools.get(call["name"])
    fields = card.parameters.model_fields if card is not None else {}
    held = {json.dumps(value, sort_keys=True, default=str) for value in slots.values()}
    return {
        name: value
        for name, value in call["parameters"].items()
        if name not in fields
        or fields[name].is_required()
        or fields[name].default != value
        or json.dumps(value, sort_keys=True, default=str) in held
    }


def _plan_failed(result: Mapping[str, Any]) -> bool:
    """Tell whether a failed call condemns the plan.

    Not when the outcome is about this request rather than the plan: the user's "no", a
    transient error (a retry follows), a designed hand-over to another agent (a refund above
    the limit goes to finance), or a state the user can fix (the order is already cancelled).
    Anything else (validation, permission, not found, a system error) evicts.
    """
    if result.get("status") == "rejected" and not result.get("error_type"):
        return False  # the user did not confirm: the plan was fine
    data = result.get("data")
    if isinstance(data, Mapping) and data.get("handoff"):
        return False
    if result.get("error_type") in (*TRANSIENT_ERRORS, "user_fixable"):
        return False
    return not result.get("retryable")


__all__ = [
    "CachedCalls",
    "allowed_tools",
    "cached_calls",
    "explicit",
    "learn_from_results",
    "planner_note",
    "scenario_name",
]
