"""Tool selection by a model, checked before the executor ever sees a call.

Used when a model is configured for the ``tool`` step and a task's slots are complete: the
rules have already planned the task's call, and the model may plan better (a notification
asked for in other words, two calls in one message). The model sees the registry's model
view of the task's scenario tools (at most eight, allowed for the caller's role), the task
summary and the recent turns, within a bounded prompt.

What it answers is untrusted (``planning.tool_calls``): native ``tool_calls`` or JSON written
in ``content``; unknown tools and duplicate ids are refused; arguments that fail the tool's
pydantic model go back to the model once; and every argument that names a thing (an order
id, a date, an account, a city) must be a value slot filling verified or one the user's
own words support, or the call is refused. A plan that is refused, fails, or leaves out the
task's own tool is dropped and the rules' plan runs instead; the protocol records why. The
accepted calls are ``pending_tool_calls`` like any other, so the tool node runs them through
``nodes.actions.confirm_then_run``: prepare, confirm, execute.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.errors import GraphBubbleUp
from pydantic import ValidationError

from contract.scenario import ScenarioSet, TaskSpec
from planning.prompt_budget import TaskSummary, bounded_messages
from planning.tool_calls import ParsedCall, call_with_repair
from state import ToolCall
from tools.registry.cards import ToolCard, ToolRegistry
from understanding.evidence import slot_supported
from understanding.model_recognizer import describe_error

PLANNER_PROMPT = (
    "You plan tool calls for a customer-service agent. Call the tools that carry out the "
    "user's request, with arguments taken from the conversation. Several calls in one answer "
    "are allowed when the user asked for several things. Never invent an id, a number, a date "
    "or a name: use only values the user stated or the known values below. If your API has no "
    'tools, write the calls as JSON: [{"name": ..., "arguments": {...}}].'
)


@dataclass
class ModelPlan:
    """The calls a model planned, or why the rules' plan runs instead."""

    calls: list[ToolCall] = field(default_factory=list)
    """Accepted calls; empty when the rules' plan is used."""
    refused: list[str] = field(default_factory=list)
    """Refused calls and arguments, one reason each."""
    error: str | None = None
    """Why the model's plan was not used (``None``: it was)."""
    rounds: int = 0
    """Model calls made (2 when malformed arguments went back once)."""


def scenario_cards(
    registry: ToolRegistry, catalog: ScenarioSet, task: TaskSpec, role: str
) -> list[ToolCard]:
    """The tools of the task's scenario the caller may use, the task's own tool first (≤ 8)."""
    scenario = catalog.scenario_of.get(task.intent)
    names = [task.tool, *(tool for _, tool in task.on_request)]
    if scenario is not None:
        names += [card.name for card in scenario.cards]
    return registry.select(role, names=list(dict.fromkeys(names)), intent=task.intent)


def evidence_names(catalog: ScenarioSet, task: TaskSpec) -> set[str]:
    """Arguments that name a thing and so must be evidenced: the scenario's slot names."""
    scenario = catalog.scenario_of.get(task.intent)
    tasks = scenario.tasks if scenario is not None else (task,)
    return {name for spec in tasks for name in spec.required_slots}


def invented_arguments(
    call: Mapping[str, Any],
    *,
    checked: set[str],
    slots: Mapping[str, Any],
    texts: Sequence[str],
    today: date,
) -> dict[str, str]:
    """Return the arguments of ``call`` that neither a known slot nor the user's words support."""
    invented: dict[str, str] = {}
    said = "\n".join(texts)
    for name, value in (call.get("parameters") or {}).items():
        if name not in checked or value is None:
            continue
        if name in slots and str(slots[name]) == str(value):
            continue
        if not slot_supported(name, value, said, today=today):
            invented[name] = str(value)
    return invented


def plan_call_id(task_id: str, tool: str, parameters: Mapping[str, Any]) -> str:
    """Derive the call id from the task and arguments (as the rules do): replays plan alike."""
    canonical = json.dumps(parameters, sort_keys=True, ensure_ascii=False, default=str)
    return "call_" + hashlib.sha256(f"{task_id}|{tool}|{canonical}".encode()).hexdigest()[:16]


_CLASS_ESCAPES = {"d": "0-9", "w": "A-Za-z0-9_", "s": " \\t\\n\\r"}
"""Shorthand classes spelled out: llama-server's grammar builder refuses ``\\d`` in a pattern."""


def portable_pattern(pattern: str) -> str:
    r"""Spell out ``\d``, ``\w`` and ``\s`` as character classes (``\d`` → ``[0-9]``).

    llama.cpp turns a tool's JSON schema into a sampling grammar and fails the whole request
    ("failed to parse grammar", HTTP 400) on these escapes, so every planning call to the local
    server fell back to the rules. Only what the model is shown changes: the executor still
    validates the arguments against the card's own pydantic model.
    """
    out: list[str] = []
    in_class = False
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\" and index + 1 < len(pattern):
            escaped = pattern[index + 1]
            if escaped in _CLASS_ESCAPES:
                spelled = _CLASS_ESCAPES[escaped]
                out.append(spelled if in_class else f"[{spelled}]")
            else:
                out.append(pattern[index : index + 2])
            index += 2
            continue
        if char == "[" and not in_class:
            in_class = True
        elif char == "]" and in_class:
            in_class = False
        out.append(char)
        index += 1
    return "".join(out)


def portable_schema(value: Any) -> Any:
    """Return a copy of a tool's model view with every ``pattern`` made portable."""
    if isinstance(value, dict):
        return {
            key: portable_pattern(item)
            if key == "pattern" and isinstance(item, str)
            else portable_schema(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [portable_schema(item) for item in value]
    return value


def _validator(cards: Mapping[str, ToolCard]) -> Callable[[ParsedCall], str | None]:
    def validate(call: ParsedCall) -> str | None:
        try:
            cards[call["name"]].parameters.model_validate(call["parameters"])
        except ValidationError as error:
            return "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
                for e in error.errors()
            )[:300]
        return None

    return validate


def plan_with_model(
    llm: Any,
    *,
    cards: Sequence[ToolCard],
    task: TaskSpec,
    slots: Mapping[str, Any],
    turns: Sequence[tuple[str, str]],
    task_id: str,
    checked: set[str],
    today: date,
) -> ModelPlan:
    """Ask ``llm`` for the calls; return them checked, or why the rules' plan must run.

    Args:
        llm: a LangChain chat model with ``bind_tools`` (``ChatOpenAI``).
        cards: the tools offered (``scenario_cards``).
        task: the task being served; its tool must be in the plan.
        slots: the verified slot values (shown to the model, and evidence for arguments).
        turns: ``(role, text)`` of the conversation, oldest first (trimmed to the budget).
        task_id: derives the calls' ids.
        checked: argument names that must be evidenced (``evidence_names``).
        today: resolves relative dates in the evidence check.
    """
    by_name = {card.name: card for card in cards}
    known = {k: v for k, v in slots.items() if not str(k).endswith("_masked")}
    summary = TaskSummary(goal=task.intent, slots=known, pending=(f"call {task.tool}",))
    prompt = bounded_messages(PLANNER_PROMPT, list(turns), summary=summary)
    roles = {"system": SystemMessage, "user": HumanMessage, "assistant": AIMessage}
    messages = [roles[role](content) for role, content in prompt]
    plan = ModelPlan()
    try:
        bound = llm.bind_tools([portable_schema(card.model_view()) for card in cards])

        def invoke(conversation: list[Any]) -> Any:
            plan.rounds += 1
            return bound.invoke(conversation)

        outcome = call_with_repair(invoke, messages, set(by_name), _validator(by_name))
    except GraphBubbleUp:
        raise
    except Exception as error:  # noqa: BLE001 - any model failure: the rules' plan runs
        plan.error = describe_error(error)
        return plan
    plan.refused.extend(outcome.refused)
    user_texts = [text for role, text in turns if role == "user"]
    accepted: list[ToolCall] = []
    for call in outcome.calls:
        invented = invented_arguments(
            call, checked=checked, slots=slots, texts=user_texts, today=today
        )
        if invented:
            plan.refused.append(
                f"{call['name']}: never stated by the user: "
                + ", ".join(f"{k}={v!r}" for k, v in invented.items())
            )
            continue
        parameters = dict(call["parameters"])
        accepted.append(
            {
                "id": plan_call_id(task_id, call["name"], parameters),
                "name": call["name"],
                "parameters": parameters,
            }
        )
    if plan.refused:
        plan.error = "refused: " + "; ".join(plan.refused)[:300]
    elif not accepted:
        plan.error = "invalid output: no tool call"
    elif task.tool not in {call["name"] for call in accepted}:
        plan.error = f"invalid output: the plan leaves out {task.tool}"
    else:
        unique = {c["id"]: c for c in accepted}
        plan.calls = list(unique.values())
    return plan


__all__ = [
    "PLANNER_PROMPT",
    "ModelPlan",
    "evidence_names",
    "invented_arguments",
    "plan_call_id",
    "plan_with_model",
    "portable_pattern",
    "portable_schema",
    "scenario_cards",
]
