"""Reflect-refine as a critique: a model says why the last step failed and what to do next.

The rules stay the default (retry a transient failure while retries are left). With a model
configured for ``reflect`` the failed call and its error envelope's summary go to the model,
which answers with structured JSON (``CRITIQUE_SCHEMA``, a grammar on local servers)::

    {"cause": "...", "action": "retry" | "fix_arguments" | "other_tool" | "ask" | "give_up",
     "tool": "<name>" | null, "arguments": "<JSON object>" | null}

The answer is validated like any model output: the action must be one of the five, a tool
must be one the task may use, arguments must pass the tool's pydantic model and every named
value must be evidenced (``planning.planner.invented_arguments``). Anything else, or a
model failure, leaves the rules' decision in place, and the protocol says why.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

from langgraph.errors import GraphBubbleUp
from pydantic import ValidationError

from config.limits import JsonValue
from planning.planner import invented_arguments, plan_call_id
from planning.prompt_budget import TaskSummary, bounded_messages
from state import ToolCall
from tools.registry.cards import ToolCard
from understanding.model_recognizer import describe_error

Action = Literal["retry", "fix_arguments", "other_tool", "ask", "give_up"]
ACTIONS: tuple[str, ...] = ("retry", "fix_arguments", "other_tool", "ask", "give_up")
CRITIQUE_SCHEMA: dict[str, JsonValue] = {
    "title": "critique",
    "description": "Why the last tool call failed and what the agent should do next.",
    "type": "object",
    "properties": {
        "cause": {"type": "string", "description": "why it failed, one sentence"},
        "action": {"type": "string", "enum": list(ACTIONS)},
        "tool": {"type": ["string", "null"], "description": "tool for fix_arguments/other_tool"},
        "arguments": {
            "type": ["string", "null"],
            "description": "JSON object of corrected arguments, only values the user stated",
        },
    },
    "required": ["cause", "action", "tool", "arguments"],
    "additionalProperties": False,
}
CRITIQUE_PROMPT = (
    "A tool call of a customer-service agent failed. Say why in one sentence and choose the "
    "next step: retry (a transient failure), fix_arguments (the same tool with corrected "
    "arguments), other_tool (a different tool of the list), ask (the user must say something "
    "first), give_up (hand over to a person). Never invent an id, a number or a date. "
    "Answer in JSON."
)


@dataclass
class Critique:
    """The model's validated critique, or why the rules' decision stands."""

    action: Action | None = None
    """``None``: no usable critique; the rules decide."""
    cause: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    """The corrected or alternative call, for ``fix_arguments`` / ``other_tool``."""
    error: str | None = None


def critique_failure(
    llm: Any,
    *,
    failed: Mapping[str, Any],
    call: Mapping[str, Any] | None,
    cards: Sequence[ToolCard],
    goal: str,
    slots: Mapping[str, Any],
    user_texts: Sequence[str],
    task_id: str,
    checked: set[str],
    today: date,
) -> Critique:
    """Ask the model why ``failed`` happened and what to do; validate every part of the answer."""
    by_name = {card.name: card for card in cards}
    tools = "; ".join(f"{card.name}: {card.description.splitlines()[0][:80]}" for card in cards)
    shown = {k: v for k, v in slots.items() if not str(k).endswith("_masked")}
    summary = TaskSummary(
        goal=goal,
        slots=shown,
        done=(f"{(call or {}).get('name')}({json.dumps((call or {}).get('parameters') or {})})",),
        pending=("decide the next step",),
    )
    turns = [("user", text) for text in user_texts]
    prompt = bounded_messages(
        f"{CRITIQUE_PROMPT}\nTools: {tools}", turns, summary=summary, tool_results=[failed]
    )
    try:
        runnable = llm.with_structured_output(
            CRITIQUE_SCHEMA, method="json_schema", strict=True, include_raw=True
        )
        out = runnable.invoke(prompt)
    except GraphBubbleUp:
        raise
    except Exception as error:  # noqa: BLE001 - a failed critique: the rules decide
        return Critique(error=describe_error(error))
    parsed = out.get("parsed") if isinstance(out, dict) else None
    if not isinstance(parsed, dict) or parsed.get("action") not in ACTIONS:
        raw = getattr(out.get("raw") if isinstance(out, dict) else None, "content", "")
        return Critique(error=f"invalid output: {str(raw)[:120]!r}")
    critique = Critique(action=parsed["action"], cause=str(parsed.get("cause") or "")[:300])
    if critique.action in ("fix_arguments", "other_tool"):
        problem = _replacement(critique, parsed, by_name, call, slots, user_texts, checked, today)
        if problem is not None:
            return Critique(error=f"refused {critique.action}: {problem}", cause=critique.cause)
        calls = critique.calls
        calls[0]["id"] = plan_call_id(task_id, calls[0]["name"], calls[0]["parameters"])
    return critique


def _replacement(
    critique: Critique,
    parsed: Mapping[str, Any],
    cards: Mapping[str, ToolCard],
    call: Mapping[str, Any] | None,
    slots: Mapping[str, Any],
    user_texts: Sequence[str],
    checked: set[str],
    today: date,
) -> str | None:
    """Build the corrected call into ``critique.calls``; return why it is refused, if it is."""
    name = parsed.get("tool") or (call or {}).get("name")
    if critique.action == "fix_arguments":
        name = (call or {}).get("name") or name
    if not isinstance(name, str) or name not in cards:
        return f"unknown tool {name!r}"
    try:
        arguments = json.loads(parsed.get("arguments") or "{}")
    except json.JSONDecodeError as error:
        return f"arguments are not JSON: {error.msg}"
    if not isinstance(arguments, dict):
        return "arguments are not an object"
    try:
        cards[name].parameters.model_validate(arguments)
    except ValidationError as error:
        return f"invalid arguments: {error.errors()[0]['msg']}"
    invented = invented_arguments(
        {"parameters": arguments}, checked=checked, slots=slots, texts=user_texts, today=today
    )
    if invented:
        return "never stated by the user: " + ", ".join(f"{k}={v!r}" for k, v in invented.items())
    critique.calls = [{"id": "", "name": name, "parameters": arguments}]
    return None


__all__ = ["ACTIONS", "CRITIQUE_SCHEMA", "Critique", "critique_failure"]
