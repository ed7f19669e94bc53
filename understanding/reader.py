"""The default reader: a message into commands, from examples and values, with no model.

Rasa's NLU stack is the anchor: the recognizer (``understanding.recognizer``, trained on each
task's example requests and each language's dialogue acts) says which task or act each clause
is, with a calibrated confidence; the scenarios' slot extractors say what values it gives;
and values said anywhere (``understanding.values``) are read as values, whatever words
surround them. What comes out is the command language the model generator speaks too; the
engine applies either.

The reader is built in three layers: ``slot_reading`` (what a message gives a task's slots),
``requests`` (the requests of a message nothing waits a yes for) and this module (hand-offs,
courtesies, and the answer to a pending confirmation).

- **A changed value is a correction, by construction.** At a confirmation and while a task
  collects its slots, a value of the task's own that differs from the one it holds is a
  ``CorrectSlot`` ("hmm, 60 instead", "send less, 60 will do", "not the 20th, the 21st"): a value a
  negator takes back ("not 80") is not the new one, and a second different value asks again.
- **Values before cues.** A message that is only values which fit exactly one task starts it
  ("ACC-2001 500"); an answer to the waiting task is read as that task's values.
- **Several requests, several values.** A message is cut into clauses (the lexicon's
  connectors); a clause starts a request of its own when the recognizer is sure of its task,
  any other clause belongs to the request before it (", password 123456"); a slot named twice
  ("Beijing and Shanghai") is one task per value. In a message of several requests a clause a
  negator takes back ("no refund, just hurry it up") asks for nothing.
"""

from __future__ import annotations

from contract.scenario import UNKNOWN
from understanding.classifier import Ranked
from understanding.clause_commands import (
    ANSWERS_CONFIDENCE,
    FoundSlots,
    cannot_tell,
    offer_taken,
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
    Start,
)
from understanding.lexical import clauses, hesitant, is_firm_no, opens_with_yes, plain_answer
from understanding.recognizer import (
    ACT,
    BEYOND,
    IntentResult,
    detect_language,
)
from understanding.requests import CLAUSE_SURE, RequestReader
from understanding.values import values_in
from understanding.view import DialogueView

ACT_SURE = 0.6
YES_SURE = 0.85
"""How sure of a yes in other words before a pending action runs on it ("sounds good, do
it"): a hesitation ("hmm, let me think", "ok but wait") must never pass for one."""
"""How sure the recognizer must be of a dialogue act that ends or hands over the turn."""
HANDOFF_SURE = 0.9
"""How sure of a request for a person when the message also looks like a task: a typo in a
request ("I want a refnd") must not end in a queue for a human."""
TASK_LIKE = 0.1
"""A task this likely makes a request for a person need ``HANDOFF_SURE``."""
NARROW_MARGIN = 0.2
"""Two tasks this close are a small margin: in mixed mode, the model settles it."""
PLACED_FLOOR = 0.3
"""A clause this likely to be a request, left without a command, is unplaced."""
VALUED_FLOOR = 0.3
"""How likely the nearest task must be for its values to decide an unsure reading."""
NEVER_MIND_YIELDS = 0.05
"""How likely a task must be for a "never mind" or a "no" with nothing waiting to be read as
a request ("please cancel it" after a lookup, where a cancel task exists): the tasks read it,
or say they cannot tell and ask. A plain "never mind" gives every task about nothing."""
SECRET_SHOWN = "******"
_HANDED_OVER = {f"{ACT}human": "user_request", f"{ACT}complaint": "complaint"}
_COURTESIES = {f"{ACT}greet": "greet", f"{ACT}thanks": "thanks", f"{ACT}bye": "bye"}


class Reader(RequestReader):
    """Commands from the recognizer, the scenarios' extractors and values; no model."""

    source = "rules"

    # ---- the generator -----------------------------------------------------------------
    def generate(self, text: str, view: DialogueView) -> Reading:
        """Read one message (its secrets revealed) against the conversation's state."""
        language = detect_language(text)
        commands = tuple(self._commands(text, view))
        return Reading(commands, language, source="rules", unsure=self._unsure(text, commands))

    def _unsure(self, text: str, commands: tuple[Command, ...]) -> bool:
        """Two tasks nearly as likely, or a clause that reads as a request nobody took."""
        if any(c.kind in ("confirm", "reject", "handoff", "chitchat", "cancel") for c in commands):
            return False
        parts = clauses(text)
        readings = self.recognizer.read([text, *parts] if len(parts) > 1 else [text])
        whole = readings[0]
        tasks = self.recognizer.tasks_of(whole)
        if len(tasks.labels) > 1 and self.recognizer.is_task(whole.best):
            runner_up = whole.prob(tasks.labels[1])
            if whole.confidence - runner_up < NARROW_MARGIN:
                return True
        taken = {getattr(c, "intent", None) for c in commands}
        return any(
            self.recognizer.is_task(r.best)
            and PLACED_FLOOR <= r.confidence < self.threshold
            and r.best not in taken
            for r in readings[1:]
        )

    def reconsider(self, text: str, view: DialogueView) -> Reading:
        """Look again at an unsure message: what the waiting task asked for, then the tasks."""
        language = detect_language(text)
        waiting = view.waiting
        if waiting is not None and waiting.missing:
            found = self.slots_for(text, waiting.intent, waiting)
            if found.fills:
                return Reading(
                    (self._answer(found, waiting, "answers the pending question"),), language
                )
        result = self.recognizer.reconsider(text, pending_intent=None, missing_slots=[])
        if result.intent == UNKNOWN:
            valued = self._valued_nearest(text)
            if valued is None:
                return Reading((cannot_tell(result),), language)
            result = valued
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

    def _valued_nearest(self, text: str) -> IntentResult | None:
        """The nearest task, when the message gives it a value and the next one none.

        "whats the wheather in hangzhou" is weather at 0.57: its city decides it. Values
        the two nearest tasks both take ("I want to go to Beijing": a city) decide nothing.
        """
        ranked = self.recognizer.tasks_of(self.recognizer.read([text])[0])
        whole = self.recognizer.read([text])[0]
        if len(ranked.labels) < 1 or whole.prob(ranked.best) < VALUED_FLOOR:
            return None
        takes = [
            bool(
                set(self._extract(text, intent).slots)
                & set(self.catalog.tasks[intent].required_slots)
            )
            for intent in ranked.labels[:2]
        ]
        if not takes[0] or (len(takes) > 1 and takes[1]):
            return None
        return IntentResult(
            intent=ranked.best,
            confidence=self.threshold,
            language=detect_language(text),
            evidence=(f"nearest task {ranked.best}", "its values"),
            candidates=tuple(ranked.labels[:2]),
        )

    def classify(self, text: str) -> IntentResult:
        """The recognizer's intent of ``text`` on its own."""
        return self.recognizer.classify(text)

    # ---- reading ------------------------------------------------------------------------
    def _commands(self, text: str, view: DialogueView) -> list[Command]:
        parts = clauses(text)
        ranked = (
            self.recognizer.read([text, *parts]) if len(parts) > 1 else self.recognizer.read([text])
        )
        whole = ranked[0]
        handoff = self._handoff(whole, ranked[1:], view, text)
        if handoff is not None:
            return [handoff]
        if view.pending is not None:
            return self._at_pending(text, view, whole)
        taken = offer_taken(text, view)
        if taken is not None:
            return [taken]
        act = self._act(text, whole, ranked[1:], view)
        if act is not None:
            return [act]
        return self._tasks(text, view, whole)

    def _handoff(
        self, whole: Ranked, parts: list[Ranked], view: DialogueView, text: str
    ) -> HandOff | None:
        """A person asked for or complained to, anywhere; a request no tool here serves.

        An answer to the waiting task is that answer, whatever it sounds like ("make it 196").
        """
        tasks = self.recognizer.tasks_of(whole)
        task_like = whole.prob(tasks.best) if tasks.labels else 0.0
        sure_whole = ACT_SURE if task_like < TASK_LIKE else HANDOFF_SURE
        for reading, sure in ((whole, sure_whole), *((p, CLAUSE_SURE) for p in parts)):
            reason = _HANDED_OVER.get(reading.best)
            if reason is not None and reading.confidence >= sure:
                return HandOff(reason=reason, evidence=(reading.best,))  # type: ignore[arg-type]
        if view.pending is not None:
            return None
        waiting = view.waiting
        if waiting is not None:
            found = self.slots_for(text, waiting.intent, waiting)
            if found.fills or found.changed:
                return None
        task_sure = self.recognizer.is_task(whole.best) and whole.confidence >= self.threshold
        readings = [(whole, self.threshold)]
        if not task_sure:
            readings += [(p, CLAUSE_SURE) for p in parts]
        for reading, sure in readings:
            if reading.best.startswith(BEYOND) and reading.confidence >= sure:
                name = reading.best.removeprefix(BEYOND)
                if any(b.name == name for s in self.catalog.scenarios for b in s.beyond):
                    return HandOff(reason="not_served", request=name, evidence=(name,))
        return None

    def _act(
        self, text: str, whole: Ranked, parts: list[Ranked], view: DialogueView
    ) -> Command | None:
        """A courtesy or a "never mind" that is all the message says.

        A message that gives some task a value ("Beijing", "OD-…") is about that task,
        whatever else it sounds like.
        """
        if any(self.recognizer.is_task(p.best) and p.confidence >= self.threshold for p in parts):
            return None
        best = whole.best
        if values_in(text) or self._gives_values(text, view):
            return None
        if whole.confidence < ACT_SURE or not best.startswith(ACT):
            if plain_answer(text) == "approve":
                return Confirm(evidence=(text.strip()[:40],))  # a yes with nothing waiting
            return None
        if best in _COURTESIES:
            said = [p.best for p in parts if p.best in _COURTESIES and p.confidence >= ACT_SURE]
            last = said[-1] if said else best  # "thanks, bye": the goodbye closes it
            return ChitChat(act=_COURTESIES[last], evidence=(last,))  # type: ignore[arg-type]
        if best in (f"{ACT}never_mind", f"{ACT}deny"):  # nothing waits: "no thanks" ends it
            tasks = self.recognizer.tasks_of(whole)
            idle = view.waiting is None and not view.queued and not view.suspended
            if idle and tasks.labels and whole.prob(tasks.best) >= NEVER_MIND_YIELDS:
                return None  # nothing to drop, and a task is plausible: the tasks read it
            return Cancel(evidence=(best,))
        if best == f"{ACT}affirm" and not hesitant(text):
            return Confirm(evidence=(text.strip()[:40],))
        return None

    def _gives_values(self, text: str, view: DialogueView) -> bool:
        """The message answers the waiting task ("Beijing" after "which city?")."""
        waiting = view.waiting
        if waiting is None:
            return False
        found = self.slots_for(text, waiting.intent, waiting)
        return found.fills or bool(found.changed)

    def _at_pending(self, text: str, view: DialogueView, whole: Ranked) -> list[Command]:
        """A yes, a no, a correction of the pending action, or a new request."""
        pending = view.pending
        assert pending is not None
        answer = plain_answer(text)
        new_request = (
            answer is None
            and self.recognizer.is_task(whole.best)
            and whole.best != pending.intent
            and whole.confidence >= self.threshold
        )
        found = self.slots_for(text, pending.intent, pending)
        # a new value, or one that cannot be used ("12 hours" where 1 to 8 may be): asked
        # again before the action is put to the user again
        if (found.changed or found.invalid) and not new_request and answer is None:
            if found.ambiguous:
                return [CannotTell(evidence=("two new values", *found.ambiguous))]
            if not (is_firm_no(text) and whole.best in (f"{ACT}never_mind", f"{ACT}deny")):
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
            return self._tasks(text, DialogueView(language=view.language, last=view.last), whole)
        spec = self.catalog.task(pending.intent)
        if opens_with_yes(text) and not found.changed:  # "ok go ahead with the refund"
            return [Confirm(evidence=(text.strip()[:40],))]
        if (
            whole.best in (f"{ACT}correct", pending.intent)
            and not values_in(text)
            and spec is not None
            and spec.suggest is not None
        ):
            # "no, the hot pot order": no value, but another of the user's records; the slots
            # the records gave are looked up again from these words
            return [
                CorrectSlot(
                    slots=dict.fromkeys(spec.required_slots),
                    intent=pending.intent,
                    confidence=ANSWERS_CONFIDENCE,
                    evidence=("corrects the pending action", "looks the records up again"),
                )
            ]
        if not found.changed:
            if whole.best == f"{ACT}affirm" and whole.confidence >= YES_SURE and not hesitant(text):
                return [Confirm(evidence=(text.strip()[:40],))]
            if whole.best in (f"{ACT}deny", f"{ACT}never_mind") and whole.confidence >= ACT_SURE:
                return [Reject(evidence=(text.strip()[:40],))]
        return [CannotTell(evidence=("neither yes nor no",))]


RuleCommandGenerator = Reader
"""The name the model generators still use for the reader they fall back on."""

__all__ = ["ANSWERS_CONFIDENCE", "FoundSlots", "Reader", "RuleCommandGenerator"]
