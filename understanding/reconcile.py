"""Put a model's task commands in their place: the dialogue state decides start, set or correct.

A small model names the task and copies the values well, and the command kind badly: measured
on the local Qwen2.5-Coder-1.5B, "what's the weather in Beijing and Shanghai today" came back
as one ``clarify`` carrying both cities, "hurry OD-1 and OD-2 for me" as a ``set`` with
nothing waiting, a new transfer as a ``correct``, and "OD-2, and also hurry OD-1" (answering
"which order?") as a ``set`` of OD-1 and a ``correct`` to OD-2 of the same refund. Whether a
command starts, fills or corrects a task is a fact of the task stack, not of the model's
reading, so it is derived here:

- a task not on the stack is started; one waiting for slots is filled (a value that
  replaces a known one is a correction); the one pending confirmation is corrected; a
  ``set`` or ``correct`` of the request answered last asks it again with the change
  ("no, I meant Shanghai");
- several values of one slot for a new task are several tasks (two cities, two orders);
- contradictory values of one slot for the waiting or pending task are settled by the rules'
  reading when it heard one of them, and a value the rules heard and the model left out (or
  gave wrong: "from Shanghai on the 20th" without its date) is the rules'; a value another
  task of the message uses is that task's; one nobody uses starts the same task again (the
  rules do the same for "OD-1 and OD-2" answering "which order?");
- what the rules heard for a task the model started and the model left out is kept (a
  second order number it skipped), and so is a request of several the model dropped whole.

Only the kind and the grouping change here: every value was already checked against the
message by the model generator, and the engine and the executor still decide what runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from state import SlotValues
from understanding.commands import CorrectSlot, Reading, SetSlot, Start
from understanding.view import MASKED_SUFFIX, DialogueView

Role = Literal["new", "waiting", "pending", "queued", "last"]
TaskKind = Literal["start", "set", "correct"]


@dataclass(frozen=True, slots=True)
class Proposal:
    """One task command as the model said it, its values checked against the message."""

    order: int
    """Where the model said it (commands keep the order of the message)."""
    kind: TaskKind
    intent: str
    values: Mapping[str, Any]
    refused: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Placed:
    """A task command with its kind taken from the task stack."""

    order: int
    kind: TaskKind
    intent: str
    values: Mapping[str, Any]
    refused: Mapping[str, str] = field(default_factory=dict)
    follows_up: bool = False
    from_rules: bool = False


def split_values(pairs: Sequence[tuple[str, str]]) -> list[list[tuple[str, str]]]:
    """One group of pairs per entity: a slot named twice ("Beijing", "Shanghai") makes two groups.

    A slot named once is shared by every group ("tomorrow" for both cities).
    """
    by_name: dict[str, list[str]] = {}
    for name, value in pairs:
        seen = by_name.setdefault(name, [])
        if value not in seen:
            seen.append(value)
    count = max((len(values) for values in by_name.values()), default=1)
    if count <= 1:
        return [list(pairs)]
    return [
        [(name, values[min(index, len(values) - 1)]) for name, values in by_name.items()]
        for index in range(count)
    ]


def merge_agreeing(proposals: Sequence[Proposal]) -> list[Proposal]:
    """Join starts of one task that agree on every slot both name into the first of them.

    The local model sometimes says one request twice, the second time with more of it
    ("book me a flight … on june 21" came back as a start without the date and a start with
    it); two starts that disagree on a slot (two cities, two orders) stay two tasks.
    """
    out: list[Proposal] = []
    for proposal in proposals:
        same = (
            _agreeing_start(out, proposal.intent, proposal.values)
            if proposal.kind == "start"
            else None
        )
        if same is None:
            out.append(proposal)
            continue
        kept = out[same]
        out[same] = Proposal(
            kept.order,
            "start",
            kept.intent,
            {**proposal.values, **kept.values},
            {**proposal.refused, **kept.refused},
        )
    return out


def _agreeing_start(
    items: Sequence[Proposal | Placed], intent: str, values: Mapping[str, Any]
) -> int | None:
    """The index of the first start of ``intent`` that agrees with ``values`` (not the rules')."""
    return next(
        (
            i
            for i, item in enumerate(items)
            if item.kind == "start"
            and item.intent == intent
            and not getattr(item, "from_rules", False)
            and _agree(item.values, values)
        ),
        None,
    )


def _agree(one: Mapping[str, Any], other: Mapping[str, Any]) -> bool:
    """No slot named by both has two values (letter case aside: "Shanghai", "shanghai")."""
    return all(
        str(one[name]).casefold() == str(value).casefold()
        for name, value in other.items()
        if name in one
    )


def role_of(view: DialogueView, intent: str) -> Role:
    """Where ``intent`` stands on the task stack."""
    if view.pending is not None and view.pending.intent == intent:
        return "pending"
    if view.waiting is not None and view.waiting.intent == intent:
        return "waiting"
    if any(task.intent == intent for task in view.queued):
        return "queued"
    if view.idle and view.last is not None and view.last.intent == intent:
        return "last"
    return "new"


def on_stack(view: DialogueView, intent: str) -> bool:
    """Whether a task of ``intent`` is open: waiting, pending, queued or set aside."""
    return role_of(view, intent) not in ("new", "last") or any(
        task.intent == intent for task in view.suspended
    )


def place(
    proposals: Sequence[Proposal],
    view: DialogueView,
    rules: Reading,
    *,
    sensitive: Mapping[str, frozenset[str]],
) -> list[Placed]:
    """Give each proposal the kind its task's place on the stack says; see the module."""
    placed: list[Placed] = []
    held: dict[str, list[Proposal]] = {}
    for proposal in (_as_answer(p, view, rules) for p in merge_agreeing(proposals)):
        role = role_of(view, proposal.intent)
        if role == "new" or (role == "last" and proposal.kind == "start"):
            placed.append(_start(proposal))
        elif role == "last":
            kept = {
                name: value
                for name, value in view.last.slots.items()  # type: ignore[union-attr]
                if name not in sensitive.get(proposal.intent, frozenset())
                and not name.endswith(MASKED_SUFFIX)
            }
            placed.append(
                Placed(
                    proposal.order,
                    "start",
                    proposal.intent,
                    {**kept, **proposal.values},
                    proposal.refused,
                    follows_up=True,
                )
            )
        else:
            held.setdefault(proposal.intent, []).append(proposal)
    used = _values_by_intent(placed)
    for intent, said in held.items():
        placed.extend(_settled(intent, said, view, rules, used))
    placed.sort(key=lambda p: p.order)
    return _with_what_rules_heard(placed, rules)


def _as_answer(proposal: Proposal, view: DialogueView, rules: Reading) -> Proposal:
    """A new task given only what the waiting task asked for is the answer to its question.

    "OD-…" answering "which order?" of a refund, read by a model as an order check: no cue
    names that task, the rules read the answer, and the value is what the question asked.
    """
    waiting = view.waiting
    if (
        waiting is None
        or role_of(view, proposal.intent) != "new"
        or not proposal.values
        or not set(proposal.values) <= set(waiting.missing)
        or any(getattr(c, "intent", None) == proposal.intent for c in rules.commands)
    ):
        return proposal
    return Proposal(proposal.order, "set", waiting.intent, proposal.values, proposal.refused)


def _start(proposal: Proposal) -> Placed:
    return Placed(proposal.order, "start", proposal.intent, proposal.values, proposal.refused)


def _values_by_intent(placed: Sequence[Placed]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for item in placed:
        out.setdefault(item.intent, set()).update(str(v) for v in item.values.values())
    return out


def _settled(
    intent: str,
    said: Sequence[Proposal],
    view: DialogueView,
    rules: Reading,
    used: Mapping[str, set[str]],
) -> list[Placed]:
    """The waiting, pending or queued task's proposals as one fill or correction (and extras)."""
    task = view.known(intent)
    heard = _rules_values(rules, intent)
    others = {value for name, values in used.items() if name != intent for value in values}
    chosen: SlotValues = {}
    extra: list[Any] = []
    candidates: dict[str, list[Any]] = {}
    refused: dict[str, str] = {}
    for proposal in said:
        refused.update(proposal.refused)
        for name, value in proposal.values.items():
            seen = candidates.setdefault(name, [])
            if value not in seen:
                seen.append(value)
    for name, values in candidates.items():
        if len(values) == 1:
            chosen[name] = values[0]
            continue
        pick = next((v for v in values if name in heard and heard[name] == v), values[0])
        chosen[name] = pick
        extra.extend((name, v) for v in values if v != pick and str(v) not in others)
    for name, value in heard.items():  # what the rules heard and the model left out or got wrong
        if name not in chosen:
            chosen[name] = value
            refused.pop(name, None)
    order = said[0].order
    role = role_of(view, intent)
    fills = {k: v for k, v in chosen.items() if k not in task}
    changes = {k: v for k, v in chosen.items() if k in task and task[k] != v}
    out: list[Placed] = []
    if role == "pending":
        changes = {**fills, **changes}
        fills = {}
    if fills:
        out.append(Placed(order, "set", intent, fills, refused))
    if changes:
        out.append(Placed(order, "correct", intent, changes, {} if fills else refused))
    if not out and refused:
        out.append(Placed(order, "set", intent, {}, refused))
    if role == "waiting":
        for name, value in extra:  # "OD-1 and OD-2" answering "which order?"
            out.append(Placed(order, "start", intent, {**chosen, name: value}))
    return out


def _rules_values(rules: Reading, intent: str) -> SlotValues:
    values: SlotValues = {}
    for command in rules.commands:
        if isinstance(command, Start | SetSlot | CorrectSlot) and command.intent == intent:
            values.update(command.slots)
    return values


def _with_what_rules_heard(placed: list[Placed], rules: Reading) -> list[Placed]:
    """Starts keep what the rules heard and the model left out; entities it skipped are added.

    A rules' start of a task the model also started is matched to the model's start that
    agrees with it on every slot both name (letter case aside); its other slots fill the
    model's gaps, and a value the model gave wrong (refused) and the rules heard is theirs.
    One that matches none (a second order number the model did not copy) is added after the
    last.
    """
    starts = [c for c in rules.commands if isinstance(c, Start)]
    started = {p.intent for p in placed if p.kind == "start"}
    unmatched: list[Start] = []
    out = list(placed)
    for rule in starts:
        if rule.intent not in started:
            continue
        index = _agreeing_start(out, rule.intent, rule.slots)
        if index is None:
            unmatched.append(rule)
            continue
        item = out[index]
        out[index] = Placed(
            item.order,
            item.kind,
            item.intent,
            {**rule.slots, **item.values},
            # a value of the model's refused, and heard right by the rules, is not refused
            {k: v for k, v in item.refused.items() if k not in rule.slots},
            item.follows_up,
            from_rules=True,
        )
    last = max((p.order for p in out), default=0)
    for rule in unmatched:
        out.append(Placed(last, "start", rule.intent, dict(rule.slots), from_rules=True))
    return out


def left_out(placed: Sequence[Placed], rules: Reading, *, threshold: float) -> list[Placed]:
    """Requests of a several-request message the rules are sure of and the model dropped.

    Measured on the local model: "check OD-…, then book me a pediatrician on the 20th" came
    back as the order check alone, one run in two. The rules split the message into its
    requests; one they are sure of (``threshold``) whose task the model did not name at all is
    kept, after the model's. A one-request message is the model's to read.
    """
    starts = [c for c in rules.commands if isinstance(c, Start)]
    if len(starts) < 2 or not any(p.kind == "start" for p in placed):
        return []
    named = {p.intent for p in placed}
    last = max(p.order for p in placed)
    return [
        Placed(last + 1 + i, "start", start.intent, dict(start.slots), from_rules=True)
        for i, start in enumerate(starts)
        if start.intent not in named and start.confidence >= threshold
    ]


def unheard_dropped(placed: list[Placed], rules: Reading) -> list[Placed]:
    """Without a start of a task the rules did not read, with no value, beside other commands.

    Measured on the local model: "first check the weather in Beijing for me" (a transfer
    waiting) came back as the weather and an order check with no order ("check" is a weak
    cue of one), which then took the
    transfer's "500" as its question's answer. Such a start is dropped; alone it stays the
    model's reading, and one with a value of the message's is the message's.
    """
    heard = {getattr(c, "intent", None) for c in rules.commands}
    kept = [p for p in placed if p.kind != "start" or p.values or p.intent in heard]
    return kept if kept else placed


def settle(
    proposals: Sequence[Proposal],
    view: DialogueView,
    rules: Reading,
    *,
    sensitive: Mapping[str, frozenset[str]],
    threshold: float,
) -> list[Placed]:
    """The model's task commands in their places, with what the rules heard and it missed.

    ``place``, then the requests it dropped (``left_out``), without the tasks nothing in
    the message names (``unheard_dropped``).
    """
    placed = place(proposals, view, rules, sensitive=sensitive)
    placed.extend(left_out(placed, rules, threshold=threshold))
    return unheard_dropped(placed, rules)


__all__ = [
    "Placed",
    "settle",
    "unheard_dropped",
    "left_out",
    "Proposal",
    "merge_agreeing",
    "on_stack",
    "place",
    "role_of",
    "split_values",
]
