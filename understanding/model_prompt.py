"""What the model generator is shown: the tasks it may start, and the situation in words.

``task_options`` reads the scenarios into the ``TaskOption`` list the prompt and the answer's
schema are built from (each task with its slots, described in one line); ``situation`` says
what the conversation waits for (a task missing slots, an action pending confirmation) in the
words the model reads. Used by ``understanding.model``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from contract.scenario import ScenarioSet
from understanding.view import DialogueView, TaskView

DESCRIPTION_CHARS = 60


@dataclass(frozen=True, slots=True)
class TaskOption:
    """One task as the model is told of it."""

    intent: str
    label: str
    """Its Chinese name, then its English one: "… / check an order"."""
    slots: Mapping[str, str]
    """Slot → a few words on what it is."""
    flags: Mapping[str, Any]
    """On-request slots → the value a raised flag stands for (``notify`` → ``sms``)."""
    sensitive: frozenset[str]


def task_options(catalog: ScenarioSet) -> list[TaskOption]:
    """Describe every task for the model, from the scenario contract and the tool cards."""
    cards = catalog.cards_by_name()
    out: list[TaskOption] = []
    for intent, task in catalog.tasks.items():
        card = cards.get(task.tool)
        slots = {name: _described(card, name) for name in task.required_slots}
        flags: dict[str, object] = {}  # flag → the value it sets (a channel's default)
        for slot, tool in task.on_request:
            extra = cards.get(tool)
            channel = extra.parameters.model_fields.get("channel") if extra else None
            flags[slot] = channel.default if channel and channel.default else True
            slots[slot] = "yes only if the user asks to be notified"
        zh = catalog.wording(f"intent.{intent}", "zh") or intent
        en = catalog.wording(f"intent.{intent}", "en") or intent
        out.append(
            TaskOption(intent, f"{zh} / {en}", slots, flags, frozenset(task.sensitive_slots))
        )
    return out


def _described(card: Any, name: str) -> str:
    if card is None:
        return name
    info = card.parameters.model_fields.get(name)
    text = " ".join(((info.description if info is not None else None) or name).split())
    return text.split(". ")[0][:DESCRIPTION_CHARS]


def implied_task(view: DialogueView, kind: str) -> TaskView | None:
    """The task a ``set`` or ``correct`` without a task means: pending, else waiting."""
    if kind == "start":
        return None
    return view.pending or view.waiting


def situation(view: DialogueView, text: str) -> str:
    """The dynamic part of the prompt: what waits, and the message."""
    lines: list[str] = []
    if view.pending is not None:
        shown = ", ".join(f"{k}={v}" for k, v in view.pending.slots.items())
        lines.append(f"Waiting for a yes or no: {view.pending.intent} ({shown})")
    if view.waiting is not None:
        have = ", ".join(f"{k}={v}" for k, v in view.waiting.slots.items()) or "nothing"
        lines.append(
            f"Waiting task: {view.waiting.intent} needs {', '.join(view.waiting.missing)}; "
            f"has {have}"
        )
    for task in view.queued:
        lines.append(f"Queued: {task.intent}")
    if view.last is not None and view.idle:
        lines.append(f"Last answered: {view.last.intent}")
    lines.append(f"Message: {text}")
    return "\n".join(lines)
