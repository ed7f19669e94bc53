"""The typed state, the protocol message every agent speaks, and the trusted runtime context.

Everything that crosses a node boundary is defined here, so the graph has one state style:
a ``TypedDict`` with a reducer on every key that more than one writer touches.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import (
    Annotated,
    Any,
    Literal,
    NotRequired,
    Protocol,
    TypedDict,
)

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.graph.message import add_messages
from langgraph.types import Overwrite
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from tools.limits import (
    clean_string,
    cut_marker,
    cut_string,
    dumps_compact,
    json_bytes,
    json_safe,
)
from tools.pii import mask_pii
from understanding.commands import CommandRecord

MAX_PROTOCOL_BYTES = 5 * 1024
"""The design's ceiling for one protocol message, measured as UTF-8 JSON."""
MAX_PROTOCOL_FIELD_BYTES = 512
"""A field other than ``content`` (error, ids, a peer's extra field, one call's arguments)
is cut to this when a message is over the limit."""
REFUSE_OVERSIZE = {"oversize": "refuse"}
"""Validation context that makes an oversized message raise instead of being cut (``fit``)."""
_SHORT_FIELDS = ("error", "session_id", "task_id", "parent_task_id", "user_role")

Role = Literal["user", "assistant", "tool", "system", "agent"]


class ProtocolMessageTooLarge(ValueError):
    """A protocol message is over the size limit and nothing was given to store its payload."""


class ProtocolToolCall(BaseModel):
    """One requested tool call: the model decides, the executor runs it."""

    model_config = ConfigDict(extra="allow")

    id: str | None = None
    """Correlates the call with the tool message that answers it."""
    name: str
    """The tool's verb_object name."""
    parameters: dict[str, Any] = Field(default_factory=dict)
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
    content: str | dict[str, Any] = ""
    """Text, or a JSON object for tool results and structured agent output."""
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
    _measured: tuple[dict[str, Any], int] | None = PrivateAttr(default=None)
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
        extra: dict[str, Any] = {}
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
        content: str | dict[str, Any]
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

    def to_openai(self) -> dict[str, Any]:
        """Render as an OpenAI Chat Completions message."""
        if self.role == "tool":
            call_id = getattr(self, "tool_call_id", None) or _first_id(self.tool_calls)
            return {"role": "tool", "tool_call_id": call_id, "content": self.text()}
        role = "assistant" if self.role in ("assistant", "agent") else self.role
        wire: dict[str, Any] = {"role": role, "content": self.text()}
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
    def from_openai(cls, wire: dict[str, Any], **fields: Any) -> ProtocolMessage:
        """Parse an OpenAI Chat Completions message."""
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


def _maybe_json(text: str) -> str | dict[str, Any]:
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
        message.content = cut_marker(message.content)
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
            call.parameters = cut_marker(call.parameters)
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


# ---- reducers ----------------------------------------------------------------------------


def append_protocol(
    left: list[dict[str, Any]] | None, right: ProtocolMessage | dict[str, Any] | list[Any] | None
) -> list[dict[str, Any]]:
    """Append protocol messages, validating each so masking and size limits always hold.

    Messages are stored as JSON-ready dicts: every checkpointer and the LangGraph API can
    serialize them, and a newer peer's unknown fields survive the round trip. An oversized
    message is cut on validation, so this reducer never raises on size.
    """
    items = right if isinstance(right, list) else [right] if right is not None else []
    return [*(left or []), *(_validated(item) for item in items)]


class ValidatedProtocol(dict[str, Any]):
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


def _validated(item: ProtocolMessage | dict[str, Any]) -> dict[str, Any]:
    if isinstance(item, ValidatedProtocol):
        return dict(item)
    message = item if isinstance(item, ProtocolMessage) else ProtocolMessage.model_validate(item)
    return message.model_dump(mode="json")


def merge_slots(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Merge newly filled slots into the task's slots; a ``None`` value clears a slot."""
    merged = dict(left or {})
    for key, value in (right or {}).items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


def append_results(
    left: list[ToolResult] | None, right: list[ToolResult] | None
) -> list[ToolResult]:
    """Collect tool result envelopes; parallel tool tasks may write in the same step."""
    return [*(left or []), *(right or [])]


def add_steps(left: int | None, right: int | None) -> int:
    """Count node steps in the current task, as a guard against runaway loops."""
    return (left or 0) + (right or 0)


NextStep = Literal[
    "continue", "clarify", "retry", "handoff", "confirm", "answered", "reread", "next"
]
"""What the graph does next; routers read it (``confirm``: on to the pending action;
``answered``: the turn is already answered; ``reread``: a typed answer to a pause was not a
yes or a no, so understanding reads it as a message; ``next``: on to the next queued task)."""


class ToolCall(TypedDict):
    """One planned call: the executor validates ``parameters`` before anything runs."""

    id: str
    """Derived from the task, tool and arguments, so a replay plans the same call."""
    name: str
    """The tool's name in the registry."""
    parameters: dict[str, Any]
    """Arguments as JSON; never trusted until validated."""
    task_id: NotRequired[str]
    """The task the call serves, when the step runs more than one (``TaskFrame`` batched)."""


class ToolResult(TypedDict, total=False):
    """The one result envelope every tool call returns, success or not."""

    tool: str
    """The tool that ran (or was refused)."""
    status: Literal["success", "failed", "rejected", "unknown", "pending"]
    """``unknown``: a side effect may have happened and could not be confirmed;
    ``pending``: awaiting a confirmation."""
    error_type: str | None
    """Why it did not succeed, as a machine-readable kind."""
    message: str | None
    """What went wrong, for operators; never shown to the user as is."""
    data: Any
    """The handler's result (masked), or details of the failure."""
    summary: str
    """One line for the audit log and a model's context."""
    request_id: str
    """The idempotency key of the call."""
    duplicated: bool
    """Answered from the idempotency record; the side effect did not run again."""
    retryable: bool
    """A transient failure that may succeed when tried again."""
    attempts: int
    """Attempts made by the executor."""
    latency_ms: float
    """Wall time of the call."""
    flags: list[str]
    """Warnings such as instruction-like text in the tool's output."""
    task_id: str
    """The task the call served, when one step served several (independent reads of one
    message); absent for the active task's own calls."""


class PendingConfirmation(TypedDict):
    """An action waiting for the person's yes or no, so a typed answer can reach it."""

    node: str
    """The node that asks and then acts (``tool`` or a sub-agent)."""
    intent: str
    """The task it belongs to."""
    question: str
    """What was asked, as shown in the conversation."""


class TaskFrame(TypedDict):
    """A task on the stack that is not the active one: queued, run alongside, or set aside."""

    intent: str
    """Its intent."""
    task_id: str
    """Its task id, kept so its slots and idempotency keys stay its own."""
    slots: dict[str, Any]
    """The slots gathered so far (vaulted values as tokens)."""
    status: Literal["queued", "batched", "suspended"]
    """``queued``: a message started it and it waits its turn; ``batched``: it runs in the
    active task's step (an independent read of the same message); ``suspended``: set aside
    when the user changed topic, resumed when asked for again."""
    after: NotRequired[str | None]
    """The task id of the task it waits for ("订好了通知我"); it is dropped if that fails."""
    missing_slots: NotRequired[list[str]]
    """What it was still waiting for, when set aside."""
    confidence: NotRequired[float]
    """How sure understanding was of it."""


class SlotChange(TypedDict):
    """A slot the user changed, as the next question states it ("金额改为 50 元")."""

    slot: str
    value: Any
    """The new value as a person may see it (a vaulted value masked)."""


class JobUpdate(TypedDict, total=False):
    """A background job's end, as the run its completion starts receives it (no user words)."""

    job_id: str
    kind: str
    state: str
    result: dict[str, Any] | None
    error: dict[str, Any] | None


class ConversationSummary(TypedDict):
    """What the state still says about turns moved out of it (see ``nodes.compact``)."""

    turns: int
    """How many turns have been moved to the transcript store."""
    text: str
    """One line per turn for the most recent of them, rule-based."""


class AgentState(TypedDict, total=False):
    """What moves through the graph. Nodes return only the keys they change."""

    messages: Annotated[list[AnyMessage], add_messages]
    """The recent conversation as LangChain messages: user, assistant, tool calls and results;
    older turns are in the transcript store and ``summary``."""
    protocol: Annotated[list[dict[str, Any]], append_protocol]
    """The thread's recent protocol messages, masked and size-checked; older ones are in the
    transcript store (``tools.transcript``)."""
    task_id: str
    """The current user request; kept while its slots are being filled across turns."""
    language: Literal["zh", "en"]
    """The language of the user's latest message, which replies follow."""
    intent: str
    """The recognized intent of the current task."""
    confidence: float
    """Calibrated confidence of ``intent``; below 0.6 routes to reflect-refine."""
    intent_evidence: list[str]
    """Which cues the recognizer matched, for audit and for reflect-refine."""
    intent_candidates: list[str]
    """Intents with some support when none is clear, for a pointed clarifying question."""
    slots: Annotated[dict[str, Any], merge_slots]
    """Parameters gathered for the current task, merged turn by turn."""
    missing_slots: list[str]
    """Required slots still unknown; non-empty ends the turn with a question."""
    offered: dict[str, Any] | None
    """Slot → the one value the last question offered for it (a yes takes it); the next
    message's reading clears it."""
    invalid_slots: dict[str, str]
    """Values the user gave that are not valid, with why, so the question can say so."""
    slot_offers: dict[str, str]
    """Missing slot → a sentence naming the user's own records it may be (their recent
    orders), which the question adds (``TaskSpec.suggest``)."""
    pending_tool_calls: list[ToolCall]
    """The calls the tool node will run, as ``{id, name, parameters}``."""
    tool_results: Annotated[list[ToolResult], append_results]
    """Result envelopes of the current task's tool calls, in order."""
    retry_count: int
    """Retries spent on the current task; bounded by the graph's retry limit."""
    step_count: Annotated[int, add_steps]
    """Node steps spent on the current task."""
    decision: NextStep
    """What to do next: continue, ask, retry the tool, hand over, or revise a confirmed call."""
    error: ToolResult | None
    """The last failure envelope, for routing and audit; never shown to the user."""
    task_stack: list[TaskFrame]
    """The other tasks of the conversation: queued from one message (run in order after the
    active one), batched with it in this step, or set aside when the user changed topic."""
    commands: list[CommandRecord]
    """What understanding made of the latest message (``understanding.commands``)."""
    corrected: list[SlotChange]
    """Slots the latest message changed; the next question says so, then it is cleared."""
    awaiting: PendingConfirmation | None
    """Set before a node that may pause for a confirmation; cleared when that node is done."""
    answer: Any
    """A typed message read as the answer to ``awaiting`` (a chat front-end sends "确认" as a
    new message, not as a resume); the acting node uses it instead of pausing."""
    job_event: JobUpdate | None
    """Set only by the input of a run a finished job starts: the graph then just tells the
    user (``nodes.job_update``) and leaves the current topic's state alone."""
    summary: ConversationSummary
    """A running summary of the turns no longer in ``messages``."""


class RouteView(TypedDict, total=False):
    """The part of ``AgentState`` the routers read; a conditional edge reads only these.

    LangGraph hands a router the state as it will be after the node's writes, applying them
    to copies of the channels the router's input names. Typed with the whole ``AgentState``,
    every edge ran the message and protocol reducers (protocol validation included) a second
    time. The keys and types are ``AgentState``'s, without the reducers a read does not need.
    """

    job_event: JobUpdate | None
    """See ``AgentState.job_event``."""
    intent: str
    """See ``AgentState.intent``."""
    confidence: float
    """See ``AgentState.confidence``."""
    decision: NextStep
    """See ``AgentState.decision``."""
    awaiting: PendingConfirmation | None
    """See ``AgentState.awaiting``."""
    missing_slots: list[str]
    """See ``AgentState.missing_slots``."""
    pending_tool_calls: list[ToolCall]
    """See ``AgentState.pending_tool_calls``."""
    error: ToolResult | None
    """See ``AgentState.error``."""
    retry_count: int
    """See ``AgentState.retry_count``."""
    step_count: int
    """See ``AgentState.step_count``."""


@dataclass(kw_only=True)
class Context:
    """Trusted runtime context, passed with ``context=``. Identity comes only from here."""

    user_id: str = "anonymous"
    """The authenticated user; tools check resource ownership against it."""
    user_role: str = "customer"
    """The caller's role, checked against each tool's permission."""
    model: str | None = None
    """Which understanding serves this run: ``rules`` or a model name; ``None`` follows
    the settings (``REACH_MODEL``). Never identity: the caller may choose it."""


__all__ = [
    "MAX_PROTOCOL_BYTES",
    "MAX_PROTOCOL_FIELD_BYTES",
    "REFUSE_OVERSIZE",
    "AgentState",
    "Context",
    "JobUpdate",
    "ConversationSummary",
    "NextStep",
    "PendingConfirmation",
    "Overwrite",
    "PayloadStore",
    "ProtocolMessage",
    "ProtocolMessageTooLarge",
    "ProtocolToolCall",
    "Role",
    "SlotChange",
    "TaskFrame",
    "ToolCall",
    "ToolResult",
    "ValidatedProtocol",
    "add_steps",
    "append_protocol",
    "append_results",
    "merge_slots",
]
