"""The rule generator: the scenarios' cues and extractors, read as commands.

It is Rasa CALM's NLU-only adapter in our terms: the cue scoring of
``understanding.recognizer.RuleBasedUnderstanding`` says which task a clause asks for, the
scenario's slot extractor what it gives, ``understanding.acts`` the courtesies and requests for a
person, and ``understanding.yesno`` a yes, a no or a correction. What comes out is the same
command language the model generator speaks; the engine applies either.

How one message becomes several commands: it is cut into clauses
(``understanding.split``), and a clause starts a request of its own only when it names a
task with a cue of its own ("再帮我看看北京天气"); any other clause belongs to the request
before it ("，密码123456"). A message of one request is read whole; a slot named twice
("北京和上海") starts one task per value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from datetime import date
from typing import Any

from contract.scenario import UNKNOWN, ScenarioSet, SlotResult
from state import SlotValues
from understanding.acts import is_follow_up, read_act
from understanding.clause_commands import (
    ANSWERS_CONFIDENCE,
    ClauseGroup,
    FoundSlots,
    after_previous,
    before_colon,
    cannot_tell,
    carry_over,
    offer_taken,
    starts_for,
)
from understanding.commands import (
    Cancel,
    CannotTell,
    ChitChat,
    Command,
    Confirm,
    CorrectSlot,
    HandOff,
    Reading,
    Reject,
    SetSlot,
    Start,
)
from understanding.recognizer import IntentResult, RuleBasedUnderstanding, detect_language
from understanding.split import clauses
from understanding.view import MASKED_SUFFIX, DialogueView, TaskView
from understanding.yesno import (
    corrected_part,
    is_correction,
    is_firm_no,
    is_plain_answer,
    read_answer,
)

NAMES_A_TASK = 0.85
COMPLETE_MARGIN = 0.15
"""How far below the threshold a cued clause that gives all its slots may be and still be a
request of its own in a message of several ("查订单 OD-…，再查下北京天气")."""
"""A clause this sure of its task starts a request of its own even without a cue of its own."""
_RESUME = re.compile(r"继续|接着|回到刚才|刚才那个|go back|continue|resume", re.IGNORECASE)
SECRET_SHOWN = "******"


class RuleCommandGenerator:
    """Commands from the scenarios' cues, extractors and the conversation acts; no model."""

    source = "rules"

    def __init__(
        self,
        catalog: ScenarioSet,
        rules: RuleBasedUnderstanding,
        *,
        threshold: float = 0.6,
        today: Any = date.today,
    ) -> None:
        """Read intents with ``rules`` and slots with the scenarios' extractors."""
        self.catalog = catalog
        self.rules = rules
        self.threshold = threshold
        self.today = today

    # ---- the generator -----------------------------------------------------------------
    def generate(self, text: str, view: DialogueView) -> Reading:
        """Read one message (its secrets revealed) against the conversation's state."""
        language = detect_language(text)
        return Reading(tuple(self._commands(text, view)), language, source="rules")

    def reconsider(self, text: str, view: DialogueView) -> Reading:
        """Look again at an unsure message: what the waiting task asked for, then typos."""
        language = detect_language(text)
        waiting = view.waiting
        if waiting is not None and waiting.missing:
            found = self.slots_for(text, waiting.intent, waiting)
            if found.fills:
                return Reading(
                    (self._answer(found, waiting, "answers the pending question"),), language
                )
        result = self.rules.reconsider(text, pending_intent=None, missing_slots=[])
        if result.intent == UNKNOWN:
            return Reading((cannot_tell(result),), language)
        found = self.slots_for(text, result.intent, None)
        return Reading(
            (
                Start(
                    intent=result.intent,
                    slots=found.slots,
                    invalid=found.invalid,
                    confidence=result.confidence,
                    evidence=result.evidence,
                ),
            ),
            language,
        )

    def classify(self, text: str) -> IntentResult:
        """The rules' intent of ``text`` on its own."""
        return self.rules.classify(text)

    # ---- reading ------------------------------------------------------------------------
    def _commands(self, text: str, view: DialogueView) -> list[Command]:
        act = read_act(text)
        if act is not None and act.kind in ("human", "complaint"):
            reason = "user_request" if act.kind == "human" else "complaint"
            return [HandOff(reason=reason, evidence=(act.cue,))]  # type: ignore[arg-type]
        if view.pending is None:
            beyond = self.catalog.beyond(text)
            if beyond is not None:
                return [HandOff(reason="not_served", request=beyond.name, evidence=(beyond.name,))]
        if view.pending is not None:
            return self._at_pending(text, view)
        taken = offer_taken(text, view)
        if taken is not None:
            return [taken]
        if view.waiting is None and read_answer(text) == "approve" and is_plain_answer(text):
            return [Confirm(evidence=(text.strip()[:40],))]  # a yes to nothing: the engine says so
        if act is not None:
            if act.kind == "never_mind":
                waiting = view.waiting.intent if view.waiting else None
                return [Cancel(intent=waiting, evidence=(act.cue,))]
            return [ChitChat(act=act.kind, evidence=(act.cue,))]  # type: ignore[arg-type]
        return self._tasks(text, view)

    def _at_pending(self, text: str, view: DialogueView) -> list[Command]:
        """A yes, a no, a correction of the pending action, or a new request."""
        pending = view.pending
        assert pending is not None
        answer = read_answer(text)
        found = self.slots_for(text, pending.intent, pending)
        result = self.rules.classify(text)
        new_request = (
            answer is None
            and result.intent not in (UNKNOWN, pending.intent)
            and result.confidence >= self.threshold
        )
        spec = self.catalog.task(pending.intent)
        if (
            not found.changed
            and not new_request
            and is_correction(text)
            and spec is not None
            and spec.suggest is not None
        ):
            # "不对，是麻辣香锅那单": no value the extractor reads, but another of the user's
            # records; the slots the records gave are looked up again from these words
            return [
                CorrectSlot(
                    slots=dict.fromkeys(spec.required_slots),
                    intent=pending.intent,
                    confidence=ANSWERS_CONFIDENCE,
                    evidence=("corrects the pending action", "looks the records up again"),
                )
            ]
        if (
            found.changed
            and not new_request
            and not (answer == "approve" and is_plain_answer(text))  # "yes" is no "any time"
            and (answer != "reject" or is_correction(text) or not is_firm_no(text))
        ):  # "no, June 21" changes the date; "算了" alone would cancel
            return [
                CorrectSlot(
                    slots=found.changed,
                    invalid=found.invalid,
                    intent=pending.intent,
                    confidence=ANSWERS_CONFIDENCE,
                    evidence=("corrects the pending action", *found.changed),
                )
            ]
        if answer == "approve":
            return [Confirm(evidence=(text.strip()[:40],))]
        if answer == "reject":
            return [Reject(evidence=(text.strip()[:40],))]
        if new_request:
            return self._tasks(text, DialogueView(language=view.language, last=view.last))
        return [CannotTell(evidence=("neither yes nor no",))]

    def _tasks(self, text: str, view: DialogueView) -> list[Command]:
        groups = self._groups(text, view)
        if len(groups) >= 2:
            several = self._several(groups, view)
            if (
                sum(1 for c in several if c.kind == "start")
                + (1 if any(c.kind in ("set", "correct") for c in several) else 0)
                >= 2
            ):
                return several
        # one clause: its reading is the message's, made already (a group's is its lead's)
        single = len(groups) == 1 and groups[0][0] == text and len(clauses(text)) < 2
        return self._single(text, view, groups[0][1] if single else None)

    def _groups(self, text: str, view: DialogueView) -> list[tuple[str, IntentResult]]:
        """Join the clauses into requests: a clause naming a task of its own starts one.

        A clause that names no task belongs to the request before it ("，密码123456"); one
        that names the task the request is already about joins it too, unless it gives a
        value of its own for a slot the request already has ("查 OD-1，再查 OD-2"). Leading
        clauses that answer the waiting task ("OD-…，另外帮我催一下…") are a request of their
        own: the answer.
        """
        parts = clauses(text)
        if len(parts) < 2:
            return [(text, self.rules.classify(text))]
        waiting = view.waiting
        groups: list[ClauseGroup] = []
        for part in parts:
            result = self.rules.classify(before_colon(part))
            names = self._names_task(result, part)
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
                or result.intent == waiting.intent  # "收款账户是ACC-2001，转500元": one answer
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
        return [
            (group.text, group.lead if group.lead is not None else self.rules.classify(group.text))
            for group in groups
        ]

    def _completes(self, group: ClauseGroup, part: str) -> bool:
        """The clause gives the request before it slots it still lacks ("，发短信：…")."""
        if group.lead is None:
            return False
        required = self.catalog.task(group.lead.intent)
        if required is None:
            return False
        gives = set(self._extract(part, group.lead.intent).slots) & set(required.required_slots)
        return bool(gives - group.held)

    def _names_task(self, result: IntentResult, part: str | None = None) -> bool:
        """The clause asks for a task of its own: sure of it, or cued (or sure) and complete.

        "查订单 OD-…" is a weak cue (查) with all the task needs: a request, even if a
        clause about the weather follows; so is "book me pediatrics on the 20th", sure of the
        task from its values alone, which are all it needs.
        """
        if result.intent == UNKNOWN:
            return False
        if result.confidence >= self.threshold and (
            result.cued or result.confidence >= NAMES_A_TASK
        ):
            return True
        sure = result.confidence >= self.threshold  # "book me pediatrics on the 20th"
        return part is not None and self._complete(result, part, cued=result.cued or sure)

    def _complete(self, result: IntentResult, part: str, *, cued: bool | None = None) -> bool:
        spec = self.catalog.task(result.intent)
        cued = result.cued if cued is None else cued
        if spec is None or not cued or not spec.required_slots:
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
                result = replace(result, confidence=self.threshold)  # cued and complete
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
            if spec is not None:  # "…，再帮我催一下": the same order; "…第一个": that one
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
        result = known if known is not None else self.rules.classify(text)
        confident = result.confidence >= self.threshold and result.intent != UNKNOWN
        waiting = view.waiting
        if waiting is not None and (result.intent == waiting.intent or not confident):
            found = self.slots_for(text, waiting.intent, waiting)
            if (found.fills or found.changed) and (confident or found.several):
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
            follow = self._follow_up(text, view)
            if follow is not None:
                return [follow]
            bare = self.catalog.bare_request(text) if waiting is None else None
            if bare is not None and result.intent in (UNKNOWN, bare):  # "OD-…呢": a request
                found, why = self.slots_for(text, bare, None), ("a value alone",)
                return [
                    Start(intent=bare, slots=found.slots, confidence=self.threshold, evidence=why)
                ]
            if view.suspended:  # "继续刚才的", or an answer to the task set aside ("500")
                frame, why = view.suspended[-1], ("resume",)
                found = self.slots_for(text, frame.intent, frame)
                if _RESUME.search(text) or (waiting is None and found.fills):
                    return [
                        Start(
                            intent=frame.intent,
                            slots=found.slots,
                            confidence=self.threshold,
                            evidence=why,
                        )
                    ]
        if result.intent == UNKNOWN:
            return [cannot_tell(result)]
        found = self.slots_for(text, result.intent, None)
        return starts_for(result, found)

    def _follow_up(self, text: str, view: DialogueView) -> Start | None:
        """Ask the last request again with what the message changes ("那上海呢")."""
        last = view.last
        task = self.catalog.task(last.intent) if last is not None else None
        if last is None or task is None or not (is_follow_up(text) or is_correction(text)):
            return None  # "不对，是 OD-…" after an answer asks it again, corrected
        found = self.slots_for(text, last.intent, None)
        if not found.slots:
            return None
        kept = {
            name: value
            for name, value in last.slots.items()
            if name not in task.sensitive_slots and not name.endswith(MASKED_SUFFIX)
        }
        return Start(
            intent=last.intent,
            slots={**kept, **found.slots},
            follows_up=True,
            confidence=self.threshold,
            evidence=(f"follows up on {last.intent}",),
        )

    def _answers(self, found: FoundSlots, task: TaskView, why: str) -> list[Command]:
        """The answer to the waiting task; a slot given twice also starts the same task anew.

        "OD-1 和 OD-2" answering "which order?" fills the first and asks the same for the
        second.
        """
        if not found.several:
            return [self._answer(found, task, why)]
        name, values = next(iter(found.several.items()))
        first = FoundSlots(
            {**found.slots, name: values[0]}, found.invalid, {}, found.changed, found.fills
        )
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

    # ---- slots ------------------------------------------------------------------------------
    def _extract(self, text: str, intent: str) -> SlotResult:
        return self.catalog.extract(text, intent, today=self.today())

    def slots_for(self, text: str, intent: str, task: TaskView | None) -> FoundSlots:
        """Read the slots ``text`` gives the task of ``intent`` (known to ``task``, if any).

        After correction words ("不对，改成50") what follows is read on its own too, as the
        answer it is; an answer that fits two questions fills the one still open.
        """
        found = self._extract(text, intent)
        slots, invalid, several = dict(found.slots), dict(found.invalid), dict(found.several)
        known: Mapping[str, Any] = task.slots if task is not None else {}
        either = found.either
        if is_correction(text) and (part := corrected_part(text)) is not None:
            again = self._extract(part, intent)
            slots.update(again.slots)
            for name in again.slots:
                invalid.pop(name, None)
                several.pop(name, None)  # "查 OD-1，不对，是 OD-2": the one value, not both
            several.update(again.several)
            invalid.update({k: v for k, v in again.invalid.items() if k not in slots})
            either = either or again.either
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
        missing = set(task.missing) if task is not None else set()
        fills = bool(missing & (set(slots) | set(invalid) | set(several)))
        return FoundSlots(slots, invalid, several, changed, fills)


__all__ = ["ANSWERS_CONFIDENCE", "FoundSlots", "RuleCommandGenerator"]
