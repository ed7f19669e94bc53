"""What a command generator is shown of the conversation: the task stack, nothing more.

The generator needs the task waiting for slots (and what it still misses), the tasks queued
or set aside, the action pending confirmation with the values it would run on, and the last
finished request (for "what about Shanghai?"). Secrets stay out: a vaulted slot shows as
known, never as its value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from state import AgentState, SlotValues, TaskFrame

UNKNOWN = "UNKNOWN"
MASKED_SUFFIX = "_masked"
"""``<slot>_masked`` holds what a person may be shown of a vaulted slot."""


@dataclass(frozen=True, slots=True)
class TaskView:
    """One task as a generator sees it."""

    intent: str
    slots: Mapping[str, Any] = field(default_factory=dict)
    """Known values; a vaulted slot holds its masked form."""
    missing: tuple[str, ...] = ()
    """Required slots still unknown."""
    task_id: str = ""
    stored: Mapping[str, Any] = field(default_factory=dict)
    """The slots as the state holds them (vault tokens, masked forms): for the engine, which
    moves a task on the stack; never shown to a generator."""
    offered: Mapping[str, Any] = field(default_factory=dict)
    """Slot → the one value the last question offered for it (a plain yes takes it)."""


@dataclass(frozen=True, slots=True)
class DialogueView:
    """The conversation's state as far as understanding one message needs it."""

    waiting: TaskView | None = None
    """The active task while it waits for slots."""
    pending: TaskView | None = None
    """The task whose action waits for a yes or no."""
    queued: tuple[TaskView, ...] = ()
    """Tasks a message started that wait their turn."""
    suspended: tuple[TaskView, ...] = ()
    """Tasks set aside when the user changed topic, the latest last."""
    last: TaskView | None = None
    """The request answered last, for a follow-up ("what about Shanghai?")."""
    language: Literal["zh", "en"] = "zh"
    recent: tuple[tuple[str, str], ...] = ()
    """The latest turns as (``user`` or ``agent``, text), oldest first, the current message
    not included: what a generator without slot rules reads values from (a pack's ids in a
    result said before). The rule generator ignores it."""

    @property
    def idle(self) -> bool:
        """Nothing waits: no slot question, no confirmation."""
        return self.waiting is None and self.pending is None

    def known(self, intent: str | None) -> Mapping[str, Any]:
        """Return the known slots of the task of ``intent`` (waiting, pending or queued)."""
        for task in (self.pending, self.waiting, *self.queued):
            if task is not None and (intent is None or task.intent == intent):
                return task.slots
        return {}


def shown_slots(slots: Mapping[str, Any]) -> SlotValues:
    """Return ``slots`` as a generator may see them: a vaulted value as its masked form."""
    out: SlotValues = {}
    for name, value in slots.items():
        if name.endswith(MASKED_SUFFIX):
            continue
        masked = slots.get(f"{name}{MASKED_SUFFIX}")
        out[name] = masked if masked is not None else value
    return out


def view_of(state: AgentState, *, required: Mapping[str, tuple[str, ...]]) -> DialogueView:
    """Build the view from the graph state; ``required`` maps intents to their slots."""
    intent = state.get("intent") or UNKNOWN
    slots = shown_slots(state.get("slots") or {})
    missing = tuple(state.get("missing_slots") or ())
    awaiting = state.get("awaiting")
    stored = dict(state.get("slots") or {})
    active = TaskView(
        intent,
        slots,
        missing,
        state.get("task_id", ""),
        offered=state.get("offered") or {},
        stored=stored,
    )
    waiting = active if missing and intent in required and not awaiting else None
    pending = None
    if awaiting:
        pending = TaskView(awaiting["intent"], slots, (), state.get("task_id", ""), stored)
    frames: list[TaskFrame] = list(state.get("task_stack") or [])
    queued = tuple(_frame_view(f, required) for f in frames if f["status"] == "queued")
    suspended = tuple(_frame_view(f, required) for f in frames if f["status"] == "suspended")
    last = active if intent in required and not missing and not awaiting else None
    language = state.get("language") or "zh"
    return DialogueView(
        recent=recent_turns(state),
        waiting=waiting,
        pending=pending,
        queued=queued,
        suspended=suspended,
        last=last,
        language=language,
    )


RECENT_TURNS = 16
"""Messages ``DialogueView.recent`` keeps (user and agent texts, tool calls left out)."""


def recent_turns(state: AgentState, limit: int = RECENT_TURNS) -> tuple[tuple[str, str], ...]:
    """The latest user and agent texts before the current message, oldest first."""
    messages = list(state.get("messages") or [])
    if messages and messages[-1].type == "human":
        messages = messages[:-1]  # the message being read is given apart
    out: list[tuple[str, str]] = []
    for message in reversed(messages):
        if len(out) >= limit:
            break
        content = message.content if isinstance(message.content, str) else ""
        if message.type in ("human", "ai") and content.strip():
            out.append(("user" if message.type == "human" else "agent", content))
    return tuple(reversed(out))


def _frame_view(frame: TaskFrame, required: Mapping[str, tuple[str, ...]]) -> TaskView:
    slots = shown_slots(frame.get("slots") or {})
    missing = tuple(n for n in required.get(frame["intent"], ()) if n not in frame["slots"])
    return TaskView(frame["intent"], slots, missing, frame["task_id"], dict(frame["slots"]))


__all__ = ["DialogueView", "TaskView", "recent_turns", "shown_slots", "view_of"]
