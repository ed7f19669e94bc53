"""The typed state, its reducers, the protocol message's reducer and the trusted context.

Everything the state holds is typed here or next to the code that owns it, and re-exported:
the protocol message (``protocol.message``), a planned call and the result envelope
(``tools.executor.envelope``). The graph has one state style: a ``TypedDict`` with a reducer
on every key that more than one writer touches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import (
    Annotated,
    Any,
    Literal,
    NotRequired,
    TypeAlias,
    TypedDict,
)

from langchain_core.messages import (
    AnyMessage,
)
from langgraph.graph.message import add_messages
from langgraph.types import Overwrite

from jobs.store import JobError, JobResult
from protocol.message import (
    MAX_PROTOCOL_BYTES,
    MAX_PROTOCOL_FIELD_BYTES,
    REFUSE_OVERSIZE,
    PayloadStore,
    ProtocolMessage,
    ProtocolMessageTooLarge,
    ProtocolRecord,
    ProtocolToolCall,
    Role,
    ValidatedProtocol,
)
from tools.executor.envelope import ToolCall, ToolResult

# ---- reducers ----------------------------------------------------------------------------


def append_protocol(
    left: list[ProtocolRecord] | None, right: ProtocolMessage | ProtocolRecord | list[Any] | None
) -> list[ProtocolRecord]:
    """Append protocol messages, validating each so masking and size limits always hold.

    Messages are stored as JSON-ready dicts: every checkpointer and the LangGraph API can
    serialize them, and a newer peer's unknown fields survive the round trip. An oversized
    message is cut on validation, so this reducer never raises on size.
    """
    items = right if isinstance(right, list) else [right] if right is not None else []
    return [*(left or []), *(_validated(item) for item in items)]


def _validated(item: ProtocolMessage | ProtocolRecord) -> ProtocolRecord:
    if isinstance(item, ValidatedProtocol):
        return dict(item)
    message = item if isinstance(item, ProtocolMessage) else ProtocolMessage.model_validate(item)
    return message.model_dump(mode="json")


def merge_slots(left: SlotValues | None, right: SlotValues | None) -> SlotValues:
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


StateUpdate: TypeAlias = dict[str, Any]
"""What a node returns: only the keys it changes, each in the form its reducer takes (one
protocol message for ``protocol``, new envelopes for ``tool_results``), which is not the
key's stored type, so ``AgentState`` cannot type it; the graph's reducers fold it in."""

SlotValues: TypeAlias = dict[str, Any]
"""Slot name → value, as the task's tool takes it (``amount_cents``: an int of cents, a date
as ISO text, a vaulted value as its token): each scenario's slots are its own."""


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
    slots: SlotValues
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
    result: JobResult | None
    error: JobError | None


class ConversationSummary(TypedDict):
    """What the state still says about turns moved out of it (see ``nodes.compact``)."""

    turns: int
    """How many turns have been moved to the transcript store."""
    text: str
    """One line per turn for the most recent of them, rule-based."""


CommandKind = Literal[
    "start",
    "set",
    "correct",
    "cancel",
    "confirm",
    "reject",
    "clarify",
    "chitchat",
    "handoff",
    "cannot_tell",
]
"""What a command does; the command language is ``understanding.commands``."""


class CommandRecord(TypedDict):
    """A command as the state, the protocol and the trace keep it (JSON)."""

    kind: CommandKind
    confidence: float
    evidence: list[str]
    intent: NotRequired[str | None]
    slots: NotRequired[SlotValues]
    after: NotRequired[str | None]
    intents: NotRequired[list[str]]
    act: NotRequired[str]
    reason: NotRequired[str]
    request: NotRequired[str | None]


class AgentState(TypedDict, total=False):
    """What moves through the graph. Nodes return only the keys they change."""

    messages: Annotated[list[AnyMessage], add_messages]
    """The recent conversation as LangChain messages: user, assistant, tool calls and results;
    older turns are in the transcript store and ``summary``."""
    protocol: Annotated[list[ProtocolRecord], append_protocol]
    """The thread's recent protocol messages, masked and size-checked; older ones are in the
    transcript store (``storage.transcript``)."""
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
    slots: Annotated[SlotValues, merge_slots]
    """Parameters gathered for the current task, merged turn by turn."""
    missing_slots: list[str]
    """Required slots still unknown; non-empty ends the turn with a question."""
    offered: SlotValues | None
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
    "ProtocolRecord",
    "SlotValues",
    "StateUpdate",
    "CommandKind",
    "CommandRecord",
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
