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
   rules are unsure, or a started task needs a free-form value they cannot read. Its prompt
   is a fixed part (instructions, the **policy**, the tools with their example requests)
   that a server's prompt cache keeps, and the situation (today, the latest turns, what
   waits, the message), held within ``budget_tokens``.

What the model says is checked: a tool must be the pack's, a parameter that tool's; a value
must be **grounded** — in the message, in the conversation shown, among the choices the
parameter allows, or the value the message gives by type (a date said "June 20") — else it
is dropped and the agent asks for it; a model's ``confirm`` approves nothing. A model that
cannot answer (timeout, error) leaves the rules' reading, marked so that the user hears the
model was unavailable, never that they were unclear.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import date
from typing import Any

from contract.scenario import Examples
from packs.grounding import grounded, param_hint
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
    commands_schema,
    fallback,
    grounded_in,
    value_pairs,
)
from understanding.reader import RuleCommandGenerator
from understanding.view import DialogueView, TaskView

KINDS = ("start", "set", "correct", "cancel", "confirm", "reject", "handoff", "cannot_tell")
NO_TOOL = "none"
MAX_COMMANDS = 3
BUDGET_TOKENS = 3500
"""The prompt's ceiling (fixed part and situation), in estimated tokens."""
CHARS_PER_TOKEN = 3.0
"""A cautious estimate: ids and JSON tokenize densely (a digit is often a token)."""
TURN_CHARS = 1600
"""Longest single turn shown; a longer one keeps its start."""
SITUATION_MIN_TOKENS = 900
"""What the situation always keeps room for; the policy is cut to leave it."""
EXAMPLES_SHOWN = 2
"""Example requests shown per tool and language in the prompt."""
START_CONFIDENCE = 0.9
NAMED_CONFIDENCE = 0.85
"""A task named by a value only it takes."""
UNSURE_CONFIDENCE = 0.5
"""The same before the model has had its say: below the threshold, so it is asked."""

INSTRUCTIONS = (
    "You are the understanding step of a customer-service agent. Read the customer's latest "
    "message in the light of the conversation and say, as JSON commands, which tool call it "
    "asks for. You never write to the customer: the agent asks for missing values itself, "
    "and asks for a yes before any change.\n"
    "Kinds: start = call a tool now (give every argument the conversation already shows); "
    "set = gives what the waiting call asks for; correct = changes a value of the waiting or "
    "pending call; cancel = drops the waiting call; reject = says no to the pending call; "
    "handoff = wants a human agent, or the policy says to transfer; cannot_tell = no tool fits.\n"
    "Pick the tool that does what the customer asks: to book, freeze, cancel or change "
    "something, start that write (the agent looks up what it needs); a lookup only when the "
    "customer asks to see something. Follow the policy. Copy values exactly as written in "
    "the conversation or a result; never invent one; leave out what is not known yet. "
    "Dates as YYYY-MM-DD. A list value is a JSON list."
)


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
        self.system_prompt = self._prompt(policy)
        self.model = (
            StructuredCommands(llm, self._schema(), method=method) if llm is not None else None
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
        try:
            parsed, raw = self.model.ask(self.system_prompt, self.situation(view, text))
        except ModelFailure as failure:
            return fallback(rules, str(failure))
        commands, refused = self._checked(parsed, text, view)
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
        """The rules decide alone: a yes or no, a correction, an act, an answer, a sure task."""
        kinds = {c.kind for c in rules.commands}
        if view.pending is not None and kinds & {"confirm", "reject", "correct"}:
            return True
        if kinds & {"handoff", "cancel"} or kinds == {"chitchat"}:
            return True
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

    def _needs_words(self, start: Start) -> bool:
        """A started task misses a value no type reads (a name, a reason): the model's."""
        card = self.cards.get(start.intent)
        if card is None:
            return False
        readers = self.values.readers(start.intent)
        return any(
            info.is_required() and name not in start.slots and readers[name].kind == "free"
            for name, info in card.parameters.model_fields.items()
        )

    # ---- what the pack adds to any reading --------------------------------------------------
    def completed(
        self, commands: Sequence[Command], text: str, view: DialogueView, *, sure: bool = True
    ) -> list[Command]:
        """Commands with the typed values, the tools named by value, the carried values.

        - A write a value names alone ("C-0620-YOGA": only the booking takes a class id)
          starts when nothing asks for it yet; a read so named ("What's on June 21": the one
          tool that takes a date) when its clause is no other task's. Beside a write so
          named, a start with no value from the message (a guess) is dropped.
        - A read started to find what another started task misses (the member of "我是
          138…，帮我约 C-0621-HIIT") is dropped: the task looks it up itself
          (``TaskSpec.suggest``) and goes on; so is a read with no value from the message
          whose result the other task takes (a guessed list of classes beside a booking).

        ``sure``: the reading is final (no model will be asked), so a named start is sure.
        """
        today = self.today()
        typed = [self._typed(c, text, view, today) for c in commands]
        named = self.values.named(text, today=today)
        targeted = {getattr(c, "intent", None) for c in typed}
        targeted |= {task.intent for task in (view.waiting, view.pending) if task is not None}
        tasks = [c for c in typed if isinstance(c, Start | SetSlot | CorrectSlot)]
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
        for name, value in found.slots.items():
            slots.setdefault(name, value)
        for name, why in found.invalid.items():
            if name not in slots:
                invalid.setdefault(name, why)
        if isinstance(command, Start):
            known = {**slots, **invalid}
            slots.update(self.values.carried(intent, known, view))
        slots = {k: v for k, v in slots.items() if k not in invalid}
        return replace(command, slots=slots, invalid=invalid)

    # ---- the prompt ------------------------------------------------------------------------
    def _prompt(self, policy: str) -> str:
        tools = ["Tools (a write is done only after the customer's yes):"]
        for card in self.cards.values():
            params = ", ".join(
                param_hint(name, info.annotation, info.is_required())
                for name, info in card.parameters.model_fields.items()
            )
            mark = " [write]" if card.writes else ""
            tools.append(f"- {card.name}({params}){mark}: {_first_sentence(card.description)}")
            said = [
                example
                for language in ("en", "zh")
                for example in self.examples.get(card.name, {}).get(language, ())[
                    1 : 1 + EXAMPLES_SHOWN
                ]
            ]
            if said:
                tools.append("  e.g. " + " | ".join(f'"{s}"' for s in said))
        fixed = f"{INSTRUCTIONS}\n" + "\n".join(tools)
        room = int((self.budget_tokens - SITUATION_MIN_TOKENS) * CHARS_PER_TOKEN) - len(fixed)
        return f"{INSTRUCTIONS}\nPolicy:\n{_cut(policy.strip(), room)}\n" + "\n".join(tools)

    def situation(self, view: DialogueView, text: str) -> str:
        """The dynamic part of the prompt, held within what the fixed part leaves."""
        today = self.today()
        tail: list[str] = []
        if view.pending is not None:
            tail.append(f"Waiting for a yes or no: {view.pending.intent}({_shown(view.pending)})")
        if view.waiting is not None:
            tail.append(
                f"Waiting call: {view.waiting.intent} needs {', '.join(view.waiting.missing)}; "
                f"has {_shown(view.waiting) or 'nothing'}"
            )
        tail.append(f"Message: {text[:TURN_CHARS]}")
        head = [f"Today: {today.isoformat()} ({today.strftime('%A')})"]
        room = int(self.budget_tokens * CHARS_PER_TOKEN) - len(self.system_prompt)
        room -= sum(len(line) + 1 for line in [*head, *tail])
        turns: list[str] = []
        for who, said in reversed(view.recent):
            line = f"{who}: {' '.join(said.split())[:TURN_CHARS]}"
            if len(line) + 1 > room:
                break
            turns.append(line)
            room -= len(line) + 1
        if turns:
            head += ["Conversation (latest last):", *reversed(turns)]
        return "\n".join([*head, *tail])

    def _schema(self) -> dict[str, Any]:
        names = sorted({n for card in self.cards.values() for n in card.parameters.model_fields})
        return commands_schema(
            kinds=KINDS,
            target="tool",
            targets=[*self.cards, NO_TOOL],
            values="arguments",
            names=names or [NO_TOOL],
            max_commands=MAX_COMMANDS,
            max_values=8,
            description="What the customer's message asks the agent to do.",
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


def _shown(task: TaskView) -> str:
    return ", ".join(f"{k}={v}" for k, v in task.slots.items())


def _first_sentence(text: str) -> str:
    match = re.match(r"(.+?[.!?])(?:\s|$)", " ".join(text.split()))
    return match.group(1) if match else text


def _cut(policy: str, room: int) -> str:
    """The policy, cut at a paragraph to ``room`` characters when it is longer."""
    if len(policy) <= room:
        return policy
    kept = policy[: max(room, 0)]
    end = kept.rfind("\n\n")
    return (kept[:end] if end > 0 else kept) + "\n(policy cut here for length)"


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
