"""Hand-off: a person takes over when a tool keeps failing, or when the user asks for one.

It never pretends success.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from nodes.acts import EVIDENCE_PREFIX, HANDED_OVER
from nodes.common import Node, protocol_message
from nodes.prompts import Voice
from nodes.services import Services
from state import AgentState, Context


def _asked_for(state: AgentState) -> str | None:
    """Return the act (``human``, ``complaint``) the intent node read, when no tool failed."""
    if state.get("error") or state.get("decision") != "handoff":
        return None
    for cue in state.get("intent_evidence") or []:
        if cue.startswith(EVIDENCE_PREFIX) and cue[len(EVIDENCE_PREFIX) :] in HANDED_OVER:
            return cue[len(EVIDENCE_PREFIX) :]
    return None


def make_handoff_node(services: Services) -> Node:
    """Build the node that tells the user a human takes over."""

    def handoff(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
        """Say the service is unavailable (or the outcome unknown) and that a human takes over."""
        voice = Voice(services.catalog, state.get("language", "zh"))
        asked = _asked_for(state)
        if asked is not None:  # the user asked for a person, or complained
            text = voice.say(f"handoff_{asked}")
            note = protocol_message(
                state,
                runtime,
                role="assistant",
                content=text,
                handoff={
                    "to": "human",
                    "reason": "complaint" if asked == "complaint" else "user_request",
                },
            )
            return {"messages": [AIMessage(content=text)], "protocol": [note], "step_count": 1}
        error = state.get("error") or {}
        name = "unknown_outcome" if error.get("status") == "unknown" else "handoff"
        text = voice.say(name, task=voice.label(state.get("intent", "")))
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

    return handoff
