"""The protocol message: the one message format between all agents, as the design defines it.

``ProtocolMessage`` masks personal identifiers on construction, makes values JSON-safe and
cuts a message over ``MAX_PROTOCOL_BYTES`` (never refuses it, unless asked to with
``REFUSE_OVERSIZE``). The state's reducer that appends messages is ``state.append_protocol``.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from typing import Any, Literal, NotRequired, Protocol, TypeAlias, TypedDict

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from config.limits import (
    JsonObject,
    clean_string,
    cut_marker,
    cut_string,
    dumps_compact,
    json_bytes,
    json_safe,
)
from security.pii import mask_pii
from tools.registry.types import Arguments

MAX_PROTOCOL_BYTES = 5 * 1024
"""The design's ceiling for one protocol message, measured as UTF-8 JSON."""
MAX_PROTOCOL_FIELD_BYTES = 512
"""A field other than ``content`` (error, ids, a peer's extra field, one call's arguments)
is cut to this when a message is over the limit."""
REFUSE_OVERSIZE = {"oversize": "refuse"}
"""Validation context that makes an oversized message raise instead of being cut (``fit``)."""
_SHORT_FIELDS = ("error", "session_id", "task_id", "parent_task_id", "user_role")

Role = Literal["user", "assistant", "tool", "system", "agent"]


ProtocolRecord: TypeAlias = JsonObject
"""A protocol message as the state and every peer keep it: ``ProtocolMessage`` dumped to JSON,
with the unknown fields of a newer peer kept (``extra="allow"``), so its keys are open."""


class OpenAIFunction(TypedDict):
    """The function of an OpenAI tool call: its name and its arguments as JSON text."""

    name: str
    arguments: str


class OpenAIToolCall(TypedDict):
    """One tool call in an OpenAI Chat Completions message."""

    id: str | None
    type: Literal["function"]
    function: OpenAIFunction


class OpenAIMessage(TypedDict):
    """A Chat Completions message as ``to_openai`` renders it."""

    role: str
    content: str
    tool_call_id: NotRequired[str]
    name: NotRequired[str]
    tool_calls: NotRequired[list[OpenAIToolCall]]


class ProtocolMessageTooLarge(ValueError):
    """A protocol message is over the size limit and nothing was given to store its payload."""


class ProtocolToolCall(BaseModel):
    """One requested tool call: the model decides, the executor runs it."""

    model_config = ConfigDict(extra="allow")

    id: str | None = None
    """Correlates the call with the tool message that answers it."""
    name: str
    """The tool's verb_object name."""
    parameters: Arguments = Field(default_factory=dict)
    """Arguments as a JSON object."""

    @field_validator("parameters", mode="before")
    @classmethod
    def _json_safe(cls, value: Any) -> Any:
        return json_safe(value) if isinstance(value, dict) else value


class PayloadStore(Protocol):
    """Somewhere to keep a payload too large for a protocol message."""

    def put_payload(self, data: bytes) -> str:
        """Store ``data`` and return a URI that retrieves it."""
        ...


class ProtocolMessage(BaseModel):
    """The one message format between all agents, as the design defines it.

    Unknown fields from a newer peer are kept and passed on (``extra="allow"``). Personal
    identifiers are masked on construction, so a full ID-card or phone number never reaches
    a checkpoint, a log or another agent. Values are made JSON-safe (no NaN, sets, bytes or
    lone surrogates). A message over ``MAX_PROTOCOL_BYTES`` is cut, never refused: a turn must
    not crash because a user or a tool sent 20 KB. The cut keeps a prefix and a marker with
    the original's size and SHA-256. ``fit`` stores the full payload by reference instead;
    validating with ``context=REFUSE_OVERSIZE`` raises ``ProtocolMessageTooLarge``.
    """

    model_config = ConfigDict(extra="allow")

    role: Role
    """Who speaks: sets the permission boundary of the message."""
    content: str | JsonObject = ""
    """Text, or a JSON object for tool results and structured agent output (each tool's and
    agent's own shape: validated as any object, so a peer's output passes through)."""
    tool_calls: list[ProtocolToolCall] = Field(default_factory=list)
    """Calls the sender asks the executor to make."""
    session_id: str = ""
    """The conversation: LangGraph's thread id."""
    task_id: str = ""
    """One user request; every message about it shares this id."""
    parent_task_id: str | None = None
    """The task this one was split from, when a task is decomposed or handed off."""
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    """How sure the sender is; below 0.6 triggers reflect-refine."""
    timestamp: str = Field(default_factory=lambda: _utc_now())
    """ISO-8601 in UTC."""
    error: str | None = None
    """What went wrong, for machines; never shown to the user as is."""
    user_role: str | None = None
    """The caller's role, for tool authorization."""
    retry_count: int = Field(default=0, ge=0)
    """How many times this task was retried, so loops can be cut."""
    _measured: tuple[ProtocolRecord, int] | None = PrivateAttr(default=None)
    """Validation's dump and its size, until ``validated`` takes them."""

    @model_validator(mode="before")
    @classmethod
    def _mask(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {key: _clean_field(key, value) for key, value in data.items()}
        return data

    @field_validator("timestamp", mode="before")
    @classmethod
    def _iso_utc(cls, value: Any) -> str:
        if type(value) is str and _CANONICAL_UTC.fullmatch(value):  # our own default's form
            return value
        if isinstance(value, datetime):
            moment = value
        else:
            try:
                moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
            except ValueError as exc:
                msg = f"timestamp must be ISO-8601, got {value!r}"
                raise ValueError(msg) from exc
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")

    @model_validator(mode="after")
    def _within_size(self, info: ValidationInfo) -> ProtocolMessage:
        dumped = self.model_dump(mode="json")
        size = len(dumps_compact(dumped, default=None))
        if size <= MAX_PROTOCOL_BYTES:
            self._measured = (dumped, size)
            return self
        if isinstance(info.context, dict) and info.context.get("oversize") == "refuse":
            msg = (
                f"protocol message is {size} bytes; the limit is {MAX_PROTOCOL_BYTES}. "
                "Send large payloads by reference (ProtocolMessage.fit with a payload store)."
            )
            raise ProtocolMessageTooLarge(msg)
        _shrink(self)
        return self

    def size_bytes(self) -> int:
        """Return the size of the message as compact UTF-8 JSON."""
        return len(dumps_compact(self.model_dump(mode="json"), default=None))

    def validated(self) -> ValidatedProtocol:
        """Return the message as the JSON-ready dict the state and every peer keep.

        Validation dumped and measured the message already: that dump is taken (once), so
        a node's protocol message is dumped one time, not three (measured, given, traced).
        """
        measured, self._measured = self._measured, None
        if measured is None:
            dumped = self.model_dump(mode="json")
            return ValidatedProtocol(dumped, size=len(dumps_compact(dumped, default=None)))
        return ValidatedProtocol(measured[0], size=measured[1])

    def to_json(self) -> str:
        """Serialize compactly, keeping unknown fields and non-ASCII text as is."""
        return dumps_compact(self.model_dump(mode="json"), default=None).decode("utf-8")

    @classmethod
    def fit(cls, store: PayloadStore, **fields: Any) -> ProtocolMessage:
        """Build a message, moving an oversized ``content`` into ``store`` by reference.

        The reference keeps a short preview so a reader can tell what the payload is without
        fetching it.
        """
        try:
            return cls.model_validate(fields, context=REFUSE_OVERSIZE)
        except ValueError as exc:
            if not _caused_by_size(exc):
                raise
        content = mask_pii(json_safe(fields.get("content", "")))
        raw = json.dumps(content, ensure_ascii=False).encode("utf-8")
        preview = raw[:200].decode("utf-8", errors="ignore")
        fields["content"] = {
            "$ref": store.put_payload(raw),
            "bytes": len(raw),
            "sha256": hashlib.sha256(raw).hexdigest(),
            "preview": preview,
        }
        return cls(**fields)  # anything else still too large is cut

    # ---- LangChain and OpenAI interop -------------------------------------------------

    def text(self) -> str:
        """Return the content as text; JSON content is serialized."""
        if isinstance(self.content, str):
            return self.content
        return json.dumps(self.content, ensure_ascii=False)

    def to_langchain(self) -> BaseMessage:
        """Convert to the LangChain message a chat model or ``ToolNode`` expects.

        ``agent`` messages become ``AIMessage`` named ``agent``: chat APIs have no agent role,
        and inter-agent notes are assistant-side text.
        """
        meta = {"protocol": self.model_dump(mode="json", exclude={"role", "content", "tool_calls"})}
        if self.role == "user":
            return HumanMessage(content=self.text(), additional_kwargs=meta)
        if self.role == "system":
            return SystemMessage(content=self.text(), additional_kwargs=meta)
        if self.role == "tool":
            call_id = str(getattr(self, "tool_call_id", None) or _first_id(self.tool_calls))
            return ToolMessage(
                content=self.text(),
                tool_call_id=call_id,
                status="error" if self.error else "success",
                additional_kwargs=meta,
            )
        calls = [
            {"id": call.id, "name": call.name, "args": call.parameters, "type": "tool_call"}
            for call in self.tool_calls
        ]
        name = "agent" if self.role == "agent" else None
        return AIMessage(content=self.text(), tool_calls=calls, name=name, additional_kwargs=meta)

    @classmethod
    def from_langchain(cls, message: BaseMessage, **fields: Any) -> ProtocolMessage:
        """Build a protocol message from a LangChain message plus session fields."""
        role: Role
        extra: dict[str, object] = {}  # fields of the message kind (a tool's call id)
        tool_calls: list[ProtocolToolCall] = []
        if isinstance(message, HumanMessage):
            role = "user"
        elif isinstance(message, SystemMessage):
            role = "system"
        elif isinstance(message, ToolMessage):
            role = "tool"
            extra["tool_call_id"] = message.tool_call_id
            if message.status == "error":
                extra.setdefault("error", "tool_error")
        elif isinstance(message, AIMessage):
            role = "agent" if message.name == "agent" else "assistant"
            tool_calls = [
                ProtocolToolCall(id=call["id"], name=call["name"], parameters=call["args"])
                for call in message.tool_calls
            ]
        else:
            msg = f"cannot convert {type(message).__name__} to a protocol message"
            raise TypeError(msg)
        content: str | JsonObject  # as the field: text, or a tool's own JSON output
        content = message.content if isinstance(message.content, str) else ""
        if isinstance(message.content, str) and role == "tool":
            content = _maybe_json(message.content)
        carried = {
            key: value
            for key, value in message.additional_kwargs.get("protocol", {}).items()
            if key not in ("role", "content", "tool_calls")
        }
        merged = {**carried, **extra, **fields}
        return cls(role=role, content=content, tool_calls=tool_calls, **merged)

    def to_openai(self) -> OpenAIMessage:
        """Render as an OpenAI Chat Completions message."""
        if self.role == "tool":
            call_id = getattr(self, "tool_call_id", None) or _first_id(self.tool_calls)
            return {"role": "tool", "tool_call_id": call_id, "content": self.text()}
        role = "assistant" if self.role in ("assistant", "agent") else self.role
        wire: OpenAIMessage = {"role": role, "content": self.text()}
        if self.role == "agent":
            wire["name"] = "agent"
        if self.tool_calls:
            wire["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {
                        "name": call.name,
                        "arguments": json.dumps(call.parameters, ensure_ascii=False),
                    },
                }
                for call in self.tool_calls
            ]
        return wire

    @classmethod
    def from_openai(cls, wire: JsonObject, **fields: Any) -> ProtocolMessage:
        """Parse an OpenAI Chat Completions message (a peer's, unchecked until parsed)."""
        role = wire["role"]
        if role == "assistant" and wire.get("name") == "agent":
            role = "agent"
        calls = [
            ProtocolToolCall(
                id=call.get("id"),
                name=call["function"]["name"],
                parameters=json.loads(call["function"].get("arguments") or "{}"),
            )
            for call in wire.get("tool_calls") or []
        ]
        content: Any = wire.get("content") or ""
        if role == "tool":
            fields.setdefault("tool_call_id", wire.get("tool_call_id"))
            content = _maybe_json(content)
        return cls(role=role, content=content, tool_calls=calls, **fields)


_CANONICAL_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
"""A timestamp as ``_iso_utc`` writes it (and ``_utc_now`` makes it): nothing to convert."""


def _utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _first_id(calls: list[ProtocolToolCall]) -> str:
    return next((call.id for call in calls if call.id), "")


def _maybe_json(text: str) -> str | JsonObject:  # a tool's output: its own JSON
    try:
        parsed = json.loads(text)
    except ValueError:
        return text
    return parsed if isinstance(parsed, dict) else text


def _clean_field(key: str, value: Any) -> Any:
    """Make a value JSON-safe and masked; ``tool_calls`` items are cleaned by their model."""
    if key in ("role", "confidence", "retry_count", "timestamp", "tool_calls"):
        return mask_pii(value) if key == "tool_calls" else value
    return mask_pii(json_safe(value))


def _shrink(message: ProtocolMessage) -> None:
    """Cut ``message`` in place until it fits ``MAX_PROTOCOL_BYTES``; never raise.

    ``content`` is cut first. If the other fields alone are too large, each is cut to
    ``MAX_PROTOCOL_FIELD_BYTES`` (a call's arguments become a marker); if that is still not
    enough, the extra fields and the calls that do not fit are replaced by a marker.
    """
    reserve = 400  # room for the content marker
    if _size_without_content(message) + reserve > MAX_PROTOCOL_BYTES:
        _cut_fields(message)
    if _size_without_content(message) + reserve > MAX_PROTOCOL_BYTES:
        _drop_fields(message)
    budget = MAX_PROTOCOL_BYTES - _size_without_content(message)
    if isinstance(message.content, str):
        message.content = cut_string(message.content, max(budget, 2))
    else:
        message.content = dict(cut_marker(message.content))
    if message.size_bytes() > MAX_PROTOCOL_BYTES:  # only pathological shapes get here
        message.content = ""
        message.tool_calls = []
        message.__pydantic_extra__ = {"$cut_fields": True}


def _size_without_content(message: ProtocolMessage) -> int:
    content = message.content
    message.content = ""
    try:
        return message.size_bytes()
    finally:
        message.content = content


def _cut_fields(message: ProtocolMessage) -> None:
    limit = MAX_PROTOCOL_FIELD_BYTES
    for name in _SHORT_FIELDS:
        value = getattr(message, name)
        if isinstance(value, str):
            setattr(message, name, cut_string(value, limit))
    extra = message.__pydantic_extra__ or {}
    for key, value in list(extra.items()):
        if isinstance(value, str):
            extra[key] = cut_string(value, limit)
        elif json_bytes(value) > limit:
            extra[key] = cut_marker(value)
    for call in message.tool_calls:
        if json_bytes(call.parameters) > limit:
            call.parameters = dict(cut_marker(call.parameters))
        call.name = cut_string(call.name, 128)
        if call.id is not None:
            call.id = cut_string(call.id, 128)
        call_extra = call.__pydantic_extra__ or {}
        for key in [k for k, v in call_extra.items() if json_bytes(v) > limit]:
            call_extra[key] = cut_marker(call_extra[key])


def _drop_fields(message: ProtocolMessage) -> None:
    extra = message.__pydantic_extra__ or {}
    if extra:
        names = [clean_string(name, 64) for name in list(extra)[:20]]
        message.__pydantic_extra__ = {"$cut_fields": names}
    kept: list[ProtocolToolCall] = []
    budget = MAX_PROTOCOL_BYTES - 600
    used = _size_without_content(message) - json_bytes(
        [call.model_dump(mode="json") for call in message.tool_calls]
    )
    for call in message.tool_calls:
        size = json_bytes(call.model_dump(mode="json")) + 1
        if used + size > budget:
            break
        kept.append(call)
        used += size
    if len(kept) < len(message.tool_calls):
        if message.__pydantic_extra__ is None:
            message.__pydantic_extra__ = {}
        message.__pydantic_extra__["$cut_tool_calls"] = len(message.tool_calls) - len(kept)
        message.tool_calls = kept


def _caused_by_size(exc: ValueError) -> bool:
    if isinstance(exc, ProtocolMessageTooLarge):
        return True
    errors = getattr(exc, "errors", None)
    if errors is None:
        return False
    return any(
        isinstance(err.get("ctx", {}).get("error"), ProtocolMessageTooLarge) for err in errors()
    )


class ValidatedProtocol(ProtocolRecord):
    """A protocol message as the JSON-ready dict ``ProtocolMessage`` produced, already checked.

    ``size`` is its size as compact UTF-8 JSON, as validation measured it (the trace
    reports it); ``None`` when unknown.

    ``nodes.common.protocol_message`` validates (masks, size-checks) and returns one of these,
    so the reducer need not validate it a second time. Serializers see a plain dict; anything
    read back from a checkpoint or sent by a peer is a plain dict and is validated again.
    """

    __slots__ = ("size",)

    def __init__(self, *args: Any, size: int | None = None, **kwargs: Any) -> None:
        """Hold the message's fields; ``size`` as validation measured it."""
        super().__init__(*args, **kwargs)
        self.size = size
