"""What one clause of a message gives the rule generator, as values and as commands.

``FoundSlots`` is a clause's slot values read against what its task already knows (a change,
a fill of a missing slot, several values of one slot); ``ClauseGroup`` is clauses read as one
request; ``starts_for`` turns a clause's reading into ``Start`` commands (one per value of a
slot named twice); ``after_previous`` says whether a clause waits for the one before it
("订好了通知我"). Used by ``understanding.rules``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from state import SlotValues
from understanding.commands import (
    CannotTell,
    Command,
    Start,
)
from understanding.recognizer import IntentResult


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


_AFTER = re.compile(
    r"好了|完了|之后|以后|然后|成功后|\bonce\b|\bafter\b|\bwhen (?:it'?s )?done\b", re.I
)


def before_colon(part: str) -> str:
    """What a clause asks, without the text it quotes after a colon ("发短信：餐品将延迟送达")."""
    return re.split(r"[:：]", part, maxsplit=1)[0]


def after_previous(part: str) -> bool:
    """Tell whether a clause waits for the one before it ("订好了通知我")."""
    return _AFTER.search(part) is not None


def cannot_tell(result: IntentResult) -> CannotTell:
    """The command of a message whose task the rules cannot tell."""
    return CannotTell(
        candidates=result.candidates, confidence=result.confidence, evidence=result.evidence
    )
