"""Reply: turn tool results into natural language in the user's language.

Replies are built from the envelope's data by the describer the tool's scenario declares.
Raw JSON and internal error text never reach the user; a missing resource is said to be
missing, and nothing is invented. Failures every tool can have (declined, refused, invalid
arguments, rate limited) are worded here, once.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from nodes.common import Node, context_of, message_text, protocol_message
from nodes.model_reply import phrase_reply
from nodes.prompts import Voice
from nodes.services import Services
from nodes.tasks import ScenarioSet
from state import AgentState, Context, ToolResult

_log = logging.getLogger(__name__)


def make_reply_node(services: Services) -> Node:
    """Build the node that answers from the task's latest tool results."""

    def reply(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
        """Answer the user from this task's latest tool results."""
        voice = Voice(services.catalog, state.get("language", "zh"))
        results = _latest_results(state)
        text = "\n".join(describe_result(r, state, voice, services.catalog) for r in results)
        error = None
        llm = services.chat_model("reply", context_of(runtime).model)
        if llm is not None and text:  # optional phrasing; the template is the fallback
            text, error = phrase_reply(
                llm,
                draft=text,
                results=[dict(r) for r in results],
                goal=str(state.get("intent", "")),
                language=voice.language,
                turns=recent_turns(state),
            )
        note = protocol_message(
            state,
            runtime,
            role="assistant",
            content=text,
            confidence=state.get("confidence", 1.0),
            error=error,
        )
        return {
            "messages": [AIMessage(content=text)],
            "protocol": [note],
            "step_count": 1,
            **_asked_again(services, state),
        }

    return reply


def _asked_again(services: Services, state: AgentState) -> dict[str, Any]:
    """Reopen the slot the reply asks for again, so the user's answer continues the task.

    The slot's old value is dropped: an answer without a new one is asked for it, not run
    on the value that just failed.
    """
    task = services.catalog.task(state.get("intent"))
    slot = task.reask(state.get("tool_results") or []) if task and task.reask else None
    if slot is None:
        return {}
    slots = {k: v for k, v in (state.get("slots") or {}).items() if k != slot}
    return {"missing_slots": [slot], "slots": Overwrite(slots), "pending_tool_calls": []}


def recent_turns(state: AgentState, limit: int = 12) -> list[tuple[str, str]]:
    """The last text turns of the conversation as ``(role, text)`` (tool traffic left out)."""
    turns: list[tuple[str, str]] = []
    for message in (state.get("messages") or [])[-4 * limit :]:
        if isinstance(message, HumanMessage):
            turns.append(("user", message_text(message)))
        elif isinstance(message, AIMessage) and isinstance(message.content, str):
            if message.content and not message.tool_calls:
                turns.append(("assistant", message.content))
    return turns[-limit:]


def _latest_results(state: AgentState) -> list[ToolResult]:
    count = len(state.get("pending_tool_calls") or []) or 1
    return (state.get("tool_results") or [])[-count:]


def describe_result(
    result: ToolResult, state: AgentState, voice: Voice, scenarios: ScenarioSet
) -> str:
    """Say what one tool result means for the user.

    A success answered from the idempotency record (a replayed confirmation, a re-run from a
    checkpoint) says so first: the user must not think it was done twice.
    """
    text = _describe(result, state, voice, scenarios)
    if result.get("duplicated") and result.get("status") == "success":
        return f"{voice.say('already_submitted')}\n{text}"
    return text


def _describe(result: ToolResult, state: AgentState, voice: Voice, scenarios: ScenarioSet) -> str:
    data = result.get("data") or {}
    error_type = result.get("error_type")
    task = voice.label(state.get("intent", ""))
    if result.get("status") == "rejected" and error_type is None:
        return voice.say("declined", task=task)
    if error_type == "rate_limited":
        return voice.say("rate_limited")
    if error_type == "permission_denied":
        return voice.say("not_permitted")
    if error_type == "validation":
        fields = ", ".join(err["field"] for err in data.get("errors", [])) or "arguments"
        return voice.say("invalid_request", reason=fields)
    describe = scenarios.describers.get(result.get("tool", ""))
    if describe is not None:
        own = replace(voice, prefer=scenarios.tool_scenario.get(result.get("tool", "")))
        try:
            return describe(result, state, own)
        except (KeyError, TypeError, ValueError):
            # data not in the shape the describer knows (a backend renamed a field): the turn
            # must still end with an answer, and the user must not be told a guess
            _log.exception("describer of %s failed on its result", result.get("tool"))
            return voice.say("handoff", task=task)
    # a tool with no wording of its own: never show its internal summary to the user
    return voice.say("done" if result.get("status") == "success" else "handoff", task=task)
