"""What the trace reads out of a node's input and update: texts, shapes, JSON-safe values.

Pure helpers of ``observability.trace_callbacks.TraceRecorder``: the latest user text of a
turn's input (and its raw form, before intake masking), a resume's value, the reply's text,
whether a result says an earlier effect was undone, and a value's shape or JSON-safe form for
a record that must never hold the value itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from config.limits import JsonObject, pairs_before
from observability.metrics import ROLLBACK_MARKERS
from security.intake import CODE_SHOWN
from security.pii import bare_code


def shape_of(value: Any, depth: int = 0) -> Any:
    """Describe a value by its keys and types, never its content (the raw response shape)."""
    if depth > 3:
        return "…"
    if isinstance(value, Mapping):
        return {str(key): shape_of(item, depth + 1) for key, item in list(value.items())[:30]}
    if isinstance(value, list | tuple):
        return [shape_of(value[0], depth + 1), len(value)] if value else []
    if value is None:
        return "null"
    return type(value).__name__


def rolled_back(result: Mapping[str, Any]) -> bool:
    """Whether a result says an earlier effect was undone (compensated, released)."""
    data = result.get("data")
    if not isinstance(data, Mapping):
        return False
    if str(data.get("reason")) in ROLLBACK_MARKERS:
        return True
    return any(data.get(marker) is True for marker in ROLLBACK_MARKERS)


def is_step(tags: Sequence[str] | None) -> bool:
    """Whether a callback run is a graph step (a node), not a call inside one."""
    return any(tag.startswith("graph:step:") for tag in tags or ())


def as_list(value: Any) -> list[Any]:
    """The value as a list (an ``Overwrite`` unwrapped); anything else is empty."""
    value = getattr(value, "value", value)  # an Overwrite(...) reset
    return list(value) if isinstance(value, list | tuple) else []


def as_str(value: Any) -> str | None:
    """The value as text, ``None`` for an empty one."""
    return str(value) if value else None


def contents_of(update: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Return the structured contents of a node's protocol messages, newest first."""
    notes = [m.get("content") for m in as_list(update.get("protocol")) if isinstance(m, Mapping)]
    return [c for c in reversed(notes) if isinstance(c, Mapping)]


def last_user_text(inputs: Any) -> str | None:
    """Return the turn's user message as the audit may keep it (a PIN typed alone starred)."""
    text = raw_user_text(inputs)
    return CODE_SHOWN if text is not None and bare_code(text) else text


def raw_user_text(inputs: Any) -> str | None:
    """The latest user text of a turn's input as the client sent it (before intake)."""
    if not isinstance(inputs, Mapping):
        return None
    messages = inputs.get("messages")
    if not isinstance(messages, list) or not messages:
        return None
    last = messages[-1]
    if isinstance(last, HumanMessage):
        return message_content(last)
    if isinstance(last, tuple | list) and len(last) == 2 and last[0] in ("user", "human"):
        return str(last[1])
    if isinstance(last, Mapping) and last.get("role") in ("user", "human"):
        return str(last.get("content"))
    return None


def resume_value(inputs: Any) -> Any:
    """The value a ``Command(resume=...)`` input carries, else ``None``."""
    resume = getattr(inputs, "resume", None)
    if resume is not None:
        return resume
    return None


def reply_text(messages: Any) -> str | None:
    """The text of the last AI message without tool calls: the turn's reply."""
    for message in reversed(as_list(messages)):
        if isinstance(message, AIMessage) and not message.tool_calls:
            text = message_content(message)
            return text or None
    return None


def message_content(message: BaseMessage) -> str:
    """A message's content as text."""
    return message.content if isinstance(message.content, str) else str(message.content)


_PLAIN = (str, int, float, bool, type(None))


def jsonable(value: Any) -> Any:
    """Turn a record into plain JSON values (messages, pydantic models, sets).

    A plain dict or list comes back as the very same object: most records are plain, and
    copying each of a turn's records field by field was a fifth of the tracing.
    """
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is dict:
        changed: JsonObject | None = None  # a JSON-safe copy of any record
        for key, item in value.items():
            new = item if type(item) in _PLAIN else jsonable(item)
            if changed is None and (new is not item or type(key) is not str):
                changed = pairs_before(value, key)  # the plain pairs before this one
            if changed is not None:
                changed[str(key)] = new
        return value if changed is None else changed
    if kind is list:
        items = [item if type(item) in _PLAIN else jsonable(item) for item in value]
        return value if all(new is old for new, old in zip(items, value, strict=True)) else items
    if isinstance(value, Mapping):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set):
        return [jsonable(item) for item in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, BaseMessage):
        return {"type": value.type, "content": value.content}
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return jsonable(dump(mode="json"))
    return str(value)
