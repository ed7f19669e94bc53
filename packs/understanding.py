"""Understanding for a pack: the rules and typed values first, one model call when unsure.

A pack has no cue tables. What reads its messages, in order:

1. the default reader (``understanding.reader``) over the pack's scenario: a yes, a no, a
   correction, a courtesy, a request for a person, and the tasks its recognizer picks from
   the pack's example requests (``Scenario.examples``), their values read by type
   (``packs.values``): ids, phones, dates, numbers, choices;
2. what the pack adds to any reading (``packs.reading``): a value only one tool takes names
   that tool ("book me into C-0620-YOGA" starts the booking), a task's code-shaped values
   missing from the message come from the conversation before (the member id a lookup just
   said), and a value that breaks its parameter's constraints is ``invalid`` (asked again,
   with why, before anything is put to the user);
3. with a model configured, one structured call (``understanding.model_base``) when the
   rules are unsure, or what they decided leaves out a value words may say that no type
   read (a cancel reason, a choice or a date said in other words): a started task missing
   one, or a "never mind" while the waiting task asks for one. When the model then cannot
   tell, the rules' reading holds. Its prompt (``packs.prompt``) is a fixed part
   (instructions, the **policy**, the tools with their example requests) that a server's
   prompt cache keeps, and the situation (today, the latest turns, what waits, the
   message), held within ``budget_tokens``.

What the model says is checked: a tool must be the pack's, a parameter that tool's; a value
must be **grounded** — in the message, in the conversation shown, among the choices the
parameter allows, or the value the message gives by type (a date said "June 20") — else it
is dropped and the agent asks for it; a model's ``confirm`` approves nothing. A model that
cannot answer (timeout, error) leaves the rules' reading, marked so that the user hears the
model was unavailable, never that they were unclear.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import date
from typing import Any

from contract.scenario import Examples
from packs.grounding import grounded
from packs.prompt import BUDGET_TOKENS, MAX_COMMANDS, NO_TOOL, fixed_prompt, schema, situation
from packs.reading import PackValues
from tools.registry.cards import ToolCard
from understanding.commands import (
    Cancel,
    CannotTell,
    Command,
    CorrectSlot,
    HandOff,
    Reading,
    Reject,
    SetSlot,
    Start,
)
from understanding.lexical import plain_answer
from understanding.model_base import (
    Method,
    ModelFailure,
    StructuredCommands,
    fallback,
    grounded_in,
    value_pairs,
)
from understanding.reader import RuleCommandGenerator
from understanding.view import DialogueView, TaskView

START_CONFIDENCE = 0.9
NAMED_CONFIDENCE = 0.85
"""A task named by a value only it takes."""
UNSURE_CONFIDENCE = 0.5
"""The same before the model has had its say: below the threshold, so it is asked."""


class PackCommandGenerator:
    """Commands for a pack: the rules and typed values, the model when they are unsure."""

    def __init__(
        self,
        llm: Any,
        cards: Sequence[ToolCard],
        policy: str,
        rules: RuleCommandGenerator,
        *,
        examples: Examples | None = None,
        gives: Mapping[str, frozenset[str]] | None = None,
        budget_tokens: int = BUDGET_TOKENS,
        method: Method = "json_schema",
    ) -> None:
        """Keep the cards, the policy, the rules, and the model (``None``: rules alone)."""
        self.cards = {card.name: card for card in cards}
        self.values = PackValues(cards)
        self.rules = rules
        self.examples = examples or {}
        self.gives = dict(gives or {})
        """Read → the fields of its result (what it can look up for another task)."""
        self.budget_tokens = budget_tokens
        self.system_prompt = fixed_prompt(self.cards, self.examples, policy, budget_tokens)
        self.model = (
            StructuredCommands(llm, schema(self.cards), method=method) if llm is not None else None
        )

    @property
    def threshold(self) -> float:
        """How sure a reading must be to need no model."""
        return float(getattr(self.rules, "threshold", 0.6))

    def today(self) -> date:
        """The business date the rules count from."""
        today = getattr(self.rules, "today", None)
        return today() if callable(today) else date.today()

    # ---- the generator -------------------------------------------------------------------
    def generate(self, text: str, view: DialogueView) -> Reading:
        """Read the message: the rules and typed values; the model when they are unsure."""
        heard = self.rules.generate(text, view)
        rules = replace(heard, commands=tuple(self.completed(heard.commands, text, view)))
        if self.model is None:
            return rules
        unsure = replace(
            heard, commands=tuple(self.completed(heard.commands, text, view, sure=False))
        )
        if self._settled(unsure, view, text):
            return unsure
        decided = self._decided(unsure, view)
        try:
            parsed, raw = self.model.ask(self.system_prompt, self.situation(view, text))
        except ModelFailure as failure:
            return fallback(rules, str(failure))
        commands, refused = self._checked(parsed, text, view)
        if decided and commands and all(isinstance(c, CannotTell) for c in commands):
            # asked only for the words of a value, the model found none: the rules' reading
            return replace(rules, model_calls=1, prompt_tokens=self.model.tokens(raw))
        commands = self.completed(commands, text, view)
        if not commands:
            return fallback(rules, "invalid output: no usable command")
        return Reading(
            tuple(commands),
            rules.language or view.language,
            source="model",
            model_calls=1,
            prompt_tokens=self.model.tokens(raw),
            refused=refused,
        )

    def reconsider(self, text: str, view: DialogueView) -> Reading:
        """A second look is the rules' alone (the turn's model call is spent), with values."""
        again = self.rules.reconsider(text, view)
        return replace(again, commands=tuple(self.completed(again.commands, text, view)))

    def _settled(self, rules: Reading, view: DialogueView, text: str) -> bool:
        """The rules decide alone: a yes or no, a correction, an act, an answer, a sure task.

        Not when what they decide leaves out words the message may hold: a sure task that
        misses a value no type reads (``_needs_words``: a reason, a date said in words), or
        a "never mind" while the waiting task asks for such a value ("I no longer need it"
        may be the reason it asked for). The model reads those words (``_decided``).
        """
        kinds = {c.kind for c in rules.commands}
        if view.pending is not None and kinds & {"confirm", "reject", "correct"}:
            return True
        if "handoff" in kinds or kinds == {"chitchat"}:
            return True
        if "cancel" in kinds:
            return not self._asks_words(view.waiting)
        if view.waiting is not None and plain_answer(text) is not None:
            return True  # "好的" to a question: it gives nothing; the question is asked again
        if "cannot_tell" in kinds or not kinds:
            return False
        tasks = rules.of_kind("start", "set", "correct")
        if len(tasks) != len(rules.commands):
            return False
        waiting = view.waiting
        for command in tasks:
            if isinstance(command, SetSlot | CorrectSlot):
                if waiting is None or not set(command.slots) & set(waiting.missing):
                    return False
            elif isinstance(command, Start):
                if command.confidence < self.threshold or self._needs_words(command):
                    return False
        return True

    def _decided(self, rules: Reading, view: DialogueView) -> bool:
        """The rules know what the message asks; only a value in words may be left to read.

        The model is then asked for those words; if it cannot tell, the rules' reading holds.
        """
        kinds = {c.kind for c in rules.commands}
        if "cancel" in kinds:
            return True
        starts = rules.of_kind("start")
        return (
            bool(starts)
            and len(starts) == len(rules.commands)
            and all(isinstance(c, Start) and c.confidence >= self.threshold for c in starts)
        )

    def _needs_words(self, start: Start) -> bool:
        """A started task misses a value words may say that no type reads in this message.

        A free text (a name, a note), a choice said in other words ("I ordered it by
        mistake"), a date or a number said in words ("the day after my birthday"): only a
        code-shaped value is never the model's to find (it is carried or looked up).
        """
        card = self.cards.get(start.intent)
        if card is None:
            return False
        return bool(self._words_missing(start.intent, {*start.slots, *start.invalid}))

    def _asks_words(self, task: TaskView | None) -> bool:
        """The waiting task asks for a value words may say (see ``_needs_words``)."""
        if task is None or task.intent not in self.cards:
            return False
        return bool(self._words_missing(task.intent, set(task.slots)) & set(task.missing))

    def _words_missing(self, intent: str, have: set[str]) -> set[str]:
        """The required parameters of ``intent`` not in ``have`` that are no code."""
        readers = self.values.readers(intent)
        return {
            name
            for name in self.values.required.get(intent, ())
            if name not in have and name in readers and readers[name].kind != "shape"
        }

    # ---- what the pack adds to any reading --------------------------------------------------
    def completed(
        self, commands: Sequence[Command], text: str, view: DialogueView, *, sure: bool = True
    ) -> list[Command]:
        """Commands with the typed values, the tools named by value, the carried values.

        - A write a value names alone ("C-0620-YOGA": only the booking takes a class id)
          starts when nothing asks for it yet; a read so named ("What's on June 21": the one
          tool that takes a date) when its clause is no other task's. Beside a write so
          named, a start with no value from the message (a guess) is dropped.
        - A start the rules guessed (a follow-up of the last request, or unsure) that the
          message does not complete yields to the tool its values name: "B-0001 在哪" after
          a rental is the bike's lookup, not the rental again with the hours of before.
        - A read started to find what another started task misses (the member of "我是
          138…，帮我约 C-0621-HIIT") is dropped: the task looks it up itself
          (``TaskSpec.suggest``) and goes on; so is a read with no value from the message
          whose result the other task takes (a guessed list of classes beside a booking).

        ``sure``: the reading is final (no model will be asked), so a named start is sure.
        """
        today = self.today()
        typed = [self._typed(c, text, view, today) for c in commands]
        named = self.values.named(text, today=today)
        guessed = {id(c) for c in typed if self._guessed(c, text, today)}
        kept = [c for c in typed if id(c) not in guessed]
        targeted = {getattr(c, "intent", None) for c in kept}
        targeted |= {task.intent for task in (view.waiting, view.pending) if task is not None}
        tasks = [c for c in kept if isinstance(c, Start | SetSlot | CorrectSlot)]
        added: list[str] = []
        for name, (_, clause) in named.items():
            if name in targeted:
                continue
            taken = any(grounded_in(str(v), clause) for c in tasks for v in c.slots.values())
            if self.cards[name].writes or not taken:
                added.append(name)
        writes = any(self.cards[name].writes for name in added)
        out: list[Command] = []
        for command in typed:
            if isinstance(command, CannotTell) and added:
                continue  # the value names the task
            if id(command) in guessed and added:
                continue  # a guess from before ("B-0001 在哪" after a rental): the value's tool
            if isinstance(command, Start) and writes and not self._grounded_start(command, text):
                continue  # a guess beside the write the message names by its value
            out.append(command)
        for name in added:
            found = named[name][0]
            start = Start(
                intent=name,
                slots=found.slots,
                invalid=found.invalid,
                confidence=NAMED_CONFIDENCE if sure else UNSURE_CONFIDENCE,
                evidence=("a value only this tool takes",),
            )
            out.append(self._typed(start, text, view, today))
        return self._without_lookups(out, text)

    def _without_lookups(self, commands: list[Command], text: str) -> list[Command]:
        """Drop the reads started only to feed another started task (see ``completed``)."""
        starts = [c for c in commands if isinstance(c, Start) and c.intent in self.cards]
        if len(starts) < 2:
            return commands
        dropped: set[int] = set()
        for read in starts:
            card = self.cards[read.intent]
            gives = self.gives.get(read.intent, frozenset())
            if card.writes or not gives:
                continue
            for other in starts:
                if other is read or id(other) in dropped:
                    continue
                params = self.cards[other.intent].parameters.model_fields
                missing = {n for n, i in params.items() if i.is_required() and n not in other.slots}
                guessed = not self._grounded_start(read, text)
                if gives & missing or (guessed and gives & set(params)):
                    dropped.add(id(read))
                    break
        return [c for c in commands if id(c) not in dropped]

    def _guessed(self, command: Command, text: str, today: date) -> bool:
        """A start the rules guessed, whose required values the message does not all give.

        A follow-up of the last request (its other values are the request's of before) or a
        start below the threshold: the tool a value of the message names goes first.
        """
        if not isinstance(command, Start) or command.intent not in self.cards:
            return False
        if not command.follows_up and command.confidence >= self.threshold:
            return False
        said = self.values.extract(text, command.intent, today=today)
        given = {*said.slots, *said.invalid, *said.several}
        return not set(self.values.required[command.intent]) <= given

    def _grounded_start(self, start: Start, text: str) -> bool:
        """The start has a value from this message (else it may be a model's guess)."""
        if start.invalid:
            return True  # a value was said, only not a usable one
        said = self.values.extract(text, start.intent, today=self.today()).slots
        return any(
            said.get(name) == value or grounded_in(str(value), text)
            for name, value in start.slots.items()
        )

    def _typed(self, command: Command, text: str, view: DialogueView, today: date) -> Command:
        if not isinstance(command, Start | SetSlot | CorrectSlot):
            return command
        intent = command.intent or (view.pending or view.waiting or TaskView("")).intent
        if intent not in self.cards:
            return command
        found = self.values.extract(text, intent, today=today)
        readers = self.values.readers(intent)
        slots: dict[str, Any] = {}
        invalid = dict(command.invalid)
        for name, value in command.slots.items():
            checked, why = readers[name].check(value) if name in readers else (value, None)
            if why is None:
                slots[name] = checked
            else:
                invalid[name] = f"{value}: {why}"
        # what the message says, read by type, wins over a value it does not say (one carried
        # from the request before, or a model's from the conversation)
        said = {name for name, value in slots.items() if grounded_in(str(value), text)}
        for name, value in found.slots.items():
            if name not in said:
                slots[name] = value
                invalid.pop(name, None)
        for name, why in found.invalid.items():
            if name not in said and name not in found.slots:
                slots.pop(name, None)
                invalid.setdefault(name, why)
        if isinstance(command, Start):
            known = {**slots, **invalid}
            slots.update(self.values.carried(intent, known, view))
        slots = {k: v for k, v in slots.items() if k not in invalid}
        return replace(command, slots=slots, invalid=invalid)

    # ---- the prompt (``packs.prompt``) ------------------------------------------------------
    def situation(self, view: DialogueView, text: str) -> str:
        """The dynamic part of the prompt, held within what the fixed part leaves."""
        return situation(
            view,
            text,
            today=self.today(),
            system_prompt=self.system_prompt,
            budget_tokens=self.budget_tokens,
        )

    # ---- checking what came back ---------------------------------------------------------------
    def _checked(
        self, parsed: Mapping[str, Any], text: str, view: DialogueView
    ) -> tuple[list[Command], dict[str, str]]:
        seen = "\n".join([text, *(said for _, said in view.recent)])
        commands: list[Command] = []
        refused: dict[str, str] = {}
        for item in parsed["commands"][:MAX_COMMANDS]:
            if not isinstance(item, dict):
                continue
            kind, name = str(item.get("kind", "")), str(item.get("tool", NO_TOOL))
            target = _target(view, kind)
            if kind in ("set", "correct") and target is not None and name not in self.cards:
                name = target.intent
            if kind in ("set", "correct") and name in self.cards and not _on_stack(view, name):
                kind = "start"  # the kind follows the task stack: a tool nothing waits on starts
                target = None
            card = self.cards.get(name)
            evidence = (f"model:{kind}:{name}",)
            if kind in ("start", "set", "correct") and card is not None:
                typed_values = self.values.extract(text, name, today=self.today()).slots
                values, bad = grounded(card, value_pairs(item.get("arguments")), seen, typed_values)
                refused.update(bad)
                if kind == "start":
                    commands.append(
                        Start(
                            intent=name,
                            slots=values,
                            confidence=START_CONFIDENCE,
                            evidence=evidence,
                        )
                    )
                elif kind == "set" or target is None:
                    commands.append(SetSlot(intent=name, slots=values, evidence=evidence))
                else:
                    known = view.known(name)
                    changed = {k: v for k, v in values.items() if known.get(k) != v}
                    if changed:
                        commands.append(CorrectSlot(intent=name, slots=changed, evidence=evidence))
            elif kind == "cancel" and not view.idle:
                commands.append(Cancel(intent=name if card else None, evidence=evidence))
            elif kind in ("reject", "confirm") and view.pending is not None:
                # a model's yes is never taken (the rules read a yes); its no is safe to take
                commands.append(
                    Reject(evidence=evidence)
                    if kind == "reject"
                    else CannotTell(evidence=("model:confirm unheard by the rules",))
                )
            elif kind == "handoff":
                commands.append(HandOff(reason="user_request", evidence=evidence))
            elif kind == "cannot_tell":
                commands.append(CannotTell(evidence=evidence))
        if len(commands) > 1:
            commands = [c for c in commands if c.kind != "cannot_tell"] or commands[:1]
        return commands, refused


def _target(view: DialogueView, kind: str) -> TaskView | None:
    if kind not in ("set", "correct"):
        return None
    return view.pending or view.waiting


def _on_stack(view: DialogueView, name: str) -> bool:
    """A call of ``name`` waits for a value or a yes (what a set or correct can change)."""
    return any(task is not None and task.intent == name for task in (view.pending, view.waiting))


def pack_reader(
    cards: Sequence[ToolCard],
    policy: str,
    examples: Examples,
    gives: Mapping[str, frozenset[str]],
) -> Callable[..., PackCommandGenerator]:
    """The scenario's ``commands`` factory: ``(llm or None, rules)`` → its generator.

    ``local``, ``mixed`` and a named model read a pack alike: the rules and typed values
    first, the model only for what they leave unsure (see ``PackCommandGenerator``).
    """

    def build(llm: Any, rules: RuleCommandGenerator) -> PackCommandGenerator:
        return PackCommandGenerator(llm, cards, policy, rules, examples=examples, gives=gives)

    return build


__all__ = ["BUDGET_TOKENS", "PackCommandGenerator", "pack_reader"]
