"""Hand-off: a person takes over when a tool keeps failing, or when the user asks for one.

It never pretends success: it says what the failure was, in the one generic sentence of its
class (``tools.executor.failures``), then that a person takes over.
"""

from __future__ import annotations

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from nodes.common import Node, protocol_message
from nodes.services import Services
from nodes.wording import Voice
from state import AgentState, Context, StateUpdate
from tools.executor.failures import classify
from understanding.acts import EVIDENCE_PREFIX, HANDED_OVER


def _asked_for(state: AgentState) -> tuple[str, str] | None:
    """Return the act the intent node read (``human``, ``complaint``, ``beyond``) and its cue.

    ``None`` when a tool failed instead, or the turn was not handed over.
    """
    if state.get("error") or state.get("decision") != "handoff":
        return None
    evidence = list(state.get("intent_evidence") or [])
    for index, cue in enumerate(evidence):
        kind = cue[len(EVIDENCE_PREFIX) :] if cue.startswith(EVIDENCE_PREFIX) else ""
        if kind in HANDED_OVER:
            return kind, evidence[index + 1] if index + 1 < len(evidence) else ""
    return None


_REASONS = {"human": "user_request", "complaint": "complaint", "beyond": "not_served"}
"""The hand-off's reason, by the act that asked for it."""


def make_handoff_node(services: Services) -> Node:
    """Build the node that tells the user a human takes over."""

    def handoff(state: AgentState, runtime: Runtime[Context]) -> StateUpdate:
        """Say the service is unavailable (or the outcome unknown) and that a human takes over."""
        voice = Voice(services.catalog, state.get("language", "zh"))
        asked = _asked_for(state)
        if asked is not None:  # the user asked for a person, complained, or asked beyond us
            kind, cue = asked
            handoff = {"to": "human", "reason": _REASONS[kind]}
            if kind == "beyond":
                text = voice.say(f"beyond.{cue}")
                handoff["request"] = cue
            else:
                text = voice.say(f"handoff_{kind}")
            note = protocol_message(state, runtime, role="assistant", content=text, handoff=handoff)
            return {"messages": [AIMessage(content=text)], "protocol": [note], "step_count": 1}
        error = state.get("error") or {}
        task = voice.label(state.get("intent", ""))
        outcome = classify(error) if error else None
        said = (
            voice.failure(outcome, error, task=task, known=(state.get("slots") or {}).values())
            if outcome is not None
            else voice.say("handoff_stuck", task=task)
        )
        text = f"{said}{voice.say('handed_over')}"
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
