"""Hand-off: the fallback reply when a tool keeps failing. It never pretends success."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from nodes.common import protocol_message
from nodes.prompts import intent_label, render
from state import AgentState, Context


def handoff(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Tell the user the service is unavailable and that a human takes over."""
    language = state.get("language", "zh")
    error = state.get("error") or {}
    task = intent_label(state.get("intent", ""), language)
    name = "unknown_outcome" if error.get("status") == "unknown" else "handoff"
    text = render(name, language, task=task)
    note = protocol_message(
        state,
        runtime,
        role="assistant",
        content=text,
        error=f"handoff: {error.get('tool')} {error.get('status')} after "
        f"{state.get('retry_count', 0)} retries",
        handoff={"to": "human", "reason": error.get("error_type") or "system"},
    )
    return {"messages": [AIMessage(content=text)], "protocol": [note], "step_count": 1}
