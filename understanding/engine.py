"""The engine: apply a reading's commands to the task stack, deterministically.

The generator says what the message does; the engine decides what that means for the
conversation's tasks, and never runs anything (the executor still decides what may run):

- ``Start`` commands become tasks in the order they were said; a task set aside earlier is
  resumed when asked for again, with its slots. Tasks that need nothing more (their slots
  are given, no confirmation, no sub-agent, no secret) run first, together in one step; the
  rest wait their turn in the queue ("next, …").
- ``SetSlot`` / ``CorrectSlot`` change the task they target: the one waiting for slots, the
  one pending confirmation (which then asks again with the new values, saying what changed),
  or a queued one. A correction never loses to a stale confirmation.
- At a pending confirmation, ``Confirm`` / ``Reject`` answer it; a new request starts and the
  pending action is queued behind it, unrun, to be asked again; anything else asks again.
- ``Cancel`` drops a task, ``ChitChat`` and ``HandOff`` are answered by the intent node.

The result is a ``Plan``; ``nodes.intent`` turns it into the state update.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from state import SlotChange, SlotValues, TaskFrame
from understanding.commands import (
    Cancel,
    ChitChat,
    Clarify,
    Command,
    CorrectSlot,
    HandOff,
    Reading,
    SetSlot,
    Start,
)
from understanding.view import UNKNOWN, DialogueView, TaskView

PlanKind = Literal[
    "tasks",
    "answer_pending",
    "correct_pending",
    "ask_pending_again",
    "chitchat",
    "cancel",
    "handoff",
]


class TaskRules(Protocol):
    """What the engine needs to know of the tasks: their slots, and which run alone."""

    def required(self, intent: str) -> tuple[str, ...]:
        """The slots the task's tool needs."""
        ...

    def runs_alone(self, intent: str) -> bool:
        """The task asks a confirmation, has a sub-agent or holds a secret: never batched."""
        ...

    def known(self, intent: str) -> bool:
        """The intent is a task of the scenarios served."""
        ...


@dataclass(frozen=True, slots=True)
class Active:
    """The task the turn goes on with."""

    intent: str
    task_id: str
    slots: Mapping[str, Any]
    """New values to merge (``fresh=False``), or the task's whole slots (``fresh``)."""
    invalid: Mapping[str, str] = field(default_factory=dict)
    fresh: bool = True
    """A task starting (or resumed): its step count, results and retries start anew."""
    confidence: float = 1.0
    evidence: tuple[str, ...] = ()
    candidates: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Plan:
    """What the message does to the tasks."""

    kind: PlanKind
    active: Active | None = None
    frames: tuple[TaskFrame, ...] = ()
    """The task stack after the message (the active task not in it)."""
    decision: Literal["approve", "reject"] | None = None
    """For ``answer_pending``."""
    corrected: tuple[SlotChange, ...] = ()
    """Slots changed on a task that had all it needed: the next question says so."""
    act: str | None = None
    """For ``chitchat`` (greet, thanks, bye) and ``cancel`` (never_mind, dropped)."""
    dropped: tuple[str, ...] = ()
    """Intents cancelled by the message."""
    handoff: HandOff | None = None
    keeps_pending: bool = False
    """A new request came while an action waited: it is queued behind, unrun."""


IDLE_YES = "idle_yes"
"""The act of a yes when nothing waits for one ("confirm" again after the refund went through)."""

NewId = Callable[[int], str]
"""The task id of the ``n``-th task this message starts (stable across replays)."""


def plan(
    reading: Reading,
    view: DialogueView,
    frames: Sequence[TaskFrame],
    rules: TaskRules,
    new_id: NewId,
    *,
    threshold: float = 0.6,
) -> Plan:
    """Apply ``reading`` to the conversation ``view`` (its stack ``frames``)."""
    commands = [c for c in reading.commands if not _stray(c, rules)]
    stack = [f for f in frames if f["status"] != "batched"]  # a step's companions are done
    handoff = next((c for c in commands if isinstance(c, HandOff)), None)
    if handoff is not None:
        return Plan("handoff", frames=tuple(stack), handoff=handoff)
    if view.pending is not None:
        return _at_pending(commands, view, stack, rules, new_id, threshold)
    starts = [c for c in commands if isinstance(c, Start)]
    fills = [c for c in commands if isinstance(c, SetSlot | CorrectSlot)]
    cancels = [c for c in commands if isinstance(c, Cancel)]
    if cancels:
        cancelled = _cancel(cancels, view, stack)
        if cancelled is not None and not starts:
            return cancelled
        if cancelled is not None:
            view, stack = _without_waiting(view), list(cancelled.frames)
    if not starts and not fills:
        chat = next((c for c in commands if isinstance(c, ChitChat)), None)
        if chat is not None and not (view.waiting and chat.act in ("greet", "thanks")):
            return Plan("chitchat", frames=tuple(stack), act=chat.act)
        if view.waiting is None and any(c.kind == "confirm" for c in commands):
            # a yes with nothing waiting for one: said so (with what was done), not a menu
            return Plan("chitchat", frames=tuple(stack), act=IDLE_YES)
    return _tasks(starts, fills, commands, view, stack, rules, new_id, threshold)


def _stray(command: Command, rules: TaskRules) -> bool:
    """A command naming a task the scenarios do not serve (a model's slip): ignored."""
    intent = getattr(command, "intent", None)
    return isinstance(command, Start) and not rules.known(str(intent))


def _at_pending(
    commands: list[Command],
    view: DialogueView,
    stack: list[TaskFrame],
    rules: TaskRules,
    new_id: NewId,
    threshold: float,
) -> Plan:
    pending = view.pending
    assert pending is not None
    corrections = [c for c in commands if isinstance(c, CorrectSlot | SetSlot)]
    if corrections:
        slots: SlotValues = {}
        invalid: dict[str, str] = {}
        for command in corrections:
            slots.update(command.slots)
            invalid.update(command.invalid)
        for name in invalid:  # the new value cannot be used: the one held goes, it is asked
            if name not in slots and name in pending.slots:
                slots[name] = None
        changed = tuple(
            SlotChange(slot=name, value=value)
            for name, value in slots.items()
            if value is not None and (pending.slots.get(name) != value or name not in pending.slots)
        )
        active = Active(
            pending.intent,
            pending.task_id,
            slots,
            invalid,
            fresh=False,
            confidence=max(c.confidence for c in corrections),
            evidence=tuple(e for c in corrections for e in c.evidence),
        )
        return Plan("correct_pending", active=active, frames=tuple(stack), corrected=changed)
    decisions = [c.kind for c in commands if c.kind in ("confirm", "reject", "cancel")]
    starts = [c for c in commands if isinstance(c, Start) and c.confidence >= threshold]
    if decisions:
        decision: Literal["approve", "reject"] = (
            "approve" if decisions[0] == "confirm" else "reject"
        )
        queued = [_frame(s, new_id(n + 1), "queued") for n, s in enumerate(starts)]
        return Plan("answer_pending", frames=(*stack, *queued), decision=decision)
    if starts:
        kept: TaskFrame = {
            "intent": pending.intent,
            "task_id": pending.task_id,
            "slots": dict(pending.stored),
            "status": "queued",
        }
        planned = _tasks(starts, [], commands, DialogueView(), stack, rules, new_id, threshold)
        return Plan(
            "tasks",
            active=planned.active,
            frames=(*planned.frames, kept),
            keeps_pending=True,
        )
    return Plan("ask_pending_again", frames=tuple(stack))


def _cancel(cancels: list[Cancel], view: DialogueView, stack: list[TaskFrame]) -> Plan | None:
    """Drop what the cancels name: the waiting task, or a queued one ("skip the weather")."""
    dropped: list[str] = []
    kept = list(stack)
    for cancel in cancels:
        if cancel.intent is None or (view.waiting and cancel.intent == view.waiting.intent):
            if view.waiting is not None:
                dropped.append(view.waiting.intent)
            continue
        for frame in kept:
            if frame["intent"] == cancel.intent and frame["status"] == "queued":
                kept.remove(frame)
                dropped.append(frame["intent"])
                break
    if not dropped:
        return Plan("cancel", frames=tuple(kept), act="never_mind")
    return Plan("cancel", frames=tuple(kept), act="dropped", dropped=tuple(dropped))


def _without_waiting(view: DialogueView) -> DialogueView:
    return DialogueView(
        queued=view.queued, suspended=view.suspended, last=view.last, language=view.language
    )


@dataclass
class _Entry:
    intent: str
    task_id: str
    slots: SlotValues
    invalid: dict[str, str]
    fresh: bool
    confidence: float
    evidence: tuple[str, ...]
    after: str | None = None
    candidates: tuple[str, ...] = ()


def _tasks(
    starts: list[Start],
    fills: list[SetSlot | CorrectSlot],
    commands: list[Command],
    view: DialogueView,
    stack: list[TaskFrame],
    rules: TaskRules,
    new_id: NewId,
    threshold: float,
) -> Plan:
    entries: list[_Entry] = []
    waiting = view.waiting
    corrected: list[SlotChange] = []
    if waiting is not None and (
        fills or not starts or any(s.intent == waiting.intent for s in starts)
    ):
        entries.append(_continue(waiting, fills, commands))
        corrected = [
            SlotChange(slot=k, value=v)
            for c in fills
            if isinstance(c, CorrectSlot)
            for k, v in c.slots.items()
        ]
    elif waiting is not None:  # a new request: the unfinished task is set aside to come back to
        stack.append(
            {
                "intent": waiting.intent,
                "task_id": waiting.task_id,
                "slots": dict(waiting.stored),
                "status": "suspended",
                "missing_slots": list(waiting.missing),
            }
        )
    count = 0
    for start in starts:
        if (
            entries
            and entries[0].intent == start.intent
            and waiting is not None
            and not entries[0].fresh
            and start is starts[0]
            and not fills
        ):
            entries[0].slots.update(start.slots)
            entries[0].invalid.update(start.invalid)
            entries[0].confidence = max(entries[0].confidence, start.confidence)
            continue
        if entries and start.confidence < threshold:
            continue  # a second request only when it is clear; the first may be refined
        resumed = _resumed(stack, start)
        if resumed is not None:
            stack.remove(resumed)
            slots = {**resumed["slots"], **start.slots}
            entry = _Entry(
                start.intent,
                resumed["task_id"],
                slots,
                dict(start.invalid),
                True,
                max(start.confidence, threshold),
                start.evidence,
            )
        else:
            entry = _Entry(
                start.intent,
                new_id(count),
                dict(start.slots),
                dict(start.invalid),
                True,
                start.confidence,
                start.evidence,
            )
            count += 1
        if start.after:
            prior = next((e for e in entries if e.intent == start.after), None)
            entry.after = prior.task_id if prior is not None else None
        entries.append(entry)
    if not entries:
        unclear = next((c for c in commands if isinstance(c, Clarify)), None)
        candidates = unclear.intents if unclear is not None else _candidates(commands)
        confidence = min((c.confidence for c in commands), default=0.0)
        entries.append(
            _Entry(
                UNKNOWN,
                new_id(0),
                {},
                {},
                True,
                confidence,
                tuple(e for c in commands for e in c.evidence),
                None,
                candidates,
            )
        )
    ordered = _ordered(entries, waiting, rules)
    active, rest = ordered[0], ordered[1:]
    ready = _ready(active, waiting, rules)
    batched = [e for e in rest if ready and _ready(e, None, rules)]
    queued = [e for e in rest if e not in batched]
    frames = [
        *stack,
        *(_entry_frame(e, "batched") for e in batched),
        *(_entry_frame(e, "queued") for e in queued),
    ]
    return Plan(
        "tasks",
        active=Active(
            active.intent,
            active.task_id,
            active.slots,
            active.invalid,
            fresh=active.fresh,
            confidence=active.confidence,
            evidence=active.evidence,
            candidates=active.candidates,
        ),
        frames=tuple(frames),
        corrected=tuple(corrected) if not active.fresh else (),
    )


def _continue(
    waiting: TaskView, fills: list[SetSlot | CorrectSlot], commands: list[Command]
) -> _Entry:
    slots: SlotValues = {}
    invalid: dict[str, str] = {}
    for command in fills:
        slots.update(command.slots)
        invalid.update(command.invalid)
    own: list[Command] = list(fills) or [
        c for c in commands if c.kind in ("cannot_tell", "chitchat", "start")
    ]
    confidence = max((c.confidence for c in own), default=0.0)
    evidence = tuple(e for c in own for e in c.evidence)
    return _Entry(waiting.intent, waiting.task_id, slots, invalid, False, confidence, evidence)


def _resumed(stack: list[TaskFrame], start: Start) -> TaskFrame | None:
    """The task set aside (or queued) earlier that ``start`` asks for again, the latest first."""
    if start.follows_up:
        return None
    for frame in reversed(stack):
        if frame["intent"] == start.intent and frame["status"] == "suspended":
            return frame
    return None


def _ready(entry: _Entry, waiting: TaskView | None, rules: TaskRules) -> bool:
    """Runs without asking anything: its slots are given and it never waits for a yes."""
    if entry.intent == UNKNOWN or entry.after or entry.invalid or rules.runs_alone(entry.intent):
        return False
    known = set(entry.slots)
    if waiting is not None and entry.task_id == waiting.task_id:
        known |= set(waiting.slots)
    return all(name in known for name in rules.required(entry.intent))


def _ordered(entries: list[_Entry], waiting: TaskView | None, rules: TaskRules) -> list[_Entry]:
    """The tasks that need nothing more run first (together); the rest in the order said."""
    if len(entries) < 2:
        return entries
    ready = [e for e in entries if _ready(e, waiting, rules)]
    return [*ready, *(e for e in entries if e not in ready)]


def _entry_frame(entry: _Entry, status: Literal["queued", "batched"]) -> TaskFrame:
    frame: TaskFrame = {
        "intent": entry.intent,
        "task_id": entry.task_id,
        "slots": dict(entry.slots),
        "status": status,
    }
    if entry.after:
        frame["after"] = entry.after
    return frame


def _frame(start: Start, task_id: str, status: Literal["queued", "batched"]) -> TaskFrame:
    return {
        "intent": start.intent,
        "task_id": task_id,
        "slots": dict(start.slots),
        "status": status,
    }


def _candidates(commands: list[Command]) -> tuple[str, ...]:
    for command in commands:
        found = getattr(command, "candidates", None)
        if found:
            return tuple(found)
    return ()


def next_frame(frames: Sequence[TaskFrame]) -> tuple[TaskFrame | None, list[TaskFrame]]:
    """Return the queued task that runs next, and the stack without it."""
    for index, frame in enumerate(frames):
        if frame["status"] == "queued":
            return frame, [*frames[:index], *frames[index + 1 :]]
    return None, list(frames)


__all__ = ["IDLE_YES", "Active", "NewId", "Plan", "PlanKind", "TaskRules", "next_frame", "plan"]
