"""The records the audit log holds: one TypedDict per kind, as the writers build them.

``ToolCallRecord`` is the executor's record of a call (``tools.executor.prepare``);
``LifecycleRecord`` a tool's status change (``tools.registry.lifecycle``); the trace records
(``TurnStartRecord`` … ``NodeRecord``) are ``observability.trace_callbacks.TraceRecorder``'s,
each a ``TraceHeader`` and the fields of its kind. ``AuditRecord`` is any of them.

A record read back from the file or the stream is not one of these: another version or
another process may have written it, so readers take it as ``config.limits.JsonObject``.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypeAlias, TypedDict


class ToolCallRecord(TypedDict):
    """One tool call as the executor saw it (``kind`` is added by ``AuditLog`` when absent)."""

    ts: float
    kind: NotRequired[Literal["tool_call"]]
    session_id: str
    task_id: str | None
    user_id: str
    user_role: str
    tool: str
    arguments: Any
    """The call's arguments, masked, as the model or a person wrote them (free-form JSON,
    cut to ``MAX_AUDIT_ARGUMENT_BYTES``)."""
    status: str
    error_type: str | None
    message: str | None
    summary: str
    latency_ms: float
    attempts: int
    request_id: str
    duplicated: bool
    flags: list[str]


class LifecycleRecord(TypedDict):
    """A tool's (or one version's) status changed (``ToolLifecycle.set_status``)."""

    ts: float
    kind: NotRequired[str]
    event: Literal["tool_lifecycle"]
    tool_name: str
    version: str | None
    change: str
    before: str
    sunset: str | None
    actor: str
    reason: str


RunStatus = Literal["ok", "interrupted", "error"]
"""How a turn or a node ended."""


class EvalRecord(TypedDict):
    """An evaluation's intent accuracy, for ``reach stats`` and ``/metrics`` (``reach eval``)."""

    ts: NotRequired[float]
    kind: Literal["eval"]
    intent_accuracy: float
    mode: str
    fault_rate: float
    trials: int
    cases: int


TraceKind = Literal["turn", "intent", "arguments", "execution", "interrupt", "answer", "node"]


class TraceHeader(TypedDict):
    """What every trace record carries: when, which kind, and whose turn."""

    ts: float
    kind: TraceKind
    session_id: str
    task_id: str | None
    parent_task_id: str | None
    turn_id: str
    request_id: NotRequired[str | list[str]]
    """The call (or calls) an ``execution`` record is about."""


class TurnStartRecord(TraceHeader):
    """A turn began: the user's text, or the value it resumes with."""

    event: Literal["start"]
    graph: str
    text: NotRequired[str]
    resume: NotRequired[Any]
    """A resume value as the client sent it (a decision, edited arguments): free-form."""


class TurnEndRecord(TraceHeader):
    """A turn ended: how, and through which nodes."""

    event: Literal["end"]
    status: RunStatus
    error: str | None
    nodes: list[str]
    latency_ms: float


class IntentRecord(TraceHeader):
    """What understanding made of the text."""

    node: str
    text: str | None
    intent: str | None
    confidence: float | None
    evidence: list[str] | None
    candidates: list[str] | None
    decision: str | None
    """The next step the node chose (``state.NextStep``)."""
    model_error: NotRequired[str]
    """Why the turn's model call gave nothing usable (a timeout, an error, bad output)."""


class ProposedCall(TypedDict):
    """A call slot filling planned, before the executor validates it."""

    id: str | None
    tool: str | None
    parameters: Any
    """As the rules or the model wrote them: free-form until the card's model validates."""


class ArgumentsRecord(TraceHeader):
    """What slot filling proposed: slots, what is missing or invalid, the calls planned."""

    node: str
    slots: dict[str, object] | None
    """Slot values: each scenario's own (``state.SlotValues``, a layer above)."""
    missing: list[str]
    invalid: dict[str, str]
    proposed: list[ProposedCall]
    planner: str | None


class ExecutedCall(TypedDict):
    """One call's outcome in an ``execution`` record: its envelope without the data."""

    tool: str | None
    status: str | None
    error_type: str | None
    message: str | None
    request_id: str | None
    attempts: int | None
    latency_ms: float | None
    duplicated: bool | None
    retryable: bool | None
    flags: list[str] | None
    summary: str | None
    shape: Any
    """The result's keys and types, never its values (``trace_values.shape_of``)."""
    rolled_back: bool


class ExecutionRecord(TraceHeader):
    """The calls a node ran, and whether they ran side by side."""

    node: str
    calls: list[ExecutedCall]
    parallel: bool


class InterruptRecord(TraceHeader):
    """The confirmation a node asked for (masked when written)."""

    node: str
    values: list[Any]
    """The interrupts' payloads, as the node wrote them."""


class AnswerRecord(TraceHeader):
    """The reply the user was given."""

    node: str
    text: str


class NodeRecord(TraceHeader):
    """A node ran: how long, how it ended, the protocol messages it wrote."""

    node: str
    namespace: str
    nested: bool
    status: RunStatus
    latency_ms: float
    protocol_sizes: list[int]


TraceRecord: TypeAlias = (
    TurnStartRecord
    | TurnEndRecord
    | IntentRecord
    | ArgumentsRecord
    | ExecutionRecord
    | InterruptRecord
    | AnswerRecord
    | NodeRecord
)
"""Any trace record ``TraceRecorder`` writes."""

AuditRecord: TypeAlias = ToolCallRecord | LifecycleRecord | EvalRecord | TraceRecord
"""Any record written to the audit log."""


__all__ = [
    "AnswerRecord",
    "ArgumentsRecord",
    "AuditRecord",
    "EvalRecord",
    "ExecutedCall",
    "ExecutionRecord",
    "IntentRecord",
    "InterruptRecord",
    "LifecycleRecord",
    "NodeRecord",
    "ProposedCall",
    "RunStatus",
    "ToolCallRecord",
    "TraceHeader",
    "TraceKind",
    "TraceRecord",
    "TurnEndRecord",
    "TurnStartRecord",
]
