"""Requests in a message: one or several, each a task started, answered or followed up.

A message is cut into clauses (the lexicon's connectors); a clause starts a request of its
own when the recognizer is sure of its task, any other clause belongs to the request before
it (", password 123456"); a slot named twice ("Beijing and Shanghai") is one task per value;
a clause a negator takes back ("no refund, just hurry it up") asks for nothing when another
clause asks. A message of one request continues the waiting task, follows the last one up
("what about Shanghai?"), resumes a task set aside, or starts its task; values that only one
task takes start it ("ACC-2001 500"). Used by the reader.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from contract.scenario import UNKNOWN
from contract.text_match import negated, normalize
from language import every
from state import SlotValues
from understanding.classifier import Ranked
from understanding.clause_commands import (
    ANSWERS_CONFIDENCE,
    ClauseGroup,
    FoundSlots,
    before_colon,
    cannot_tell,
    carry_over,
    starts_for,
)
from understanding.commands import Command, CorrectSlot, SetSlot, Start
from understanding.lexical import after_previous, clauses
from understanding.recognizer import ACT, IntentResult
from understanding.slot_reading import SlotReader, only_values
from understanding.values import values_in
from understanding.view import MASKED_SUFFIX, DialogueView, TaskView

COMPLETE_MARGIN = 0.15
"""How far below the threshold a clause that gives all its task's slots may be and still be a
request of its own in a message of several ("check order OD-…, then the weather in Beijing")."""
CLAUSE_SURE = 0.8
"""How sure of a clause's act or request, when the message as a whole says more."""
LEAVE_SURE = 0.95
"""How sure of another task a message that answers the waiting one must be to leave it:
"from Shanghai on June 20" answers the booking's question, though it also reads like a search."""
_NEGATORS = tuple(normalize(w) for w in every("negators"))
_SCOPE = 2
"""How far into a clause a negator may stand and still take the clause's request back."""


class RequestReader(SlotReader):
    """Commands for the requests of a message nothing waits a yes for."""

    def _tasks(self, text: str, view: DialogueView, whole: Ranked) -> list[Command]:
        groups = self._groups(text, view, whole)
        if len(groups) >= 2:
            several = self._several(groups, view)
            if (
                sum(1 for c in several if c.kind == "start")
                + (1 if any(c.kind in ("set", "correct") for c in several) else 0)
                >= 2
            ):
                return several
        result = self.recognizer.result(text, whole)
        lead = groups[0][1]
        parts = clauses(text)
        if result.intent == UNKNOWN and lead.intent != UNKNOWN and self._opens_with(text, lead):
            result = lead  # "check OD-1, no, it's OD-2": the request, corrected in passing
        elif len(parts) > 1 and any(_denied(p) for p in parts):
            denied = {self.recognizer.classify(p).intent for p in parts if _denied(p)}
            if result.intent in denied:  # "I don't want a refund, just tell me where it is"
                result = lead if lead.intent not in denied else replace(result, intent=UNKNOWN)
        return self._single(text, view, result)

    def _opens_with(self, text: str, lead: IntentResult) -> bool:
        """The message's first clause names ``lead``'s task itself."""
        first = clauses(text)[0]
        reading = self.recognizer.read([first])[0]
        return reading.best == lead.intent and reading.confidence >= self.threshold

    def _groups(
        self, text: str, view: DialogueView, whole: Ranked
    ) -> list[tuple[str, IntentResult]]:
        """Join the clauses into requests: a clause naming a task of its own starts one.

        A clause that names no task belongs to the request before it (", password 123456");
        one that names the task the request is already about joins it too, unless it gives a
        value of its own for a slot the request already has ("check OD-1, then check OD-2").
        Leading clauses that answer the waiting task ("OD-…, and also hurry …") are a request
        of their own: the answer. A clause a negator takes back names nothing when another
        does.
        """
        parts = clauses(text)
        if len(parts) < 2:
            return [(text, self.recognizer.result(text, whole))]
        readings = self.recognizer.read([before_colon(part) for part in parts])
        results = [self.recognizer.result(p, r) for p, r in zip(parts, readings, strict=True)]
        sure_whole = whole.best if whole.confidence >= self.threshold else None
        named = [
            self._names_task(r, p)
            and (r.intent == sure_whole or r.confidence >= CLAUSE_SURE or sure_whole is None)
            for r, p in zip(results, parts, strict=True)
        ]
        if any(n and not _denied(p) for n, p in zip(named, parts, strict=True)):
            named = [n and not _denied(p) for n, p in zip(named, parts, strict=True)]
        waiting = view.waiting
        groups: list[ClauseGroup] = []
        for part, result, names in zip(parts, results, named, strict=True):
            entities = set(self._extract(part, result.intent).slots) if names else set()
            if not groups:
                groups.append(ClauseGroup([part], result if names else None, entities))
                continue
            group = groups[-1]
            if not names or self._completes(group, part):
                group.words.append(part)
                group.held |= (
                    set(self._extract(part, group.lead.intent).slots) if group.lead else set()
                )
            elif group.lead is None and (
                waiting is None
                or result.intent == waiting.intent
                or not self.slots_for(group.text, waiting.intent, waiting).fills
            ):
                group.words.append(part)
                group.lead, group.held = result, group.held | entities
            elif (
                group.lead is not None
                and result.intent == group.lead.intent
                and not (group.held & entities)
            ):
                group.words.append(part)
                group.held |= entities
            else:
                groups.append(ClauseGroup([part], result, entities))
        if len(groups) == 1:
            lead = groups[0].lead
            return [(groups[0].text, lead or self.recognizer.classify(groups[0].text))]
        # a group no clause named is no request of its own (an answer, or words around one)
        return [
            (group.text, group.lead or _unnamed(self.recognizer.classify(group.text)))
            for group in groups
        ]

    def _completes(self, group: ClauseGroup, part: str) -> bool:
        """The clause gives the request before it slots it still lacks (", send a text: …").

        An extra the request takes on request counts too, when the clause waits for it
        ("…, and text me the details once it's booked": the booking's notification).
        """
        if group.lead is None:
            return False
        task = self.catalog.task(group.lead.intent)
        if task is None:
            return False
        said = set(self._extract(part, group.lead.intent).slots)
        gives = said & set(task.required_slots)
        extra = said & {slot for slot, _ in task.on_request}
        return bool(gives - group.held) or bool(extra and after_previous(part))

    def _names_task(self, result: IntentResult, part: str | None = None) -> bool:
        """The clause asks for a task of its own: sure of it, or nearly sure and complete."""
        if result.intent == UNKNOWN:
            return False
        if result.confidence >= self.threshold:
            return True
        return part is not None and self._complete(result, part)

    def _complete(self, result: IntentResult, part: str) -> bool:
        spec = self.catalog.task(result.intent)
        if spec is None or not spec.required_slots or only_values(part):
            return False
        if result.confidence < self.threshold - COMPLETE_MARGIN:
            return False
        found = self._extract(part, result.intent)
        return all(n in found.slots or n in found.several for n in spec.required_slots)

    def _several(self, groups: list[tuple[str, IntentResult]], view: DialogueView) -> list[Command]:
        """One command per request of a message that makes more than one."""
        commands: list[Command] = []
        waiting = view.waiting
        answered = False
        previous: str | None = None
        carried: SlotValues = {}
        several: dict[str, tuple[Any, ...]] = {}
        for part, result in groups:
            if self._names_task(result, part) and result.confidence < self.threshold:
                result = replace(result, confidence=self.threshold)  # nearly sure and complete
            if not self._names_task(result, part):
                if waiting is not None and not answered:
                    found = self.slots_for(part, waiting.intent, waiting)
                    if found.slots or found.invalid or found.several:
                        commands.extend(
                            self._answers(found, waiting, "answers the pending question")
                        )
                        answered = True
                continue
            if waiting is not None and not answered and result.intent == waiting.intent:
                found = self.slots_for(part, waiting.intent, waiting)
                commands.extend(self._answers(found, waiting, "continues the task"))
                answered = True
                continue
            found = self.slots_for(part, result.intent, None)
            spec = self.catalog.task(result.intent)
            if spec is not None:  # "…, hurry it up": the same order; "… the first": that one
                carry_over(found, spec.required_slots, carried, several, part)
            started = starts_for(result, found, after=previous if after_previous(part) else None)
            commands.extend(started)
            carried.update(
                {k: v for k, v in found.slots.items() if spec and k not in spec.sensitive_slots}
            )
            several.update(found.several)
            previous = result.intent
        return commands

    def _single(
        self, text: str, view: DialogueView, known: IntentResult | None = None
    ) -> list[Command]:
        """A message of one request: continue the waiting task, follow up, resume or start."""
        result = known if known is not None else self.recognizer.classify(text)
        ranked = self.recognizer.read([text])[0]
        confident = result.confidence >= self.threshold and result.intent != UNKNOWN
        waiting = view.waiting
        found = self.slots_for(text, waiting.intent, waiting) if waiting is not None else None
        if found is not None and found.fills and (
            result.confidence < LEAVE_SURE or self._needs_the_waiting(text, result, waiting)
        ):
            confident = False  # an answer to the question asked, unless another task is sure
        if (
            waiting is not None
            and found is not None
            and (result.intent == waiting.intent or not confident)
        ):
            if (found.fills or found.changed) and (confident or found.several or found.valued):
                return self._answers(found, waiting, "answers the pending question")
            if not confident:  # a bare answer: reflect-refine reads it with the question
                return [
                    SetSlot(
                        slots=found.slots,
                        invalid=found.invalid,
                        intent=waiting.intent,
                        confidence=result.confidence,
                        evidence=result.evidence,
                    )
                ]
            return [self._answer(found, waiting, "asks for the waiting task again")]
        if not confident:
            follow = self._follow_up(text, view, ranked)
            if follow is not None:
                return [follow]
            bare = self.catalog.bare_request(text) if waiting is None else None
            if bare is not None:  # "what about OD-…?": a request
                found, why = self.slots_for(text, bare, None), ("a value alone",)
                return [
                    Start(intent=bare, slots=found.slots, confidence=self.threshold, evidence=why)
                ]
            if view.suspended:  # "back to that one", or an answer to the task set aside ("500")
                frame, why = view.suspended[-1], ("resume",)
                found = self.slots_for(text, frame.intent, frame)
                if ranked.best == f"{ACT}resume" or (waiting is None and found.fills):
                    return [
                        Start(
                            intent=frame.intent,
                            slots=found.slots,
                            confidence=self.threshold,
                            evidence=why,
                        )
                    ]
            fitting = self._fits_one(text) if waiting is None else None
            if fitting is not None:  # values that only one task takes ("ACC-2001 500")
                found = self.slots_for(text, fitting, None)
                return [
                    Start(
                        intent=fitting,
                        slots=found.slots,
                        invalid=found.invalid,
                        confidence=self.threshold,
                        evidence=("values only this task takes",),
                    )
                ]
        if result.intent == UNKNOWN:
            return [cannot_tell(result)]
        found = self.slots_for(text, result.intent, None)
        return starts_for(result, found)

    def _needs_the_waiting(
        self, text: str, result: IntentResult, waiting: TaskView | None
    ) -> bool:
        """The other task would lack what the waiting one already holds: it is the answer.

        "from Shanghai on June 20" reads like a flight search, but the search would still
        ask where to: the booking waiting for these values knows.
        """
        other = self.catalog.task(result.intent)
        if other is None or waiting is None or result.intent == waiting.intent:
            return False
        given = set(self.slots_for(text, result.intent, None).slots)
        lacking = set(other.required_slots) - given
        return bool(lacking) and lacking <= set(waiting.slots)

    def _fits_one(self, text: str) -> str | None:
        """The one task whose slots the message's values fill, when it says nothing else."""
        if not values_in(text) or not only_values(text, room=4):
            return None  # more was said than values: the recognizer's to read
        fits = []
        for intent, task in self.catalog.tasks.items():
            found = self._extract(text, intent)
            if set(found.slots) & set(task.required_slots):
                fits.append(intent)
        return fits[0] if len(fits) == 1 else None

    def _follow_up(self, text: str, view: DialogueView, ranked: Ranked) -> Start | None:
        """Ask the last request again with what the message changes ("what about Shanghai?")."""
        last = view.last
        task = self.catalog.task(last.intent) if last is not None else None
        if last is None or task is None:
            return None
        found = self.slots_for(text, last.intent, None)
        if not found.slots:
            return None
        asks_again = ranked.best in (f"{ACT}follow_up", f"{ACT}correct")
        changes = any(
            last.slots.get(name) not in (None, value) for name, value in found.slots.items()
        )
        if not asks_again and not changes:
            return None
        kept = {
            name: value
            for name, value in last.slots.items()
            if name not in task.sensitive_slots
            and not name.endswith(MASKED_SUFFIX)
            and name not in found.invalid  # a new value that cannot be used is asked again
        }
        return Start(
            intent=last.intent,
            slots={**kept, **found.slots},
            invalid=found.invalid,
            follows_up=True,
            confidence=self.threshold,
            evidence=(f"follows up on {last.intent}",),
        )

    def _answers(self, found: FoundSlots, task: TaskView, why: str) -> list[Command]:
        """The answer to the waiting task; a slot given twice also starts the same task anew."""
        if not found.several:
            return [self._answer(found, task, why)]
        name, values = next(iter(found.several.items()))
        first = replace(found, slots={**found.slots, name: values[0]}, several={})
        again = dict(task.stored)  # vault tokens stay tokens
        return [
            self._answer(first, task, why),
            *(
                Start(
                    intent=task.intent,
                    slots={**again, **found.slots, name: value},
                    confidence=ANSWERS_CONFIDENCE,
                    evidence=(why, f"{name} {index + 2} of {len(values)}"),
                )
                for index, value in enumerate(values[1:])
            ),
        ]

    def _answer(self, found: FoundSlots, task: TaskView, why: str) -> Command:
        if found.changed and not found.fills:
            return CorrectSlot(
                slots={**found.slots},
                invalid=found.invalid,
                intent=task.intent,
                confidence=ANSWERS_CONFIDENCE,
                evidence=(why, *found.changed),
            )
        return SetSlot(
            slots=found.slots,
            invalid=found.invalid,
            intent=task.intent,
            confidence=ANSWERS_CONFIDENCE,
            evidence=(why, *found.slots, *found.invalid),
        )


def _unnamed(result: IntentResult) -> IntentResult:
    """A reading no clause of its own stood for: below any threshold, its task a candidate."""
    return replace(result, intent=UNKNOWN, confidence=0.0, cued=False)


def _denied(part: str) -> bool:
    """The clause opens by taking its request back ("no refund", "I don't want a refund").

    Only a negator at the clause's start counts ("I won't cancel" counts, "has not arrived" does
    not): within the lexicon's negation scope of it, in characters or words.
    """
    lowered = normalize(part)
    words = lowered.split()
    for word in _NEGATORS:
        at = lowered.find(word)
        if at == -1:
            continue
        end = at + len(word)
        if not negated(lowered, min(end + 1, len(lowered))) and not negated(lowered, end):
            continue
        if word.isascii():
            lead = [w.replace("'", "") for w in words[: _SCOPE + 1]]
            if word.replace("'", "") in lead:
                return True
        elif at <= _SCOPE:
            return True
    return False


__all__ = ["CLAUSE_SURE", "COMPLETE_MARGIN", "RequestReader"]
