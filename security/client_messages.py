"""Tool results come only from the executor: a tool message in a client's input is dropped.

agent-chat-ui, before sending what the user typed at a pending confirmation, adds a tool
message for every tool call of the last AI message that has none yet
(``ensureToolCallsHaveResponses``): ``{"type": "tool", "tool_call_id": <the pending call>,
"id": "do-not-render-…", "content": "Successfully handled tool call."}``. Stored, it said a
refund the user then corrected had been "successfully handled" though it never ran, and the
call id showed twice. Any client could write any tool result that way. So every way a
client's input reaches the thread drops them first (and logs it): the run's ``input``, a
command's ``update`` and a state update's ``values``, as JSON over HTTP
(``graph/intake.py``, ``graph/auth.py``) or as Python objects (``graph/resume.py``).
The user's own words in the same input are kept and read as before.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from langchain_core.messages import BaseMessage

_log = logging.getLogger(__name__)

_TOOL_ROLES = frozenset(("tool", "function"))
"""The roles of a tool result in LangChain's and OpenAI's message shapes."""
_TOOL_TYPES = frozenset(("tool", "function", "ToolMessageChunk", "FunctionMessageChunk"))
"""The ``type`` of LangChain's tool and function message classes (and their chunks)."""


def is_tool_message(message: Any) -> bool:
    """Tell whether ``message`` (any input shape LangGraph accepts) is a tool result."""
    if isinstance(message, BaseMessage):
        return message.type in _TOOL_TYPES
    if isinstance(message, Mapping):
        role = message.get("type", message.get("role"))
        return isinstance(role, str) and role.lower() in _TOOL_ROLES
    if isinstance(message, list | tuple) and len(message) == 2:  # ("tool", "...")
        return isinstance(message[0], str) and message[0].lower() in _TOOL_ROLES
    return False


def _call_id(message: Any) -> str:
    if isinstance(message, BaseMessage):
        return str(getattr(message, "tool_call_id", "") or "")
    if isinstance(message, Mapping):
        return str(message.get("tool_call_id") or "")
    return ""


def without_tool_messages(value: Any) -> tuple[Any, list[str]]:
    """Return ``value`` (an input or update) without its tool messages, and their call ids.

    ``value`` is what a run's input or a state update holds: ``{"messages": [...]}`` (a
    single message too), or anything else, returned as it is. Nothing else is changed.
    """
    if not isinstance(value, Mapping) or "messages" not in value:
        return value, []
    messages = value["messages"]
    if is_tool_message(messages):
        return {**value, "messages": []}, [_call_id(messages)]
    if not isinstance(messages, list | tuple):
        return value, []
    kept = [m for m in messages if not is_tool_message(m)]
    if len(kept) == len(messages):
        return value, []
    dropped = [_call_id(m) for m in messages if is_tool_message(m)]
    return {**value, "messages": kept}, dropped


PAYLOAD_PLACES = (("input",), ("command", "update"), ("values",))
"""Where a client's request body carries messages for the thread: a run's input, a
command's update, a state update."""


def drop_from_payload(payload: Any, *, where: str = "request") -> list[str]:
    """Drop tool messages from a request body in place; return the dropped call ids.

    In place, because a server hands its auth handler the very dict it goes on to store. A
    list (``/runs/batch``) is a list of payloads.
    """
    if isinstance(payload, list):
        return [call for item in payload for call in drop_from_payload(item, where=where)]
    if not isinstance(payload, dict):
        return []
    dropped: list[str] = []
    for path in PAYLOAD_PLACES:
        holder: Any = payload
        for key in path[:-1]:
            holder = holder.get(key) if isinstance(holder, dict) else None
        if not isinstance(holder, dict):
            continue
        value = holder.get(path[-1])
        new, gone = without_tool_messages(value)
        if gone:
            holder[path[-1]] = new
            dropped.extend(gone)
    if dropped:
        logged(dropped, where=where)
    return dropped


def logged(dropped: list[str], *, where: str) -> None:
    """Log what was dropped: how many, and the calls they claimed to answer (no content)."""
    _log.warning(
        "dropped %d tool message(s) a client sent in its %s (tool results come only from the"
        " executor); they claimed to answer %s",
        len(dropped),
        where,
        ", ".join(call or "(no call id)" for call in dropped),
    )


__all__ = [
    "PAYLOAD_PLACES",
    "drop_from_payload",
    "is_tool_message",
    "logged",
    "without_tool_messages",
]
