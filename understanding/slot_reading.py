"""What a message gives a task's slots: its extractor's reading, values said anywhere, negation.

A value is read because it is a value: for a task that asked (it waits for slots or for a
yes), every value-shaped span of the message (``understanding.values``) is also read as the
bare answer it would be, so "hmm, 60 instead" gives a transfer 60 yuan. A value a negator
takes back ("not 500", "not the 20th") is left out, and what a message says after it
corrects itself ("…, no, it's OD-2") wins over what it said before. Used by the reader.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

from contract.scenario import ScenarioSet, SlotResult
from contract.text_match import normalize
from understanding.clause_commands import FoundSlots
from understanding.lexical import clauses
from understanding.recognizer import ACT, Recognizer
from understanding.values import values_in, without_negated
from understanding.view import TaskView

_TAKES_BACK = (f"{ACT}correct", f"{ACT}deny")
"""Acts that, said after a value, take it back for what follows."""


class SlotReader:
    """Reads slot values for the tasks of a catalog."""

    def __init__(
        self,
        catalog: ScenarioSet,
        recognizer: Recognizer,
        *,
        threshold: float = 0.6,
        today: Any = date.today,
    ) -> None:
        """Read slots with ``catalog``'s extractors; ``recognizer`` spots a self-correction."""
        self.catalog = catalog
        self.recognizer = recognizer
        self.threshold = threshold
        self.today = today

    def _after_correction(self, text: str) -> str | None:
        """What a message says after it corrects itself ("…, no, it's OD-2"), if it does."""
        if len(values_in(text)) < 2:
            return None
        parts = clauses(text)
        if len(parts) < 2:
            return None
        readings = self.recognizer.read(parts)
        for index in range(len(parts) - 1, 0, -1):
            reading = readings[index]
            if reading.best not in _TAKES_BACK or reading.confidence < self.threshold:
                continue  # "…, no, it's OD-2", "the 21st... no wait, the 20th"
            rest = parts[index:] if values_in(parts[index]) else parts[index + 1 :]
            return "，".join(rest) if rest else None
        return None

    def _extract(self, text: str, intent: str) -> SlotResult:
        return self.catalog.extract(text, intent, today=self.today())

    def slots_for(self, text: str, intent: str, task: TaskView | None) -> FoundSlots:
        """Read the slots ``text`` gives the task of ``intent`` (known to ``task``, if any).

        The values a negator takes back are left out ("not 500, 300" gives 300). For a task
        that asked (it waits for slots or for a yes), every value said anywhere is also read
        as the bare answer it would be ("hmm, 60 instead"), so a new value is heard whatever
        words surround it; two new values for one slot are ``ambiguous``.
        """
        kept = without_negated(text)
        found = self._extract(kept, intent)
        slots, invalid, several = dict(found.slots), dict(found.invalid), dict(found.several)
        after = self._after_correction(text)
        if after is not None:  # "check OD-1, no, it's OD-2": what follows the correction wins
            again = self._extract(without_negated(after), intent)
            slots.update(again.slots)
            for name in again.slots:
                invalid.pop(name, None)
                several.pop(name, None)
            several.update(again.several)
        known: Mapping[str, Any] = task.slots if task is not None else {}
        either = found.either
        heard: dict[str, list[Any]] = {}
        for value in values_in(after if after is not None else text):
            if task is not None or not _taken(value.text, text, found.slots):
                if value.negated:
                    continue
                piece = self._extract(value.digits, intent)
                if value.digits != value.text and not piece.slots:
                    piece = self._extract(value.text, intent)
                for name, got in piece.slots.items():
                    heard.setdefault(name, []).append(got)
        for name, values in heard.items():
            told = after is not None and name in slots and name not in found.slots
            if (told or name not in slots) and name not in several:
                if len(set(map(repr, values))) == 1:
                    slots[name] = values[0]
        if either and not (set(slots) & {k for reading in either for k in reading}):
            missing_now = set(task.missing) if task is not None else set()
            reading = next(
                (r for r in either if r.keys() <= missing_now and r),
                next((r for r in either if not r.keys() & known.keys()), either[0]),
            )
            slots = {**reading, **slots}
        spec = self.catalog.task(intent)
        sensitive = set(spec.sensitive_slots) if spec is not None else set()
        optional = set(spec.optional_slots) if spec is not None and task is not None else set()
        changed = {  # a value given anew, or one the task takes only when said (a reason)
            name: value
            for name, value in slots.items()
            if (name in known and (name in sensitive or known[name] != value))
            or (name in optional and name not in known)
        }
        ambiguous = tuple(
            name
            for name, values in heard.items()
            if name in known
            and name not in sensitive
            and len({repr(v) for v in values if v != known[name]}) > 1
            and name not in found.slots
        )
        missing = set(task.missing) if task is not None else set()
        fills = bool(missing & (set(slots) | set(invalid) | set(several)))
        return FoundSlots(
            slots, invalid, several, changed, fills, ambiguous=ambiguous, valued=bool(heard)
        )


def _taken(said: str, text: str, slots: Mapping[str, Any]) -> bool:
    """A value the extractor already read out of the whole message ("ACC-2001", "500 yuan")."""
    return any(str(value).lower() in said.lower() or said.lower() in str(value).lower()
               for value in slots.values() if value)  # fmt: skip


def only_values(text: str, room: int = 1) -> bool:
    """The text says nothing but values (and at most ``room`` letters around them)."""
    rest = normalize(text)
    for value in sorted(values_in(text), key=lambda v: v.start, reverse=True):
        rest = rest[: value.start] + rest[value.end :]
    return sum(1 for ch in rest if ch.isalpha()) <= room


__all__ = ["SlotReader", "only_values"]
