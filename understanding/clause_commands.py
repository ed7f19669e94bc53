"""What one clause of a message gives the rule generator, as values and as commands.

``FoundSlots`` is a clause's slot values read against what its task already knows (a change,
a fill of a missing slot, several values of one slot); ``ClauseGroup`` is clauses read as one
request; ``starts_for`` turns a clause's reading into ``Start`` commands (one per value of a
slot named twice); ``carry_over`` gives a clause the value an earlier one named ("it",
"the first one"); ``offer_taken`` reads a plain yes to the one value a question offered. Used by
``understanding.reader``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from state import SlotValues
from understanding.commands import CannotTell, Command, SetSlot, Start
from understanding.lexical import ordinal, plain_answer
from understanding.recognizer import IntentResult
from understanding.view import DialogueView


@dataclass(frozen=True, slots=True)
class FoundSlots:
    """Slot values one clause gives a task, read against what the task already knows."""

    slots: SlotValues = field(default_factory=dict)
    invalid: dict[str, str] = field(default_factory=dict)
    several: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    changed: SlotValues = field(default_factory=dict)
    """Values that replace a different one the task already had."""
    fills: bool = False
    """Gives (or names an invalid value for) a slot the task still misses."""
    ambiguous: tuple[str, ...] = ()
    """Slots the message names two different new values for ("60 or 70"): ask again."""
    valued: bool = False
    """Some value of the message reads as one of the task's slots on its own."""


@dataclass
class ClauseGroup:
    """Clauses read as one request."""

    words: list[str]
    lead: IntentResult | None
    """The clause that named its task, if one did."""
    held: set[str]
    """Slots the request's clauses gave values for."""

    @property
    def text(self) -> str:
        """The clauses joined back into one text."""
        return "，".join(self.words)


def starts_for(
    result: IntentResult, found: FoundSlots, *, after: str | None = None
) -> list[Command]:
    """One ``Start`` per value of a slot named more than once, else one."""
    base = dict(found.slots)
    if not found.several:
        return [
            Start(
                intent=result.intent,
                slots=base,
                invalid=found.invalid,
                after=after,
                confidence=result.confidence,
                evidence=result.evidence,
            )
        ]
    name, values = next(iter(found.several.items()))
    return [
        Start(
            intent=result.intent,
            slots={**base, name: value},
            invalid={k: v for k, v in found.invalid.items() if k != name},
            after=after,
            confidence=result.confidence,
            evidence=(*result.evidence, f"{name} {index + 1} of {len(values)}"),
        )
        for index, value in enumerate(values)
    ]


def before_colon(part: str) -> str:
    """What a clause asks, without the text it quotes after a colon ("send a text: it's late")."""
    return re.split(r"[:：]", part, maxsplit=1)[0]


def cannot_tell(result: IntentResult) -> CannotTell:
    """The command of a message whose task the rules cannot tell."""
    return CannotTell(
        candidates=result.candidates, confidence=result.confidence, evidence=result.evidence
    )


def carry_over(
    found: FoundSlots,
    required: Sequence[str],
    carried: Mapping[str, Any],
    several: Mapping[str, tuple[Any, ...]],
    part: str,
) -> None:
    """Give ``found`` the required values it lacks that an earlier request of the message named.

    One value is "it" ("check OD-…, and hurry it up"); of several, the one the clause points
    at ("check the status of OD-1 and OD-2, and hurry the first one"); with several and no
    pointer nothing is taken, and the task asks.
    """
    place = ordinal(part)
    for name in required:
        if name in found.slots or name in found.several:
            continue
        if name in carried:
            found.slots[name] = carried[name]
        elif (
            name in several
            and place is not None
            and -len(several[name]) <= place < len(several[name])
        ):
            found.slots[name] = several[name][place]


ANSWERS_CONFIDENCE = 0.9
"""A message that gives what the waiting task asked for continues it, this sure."""


OFFER_TAKEN = "takes the value the question offered"
"""The evidence of a plain yes that takes the one value a question offered."""


def offer_taken(text: str, view: DialogueView) -> SetSlot | None:
    """A plain yes to a question that offered one value ("the first opening: June 20") takes it."""
    waiting = view.waiting
    if waiting is None or not waiting.offered:
        return None
    if plain_answer(text) != "approve":
        return None
    taken = {k: v for k, v in waiting.offered.items() if k in waiting.missing}
    if not taken:
        return None
    return SetSlot(
        intent=waiting.intent,
        slots=taken,
        confidence=ANSWERS_CONFIDENCE,
        evidence=(OFFER_TAKEN, *taken),
    )
