"""The command language: what one user message does to the conversation.

Rasa CALM's dialogue understanding is the anchor: a generator reads the message with the
task stack and the pending confirmation, and returns a short list of commands; a
deterministic engine (``understanding.engine``) applies them, and the action executor still
decides what may run. Rules and a model are two generators of this one language.

A message may carry several commands ("where is OD-…, and check the weather in Beijing" is
two ``Start``), and each carries its confidence and its evidence (the words it came from). A
command never runs anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from state import CommandKind, CommandRecord

Courtesy = Literal["greet", "thanks", "bye"]
HandoffReason = Literal["user_request", "complaint", "not_served"]
SlotValues: TypeAlias = Mapping[str, Any]
"""Slot name → value, as the task's tool takes it (``amount_cents``: cents)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Start:
    """Start a task, with the slots the message gave for it."""

    intent: str
    """The task's intent."""
    slots: SlotValues = field(default_factory=dict)
    """What the message said for it; the rest is asked for."""
    invalid: Mapping[str, str] = field(default_factory=dict)
    """Slot → ``"<value>: <reason>"`` for a value given that cannot be used."""
    after: str | None = None
    """The intent of an earlier command of this message it waits for ("once booked, tell me")."""
    follows_up: bool = False
    """Asks the last finished request again with what the message changes ("and Shanghai?")."""
    confidence: float = 1.0
    evidence: tuple[str, ...] = ()
    kind: Literal["start"] = "start"


@dataclass(frozen=True, slots=True, kw_only=True)
class SetSlot:
    """Answer a task's open question: fill slots it is waiting for."""

    slots: SlotValues
    invalid: Mapping[str, str] = field(default_factory=dict)
    intent: str | None = None
    """The task it fills; ``None``: the task waiting for slots."""
    confidence: float = 1.0
    evidence: tuple[str, ...] = ()
    kind: Literal["set"] = "set"


@dataclass(frozen=True, slots=True, kw_only=True)
class CorrectSlot:
    """Change slots the user gave before, in any task, at any time (also at a confirmation)."""

    slots: SlotValues
    invalid: Mapping[str, str] = field(default_factory=dict)
    intent: str | None = None
    """The task it corrects; ``None``: the task pending confirmation, else the active one."""
    confidence: float = 1.0
    evidence: tuple[str, ...] = ()
    kind: Literal["correct"] = "correct"


@dataclass(frozen=True, slots=True, kw_only=True)
class Cancel:
    """Drop a task ("never mind", "no need to check the weather")."""

    intent: str | None = None
    """The task to drop; ``None``: the task waiting for slots."""
    confidence: float = 1.0
    evidence: tuple[str, ...] = ()
    kind: Literal["cancel"] = "cancel"


@dataclass(frozen=True, slots=True, kw_only=True)
class Confirm:
    """Yes to the pending action."""

    confidence: float = 1.0
    evidence: tuple[str, ...] = ()
    kind: Literal["confirm"] = "confirm"


@dataclass(frozen=True, slots=True, kw_only=True)
class Reject:
    """No to the pending action: nothing of it runs."""

    confidence: float = 1.0
    evidence: tuple[str, ...] = ()
    kind: Literal["reject"] = "reject"


@dataclass(frozen=True, slots=True, kw_only=True)
class Clarify:
    """The message could be any of these tasks: ask which."""

    intents: tuple[str, ...]
    confidence: float = 0.0
    evidence: tuple[str, ...] = ()
    kind: Literal["clarify"] = "clarify"


@dataclass(frozen=True, slots=True, kw_only=True)
class ChitChat:
    """A courtesy: hello, thanks, goodbye."""

    act: Courtesy
    confidence: float = 1.0
    evidence: tuple[str, ...] = ()
    kind: Literal["chitchat"] = "chitchat"


@dataclass(frozen=True, slots=True, kw_only=True)
class HandOff:
    """A person takes over: asked for, a complaint, or a request no task here serves."""

    reason: HandoffReason
    request: str | None = None
    """For ``not_served``: the scenario's name of the request (``Beyond.name``)."""
    confidence: float = 1.0
    evidence: tuple[str, ...] = ()
    kind: Literal["handoff"] = "handoff"


@dataclass(frozen=True, slots=True, kw_only=True)
class CannotTell:
    """Neither rules nor model can say what the message asks for."""

    candidates: tuple[str, ...] = ()
    """Intents with some support, best first, for a pointed question."""
    confidence: float = 0.0
    evidence: tuple[str, ...] = ()
    kind: Literal["cannot_tell"] = "cannot_tell"


Command: TypeAlias = (
    Start
    | SetSlot
    | CorrectSlot
    | Cancel
    | Confirm
    | Reject
    | Clarify
    | ChitChat
    | HandOff
    | CannotTell
)

Source = Literal["rules", "model"]


@dataclass(frozen=True, slots=True)
class Reading:
    """What a generator made of one message."""

    commands: tuple[Command, ...]
    """In the order they were said."""
    language: Literal["zh", "en"] | None
    """The message's language; ``None`` for a bare code or number."""
    source: Source = "rules"
    """Who produced the commands (a model's failure is answered by the rules)."""
    error: str | None = None
    """Why a configured model's answer was not used; the protocol records it."""
    model_calls: int = 0
    """Model requests made for this reading (the budget is one a turn)."""
    prompt_tokens: int | None = None
    """What the model request cost, when the endpoint reported it."""
    refused: Mapping[str, str] = field(default_factory=dict)
    """Slot values the model gave that the message does not support (never used)."""
    unsure: bool = False
    """The reader's own doubt: two tasks nearly as likely, or a clause that looks like a
    request it placed nowhere. Mixed mode asks the model then, and only then."""

    def of_kind(self, *kinds: CommandKind) -> list[Command]:
        """Return the commands of the given kinds, in order."""
        return [command for command in self.commands if command.kind in kinds]

    @property
    def confidence(self) -> float:
        """How sure the reading is: its least sure task command, else its first command."""
        tasks = [c.confidence for c in self.commands if c.kind in _TASK_KINDS]
        if tasks:
            return min(tasks)
        return self.commands[0].confidence if self.commands else 0.0


_TASK_KINDS = frozenset({"start", "set", "correct"})


def record(command: Command, *, shown: Mapping[str, Any] | None = None) -> CommandRecord:
    """Return ``command`` as JSON; ``shown`` replaces slot values a record must not hold."""
    out: CommandRecord = {
        "kind": command.kind,
        "confidence": round(float(command.confidence), 3),
        "evidence": list(command.evidence)[:6],
    }
    if isinstance(command, Start | SetSlot | CorrectSlot | Cancel):
        out["intent"] = command.intent
    if isinstance(command, Start | SetSlot | CorrectSlot):
        out["slots"] = {k: (shown or {}).get(k, v) for k, v in command.slots.items()}
    if isinstance(command, Start) and command.after:
        out["after"] = command.after
    if isinstance(command, Clarify):
        out["intents"] = list(command.intents)
    if isinstance(command, CannotTell) and command.candidates:
        out["intents"] = list(command.candidates)
    if isinstance(command, ChitChat):
        out["act"] = command.act
    if isinstance(command, HandOff):
        out["reason"] = command.reason
        out["request"] = command.request
    return out


def records(
    commands: Sequence[Command], *, shown: Mapping[str, Any] | None = None
) -> list[CommandRecord]:
    """Return every command as JSON."""
    return [record(command, shown=shown) for command in commands]


__all__ = [
    "CannotTell",
    "Cancel",
    "ChitChat",
    "Clarify",
    "Command",
    "CommandKind",
    "CommandRecord",
    "Confirm",
    "CorrectSlot",
    "Courtesy",
    "HandOff",
    "HandoffReason",
    "Reading",
    "Reject",
    "SetSlot",
    "SlotValues",
    "Source",
    "Start",
    "record",
    "records",
]
