"""Show what each node decided, turn by turn, for the demo and ``reach chat --trace``."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.text import Text

from state import ProtocolMessage


def _last_note(update: dict[str, Any]) -> dict[str, Any]:
    note = update["protocol"][-1]
    return note.model_dump(mode="json") if isinstance(note, ProtocolMessage) else note


def show_update(console: Console, node: str, update: dict[str, Any] | None) -> None:
    """Print one node's update as a single readable line."""
    if not update:
        return
    if node == "intent":
        line = (
            f"intent={update.get('intent', '(continuing task)')} "
            f"confidence={update.get('confidence'):.2f} "
            f"evidence={update.get('intent_evidence')}"
        )
    elif node == "reflect_refine":
        note = _last_note(update)["content"]
        if note.get("trigger") == "tool_failure":
            line = f"tool failed, retry #{update.get('retry_count')}"
        else:
            after = note["after"]
            line = (
                f"re-examined → {after['intent']} ({after['confidence']:.2f}), "
                f"decision={update.get('decision')}"
            )
    elif node == "slot_filling":
        note = _last_note(update)["content"]
        line = f"slots={note['slot']} missing={update.get('missing_slots')}"
        if update.get("invalid_slots"):
            line += f" invalid={update['invalid_slots']}"
    elif node in ("finance", "appointment"):
        line = "; ".join(
            f"{r['tool']} → {r['status']}" + (f"/{r['error_type']}" if r["error_type"] else "")
            for r in update.get("tool_results", [])
        )
    elif node == "tool" and update.get("decision") == "revise":
        line = f"corrected {update.get('slots')}; asking again"
    elif node == "tool":
        parts = []
        for result in update.get("tool_results", []):
            detail = result["summary"] or result.get("message") or ""
            if result.get("duplicated"):
                detail += " (duplicate request: stored result, not run again)"
            parts.append(
                f"{result['tool']} → {result['status']}"
                + (f"/{result['error_type']}" if result["error_type"] else "")
                + f" {detail} ({result['latency_ms']} ms)"
            )
        line = "; ".join(parts)
    elif node in ("reply", "clarify", "handoff"):
        line = str(update["messages"][-1].content)
    elif node == "__interrupt__":
        payload = update[0].value if update else {}
        line = str(payload.get("question", payload)) if isinstance(payload, dict) else str(payload)
    else:
        line = json.dumps(update, ensure_ascii=False, default=str)[:200]
    style = "bold green" if node in ("reply", "clarify", "handoff", "__interrupt__") else "cyan"
    console.print(Text(f"  [{node}] ", style=style) + Text(line))
