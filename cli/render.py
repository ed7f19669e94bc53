"""Show what each node decided, turn by turn, for the demo and ``reach chat --trace``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage
from rich.console import Console
from rich.text import Text

from state import ProtocolMessage, ProtocolRecord, StateUpdate, ToolResult


def _last_note(update: StateUpdate) -> ProtocolRecord:
    return _plain(update["protocol"][-1])


ANSWERS = frozenset({"reply", "clarify", "handoff", "__interrupt__"})
"""Steps whose line is what the user is told."""


def show_update(console: Console, node: str, update: Any, *, answers_only: bool = False) -> None:
    """Print one node's update as a line (with ``answers_only``, only what the user is told).

    Every node runs in a step of its own; the intent node's update may also hold an answer it
    gave itself (a greeting, a message too long), printed as a ``reply`` line.
    """
    if not update or (answers_only and node not in ANSWERS | {"intent"}):
        return
    for step, line in _lines(node, update):
        if answers_only and step not in ANSWERS:
            continue
        style = "bold green" if step in ANSWERS else "cyan"
        console.print(Text(f"  [{step}] ", style=style) + Text(line))


def _lines(node: str, update: Any) -> list[tuple[str, str]]:
    if node == "__interrupt__":
        payload = update[0].value if update else {}
        return [("__interrupt__", _question(payload))]
    if node == "intent":
        lines = [("intent", _intent_line(update))]
        for message in update.get("messages") or []:  # hello, too long, a set-aside action
            if isinstance(message, AIMessage) and not message.tool_calls:
                lines.append(("reply", str(message.content)))
        return lines
    if node == "tool":
        return [("tool", _tool_line(update))]
    if node == "reflect_refine":
        return [("reflect_refine", _reflect_line(update))]
    if node == "propose":  # the question or notice written before the action, if any
        said = [str(m.content) for m in update.get("messages") or [] if isinstance(m, AIMessage)]
        return [("propose", said[-1] if said else "(nothing to ask)")]
    if node == "slot_filling":
        return [("slot_filling", _slots_line(update))]
    if node in ("finance", "appointment"):
        return [(node, _results_line(update))]
    if node in ("reply", "clarify", "handoff"):
        return [(node, str(update["messages"][-1].content))]
    return [(node, json.dumps(update, ensure_ascii=False, default=str)[:200])]


def _question(payload: Any) -> str:
    return str(payload.get("question", payload)) if isinstance(payload, dict) else str(payload)


def _intent_line(update: StateUpdate) -> str:
    confidence = update.get("confidence")
    if confidence is None:  # a typed answer to a pending confirmation, a hand-over
        evidence = update.get("intent_evidence")
        return f"decision={update.get('decision')}" + (f" evidence={evidence}" if evidence else "")
    return (
        f"intent={update.get('intent', '(continuing task)')} "
        f"confidence={confidence:.2f} "
        f"evidence={update.get('intent_evidence')}"
    )


def _reflect_line(update: StateUpdate) -> str:
    note = _last_note(update)["content"]
    if note.get("trigger") == "tool_failure":
        return f"tool failed, retry #{update.get('retry_count')}"
    after = note["after"]
    decision = update.get("decision")
    return f"re-examined → {after['intent']} ({after['confidence']:.2f}), decision={decision}"


def _slots_line(update: StateUpdate) -> str:
    note: Mapping[str, Any] = next(  # slot filling's own note (``nodes.slot_filling``)
        (
            n["content"]
            for n in reversed([_plain(p) for p in update.get("protocol") or []])
            if isinstance(n.get("content"), dict) and n["content"].get("stage") == "slot_filling"
        ),
        {"slot": {}},
    )
    line = f"slots={note['slot']} missing={update.get('missing_slots')}"
    if update.get("invalid_slots"):
        line += f" invalid={update['invalid_slots']}"
    suggested = note.get("suggested") or {}
    if suggested.get("filled"):
        line += f" found={suggested['filled']}"  # from the user's own records
    if suggested.get("offered"):
        line += f" offered={suggested['offered']}"
    return line


def _tool_line(update: StateUpdate) -> str:
    if update.get("decision") == "revise":
        return f"corrected {update.get('slots')}; asking again"
    parts = []
    for result in _results(update):
        detail = result["summary"] or result.get("message") or ""
        if result.get("duplicated"):
            detail += " (duplicate request: stored result, not run again)"
        parts.append(
            f"{result['tool']} → {result['status']}"
            + (f"/{result['error_type']}" if result["error_type"] else "")
            + f" {detail} ({result['latency_ms']} ms)"
        )
    return "; ".join(parts)


def _results_line(update: StateUpdate) -> str:
    return "; ".join(
        f"{r['tool']} → {r['status']}" + (f"/{r['error_type']}" if r["error_type"] else "")
        for r in _results(update)
    )


def _results(update: StateUpdate) -> list[ToolResult]:
    results = update.get("tool_results") or []
    return list(getattr(results, "value", results))


def _plain(note: Any) -> ProtocolRecord:
    return note.model_dump(mode="json") if isinstance(note, ProtocolMessage) else dict(note)
