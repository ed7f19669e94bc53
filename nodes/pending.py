"""Closing an action that waited for a yes when the user moved on, or changed it.

An AI message that announced tool calls must be answered by a tool message per call before
the conversation goes on (chat APIs refuse the history otherwise). When the user corrects a
detail, asks for something else, or a person takes over, each announced call is answered as
not run.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, ToolMessage

from nodes.wording import Voice
from state import AgentState

if TYPE_CHECKING:
    from nodes.services import Services


def closed_calls(state: AgentState) -> list[ToolMessage]:
    """Answer the calls the last announcing AI message made, and nothing answered, as not run."""
    out: list[ToolMessage] = []
    answered = {m.tool_call_id for m in state.get("messages") or [] if isinstance(m, ToolMessage)}
    for message in reversed(state.get("messages") or []):
        if isinstance(message, AIMessage) and message.tool_calls:
            for call in message.tool_calls:
                if call["id"] not in answered:
                    out.append(
                        ToolMessage(
                            content=json.dumps({"status": "rejected", "message": "not run"}),
                            tool_call_id=call["id"],
                            name=call["name"],
                            status="error",
                        )
                    )
            break
    return out


def set_aside_messages(state: AgentState, services: Services, *, kept: bool = False) -> list[Any]:
    """Close a pending action the user moved on from, and say so.

    ``kept``: the action waits its turn behind the new request and is asked about again;
    otherwise it is dropped.
    """
    awaiting = state.get("awaiting")
    if not awaiting:
        return []
    voice = Voice(services.catalog, state.get("language", "zh"))
    key = "kept_pending" if kept else "set_aside"
    out: list[Any] = [*closed_calls(state)]
    out.append(AIMessage(content=voice.say(key, task=voice.label(awaiting["intent"]))))
    return out


__all__ = ["closed_calls", "set_aside_messages"]
