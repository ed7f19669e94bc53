"""The model generator: one structured call a turn, over any OpenAI-compatible endpoint.

The model sees the tasks it may start (with their slots), the task waiting for slots, the
action pending confirmation with its values, and the message (secrets masked); it answers
with a list of commands in a JSON schema (``method="json_schema"``, which llama-server turns
into a grammar). One call a turn is the budget: on CPU each costs the user seconds.

Everything the model says is untrusted and checked before the engine sees it:

- a task must be one the scenarios serve; a slot one of that task's;
- a slot value must be evidenced by the message (``understanding.evidence.slot_supported``)
  and is then normalized by the scenario's own extractor ("50" → 5000 cents, "the 21st" →
  a date); a secret (PIN, ID number) only ever comes from the rules, and an on-request slot
  (a notification) only when the rules heard it asked for;
- a ``confirm`` counts only when the rules read a yes too: a model's misreading never
  approves a payment (a ``reject`` is safe to take);
- any failure (timeout, HTTP error, a refusal, output that does not parse) is answered by
  the rules' reading, the error recorded.

What the rules decide alone is never sent: a courtesy, a request for a person, a clear yes
or no, a correction the rules read. In ``mixed`` mode the model is asked only when the rules
are unsure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import date
from typing import Any, get_args

from config.limits import JsonObject, JsonValue
from contract.scenario import ScenarioSet
from security.pii import mask_pii
from state import SlotValues
from understanding.chat import chat_model_for, parse_choice
from understanding.clause_commands import OFFER_TAKEN
from understanding.commands import (
    Cancel,
    CannotTell,
    Clarify,
    Command,
    CommandKind,
    CorrectSlot,
    HandOff,
    Reading,
    Reject,
    SetSlot,
    Start,
)
from understanding.evidence import (
    P_NO_LOGPROBS,
    evidence_confidence,
    label_probability,
    normalize,
    slot_supported,
)
from understanding.generator import CommandGenerator
from understanding.model_base import (
    Method,
    ModelFailure,
    StructuredCommands,
    commands_schema,
    fallback,
    value_pairs,
    whole_number,
)
from understanding.model_prompt import TaskOption, implied_task, situation, task_options
from understanding.reader import RuleCommandGenerator
from understanding.recognizer import IntentResult
from understanding.reconcile import Placed, Proposal, on_stack, settle, split_values
from understanding.view import DialogueView, TaskView

MODEL_KINDS = tuple(kind for kind in get_args(CommandKind) if kind != "chitchat")
"""What the model may say (a courtesy is the rules' to read: it is never sent)."""
SURE_READER = 0.9
"""A reading the reader is this sure of stands when the model reads the message otherwise: a
small model second-guessing it lost more than it found (issue 37's fresh round: the local
model on every turn 48/60 on its first run, the reader alone 50/60)."""
NO_TASK = "none"
MAX_COMMANDS = 4


class ModelCommandGenerator(StructuredCommands):
    """Commands from a chat model in one structured call; the rules check and back it up."""

    def __init__(
        self,
        llm: Any,
        catalog: ScenarioSet,
        rules: RuleCommandGenerator,
        *,
        mixed: bool = False,
        threshold: float = 0.6,
        today: Callable[[], date] = date.today,
        method: Method = "json_schema",
    ) -> None:
        """Keep the model, the tasks it may name, and the rules it is checked against."""
        self.catalog = catalog
        self.rules = rules
        self.mixed = mixed
        self.threshold = threshold
        self.today = today
        self.options = {option.intent: option for option in task_options(catalog)}
        self._sensitive = {intent: option.sensitive for intent, option in self.options.items()}
        self.system_prompt = self._prompt()
        super().__init__(llm, self._schema(), method=method)

    # ---- the generator -----------------------------------------------------------------
    def generate(self, text: str, view: DialogueView) -> Reading:
        """Read the message; ask the model unless the rules' reading settles it."""
        rules = self.rules.generate(text, view)
        if self._settled(rules, view):
            return rules
        if self.mixed and len(rules.of_kind("start", "set", "correct")) <= 1:
            again = self.rules.reconsider(text, view)  # as reflect-refine looks (a homophone typo)
            if not again.of_kind("cannot_tell") and again.confidence >= self.threshold:
                return again
        try:
            parsed, raw = self.ask(self.system_prompt, situation(view, mask_pii(text)))
        except ModelFailure as failure:
            return fallback(rules, str(failure))
        commands, refused = self._checked(parsed, raw, text, view, rules)
        if not commands:
            return fallback(rules, "invalid output: no usable command")
        if {c.kind for c in commands} == {"handoff"} and rules.confidence >= self.threshold:
            # the rules hear every ask for a person ("a human, please": settled above, no
            # call); the local model handed "get me an appointment" over, which the rules
            # read as a booking, sure
            error = "a hand-off nobody asked for: the rules' reading is taken"
            return replace(rules, source="rules", error=error, model_calls=1)
        if _sure(rules) and _gist(commands) != _gist(rules.commands):
            # the reader is sure and the model reads it otherwise: the reader's stands
            error = "the reader was sure; the model's reading differed and was not taken"
            return replace(rules, source="rules", error=error, model_calls=1)
        return Reading(
            tuple(commands),
            rules.language,
            source="model",
            model_calls=1,
            prompt_tokens=self.tokens(raw),
            refused=refused,
        )

    def reconsider(self, text: str, view: DialogueView) -> Reading:
        """A second look is the rules' alone: the turn's model call is spent."""
        return self.rules.reconsider(text, view)

    def _settled(self, rules: Reading, view: DialogueView) -> bool:
        """The rules decide alone: acts, a clear yes or no, a correction they read."""
        kinds = {c.kind for c in rules.commands}
        if kinds & {"handoff", "chitchat", "cancel", "confirm", "reject"}:
            return True
        if view.pending is not None and "correct" in kinds:
            return True
        if any(c.evidence[:1] == (OFFER_TAKEN,) for c in rules.commands):
            return True  # a plain yes to the one value a question offered
        if not self.mixed:
            return False
        unsure = "cannot_tell" in kinds or rules.confidence < self.threshold or rules.unsure
        return not unsure

    # ---- the prompt ----------------------------------------------------------------------
    def _prompt(self) -> str:
        lines = [
            "You read one customer message and say what it does, as commands for a service "
            "agent. Answer in JSON.",
            "Kinds: start = asks for a task now; set = answers what the waiting task asks; "
            "correct = changes a value given before (also while an action waits for a yes); "
            "cancel = drops a task; confirm / reject = yes / no to the action waiting; "
            "clarify = could be two tasks; handoff = wants a person or complains; "
            "cannot_tell = none of the tasks.",
            "Several requests, or two cities or orders, are several commands. Copy slot values "
            "as the user wrote them; never invent one. Leave out slots not in the message.",
            "Tasks (slots):",
        ]
        for option in self.options.values():
            slots = ", ".join(f"{n}: {d}" for n, d in option.slots.items()) or "no slots"
            lines.append(f"- {option.intent} = {option.label} ({slots})")
        return "\n".join(lines)

    def _schema(self) -> dict[str, JsonValue]:
        return commands_schema(
            kinds=MODEL_KINDS,
            target="task",
            targets=[*self.options, NO_TASK],
            values="slots",
            names=sorted({name for o in self.options.values() for name in o.slots}),
            max_commands=MAX_COMMANDS,
            max_values=6,
            description="What the message does to the conversation.",
        )

    # ---- checking what came back ------------------------------------------------------------
    def _checked(
        self,
        parsed: JsonObject,  # the model's output, unchecked: the checks are here
        raw: Any,
        text: str,
        view: DialogueView,
        rules: Reading,
    ) -> tuple[list[Command], dict[str, str]]:
        """The model's commands that survive the checks, each task command in its place.

        Values are checked against the message here; whether a task command starts, fills
        or corrects is the task stack's to say (``understanding.reconcile``).
        """
        classified = self.rules.classify(text)
        logprobs = (getattr(raw, "response_metadata", None) or {}).get("logprobs")
        others: list[tuple[int, Command | None]] = []
        proposals: list[Proposal] = []
        refused: dict[str, str] = {}
        for order, item in enumerate(parsed["commands"][:MAX_COMMANDS]):
            if not isinstance(item, dict):
                continue
            kind, intent = str(item.get("kind", "")), str(item.get("task", NO_TASK))
            option = self.options.get(intent)
            if kind in ("start", "set", "correct") and option is None:
                target = implied_task(view, kind)
                option = self.options.get(target.intent) if target is not None else None
                intent = option.intent if option is not None else intent
            pairs = value_pairs(item.get("slots"))
            owner = self._owner(option, pairs)
            if owner is not None and kind in ("start", "set", "correct", "clarify"):
                # values of another task's slots ("Beijing" as the city of an order check):
                # the task whose slots they are is the one meant
                option, intent, kind = owner, owner.intent, "start"
            others_named = [c for c in classified.candidates if c != intent]
            if kind == "clarify" and option is not None and (pairs or not others_named):
                kind = "start"  # a "choice" of one task, with its values, is that task
            if kind == "cancel" and option is not None and not on_stack(view, intent):
                # nothing of that task to drop: "cancel order …", "refund … for me" ask for a task;
                # what the rules heard asked for is taken, else it stays a "never mind"
                asked = [c for c in rules.commands if isinstance(c, Start)]
                for start in asked:
                    proposals.append(Proposal(order, "start", start.intent, start.slots))
                if asked:
                    continue
            if kind in ("start", "set", "correct") and option is not None:
                for group in split_values(pairs):
                    values, bad = self._values(option, group, text, view.known(intent))
                    refused.update(bad)
                    proposals.append(Proposal(order, kind, intent, values, bad))  # type: ignore[arg-type]
                continue
            command = self._other(kind, intent, option, view, classified, others_named)
            if command is not None:
                others.append((order, command))
        placed = settle(proposals, view, rules, sensitive=self._sensitive, threshold=self.threshold)
        rules_starts = {c.intent for c in rules.commands if isinstance(c, Start)}
        tasks = [
            (item.order, self._command(item, logprobs, classified, rules_starts)) for item in placed
        ]
        ordered = sorted([*tasks, *others], key=lambda pair: pair[0])
        commands = [c for _, c in ordered if c is not None]
        if len(commands) > 1:
            commands = [c for c in commands if c.kind != "cannot_tell"] or commands[:1]
        return commands, refused

    def _owner(
        self, option: TaskOption | None, pairs: Sequence[tuple[str, str]]
    ) -> TaskOption | None:
        """The one task whose slots the pairs name, when the task named has none of them."""
        names = {name for name, _ in pairs}
        if not names or (option is not None and names & set(option.slots)):
            return None
        owners = [o for o in self.options.values() if names <= set(o.slots)]
        return owners[0] if len(owners) == 1 else None

    def _command(
        self,
        item: Placed,
        logprobs: Any,
        classified: IntentResult,
        rules_starts: set[str],
    ) -> Command | None:
        confidence = self._confidence(
            item.kind, item.intent, logprobs, classified, item.values, item.refused
        )
        if item.kind in ("start", "set") and item.intent in rules_starts:
            confidence = max(confidence, self.threshold)
        evidence = (f"model:{item.kind}:{item.intent}",)
        if item.kind == "start":
            return Start(
                intent=item.intent,
                slots=item.values,
                follows_up=item.follows_up,
                confidence=confidence,
                evidence=evidence,
            )
        if item.kind == "set":
            return SetSlot(
                intent=item.intent, slots=item.values, confidence=confidence, evidence=evidence
            )
        if not item.values:
            return None
        return CorrectSlot(
            intent=item.intent, slots=item.values, confidence=confidence, evidence=evidence
        )

    def _other(
        self,
        kind: str,
        intent: str,
        option: TaskOption | None,
        view: DialogueView,
        classified: IntentResult,
        others_named: list[str],
    ) -> Command | None:
        """A command that names no slots: cancel, yes / no, a choice, a person, nothing."""
        if kind == "cancel":
            return Cancel(intent=intent if option else None, evidence=("model",))
        if kind == "reject" and view.pending is not None:
            return Reject(evidence=("model",))
        if kind == "confirm" and view.pending is not None:
            # a yes the rules did not hear: asked again, never taken from the model alone
            return CannotTell(evidence=("model:confirm unheard by the rules",))
        if kind == "clarify" and option is not None:
            return Clarify(intents=(intent, *others_named), evidence=("model",))
        if kind == "handoff":
            return HandOff(reason="user_request", evidence=("model",))
        if kind == "cannot_tell":
            return CannotTell(
                candidates=classified.candidates,
                confidence=min(classified.confidence, 0.3),
                evidence=("model",),
            )
        return None

    def _values(
        self,
        option: TaskOption,
        pairs: Sequence[tuple[str, str]],
        text: str,
        known: Mapping[str, Any],
    ) -> tuple[SlotValues, dict[str, str]]:
        """Keep the evidenced values, normalized by the scenario's extractor."""
        heard = self.rules.slots_for(text, option.intent, TaskView(option.intent, known))
        values: SlotValues = {}
        refused: dict[str, str] = {}
        for name, value in pairs:
            if name not in option.slots or not value.strip():
                continue
            if name in option.sensitive or name in option.flags:
                if name in heard.slots:  # secrets and asked-for extras: only what rules heard
                    values[name] = heard.slots[name]
                else:
                    refused[name] = "******" if name in option.sensitive else value
                continue
            normal = self._normalized(option.intent, name, value, text, heard.slots)
            if normal is None:
                refused[name] = value
            else:
                values[name] = normal
        for name in option.flags:  # asked for in words the rules know, whatever the model said
            if name in heard.slots and name not in values:
                values[name] = heard.slots[name]
        return values, refused

    def _normalized(
        self, intent: str, name: str, value: str, text: str, heard: Mapping[str, Any]
    ) -> Any:
        """The slot value ``value`` stands for, or ``None`` when the message does not say it."""
        today = self.today()
        said = normalize(value) and normalize(value) in normalize(text)
        if re.fullmatch(r"\d+(?:\.\d+)?", value.strip()):
            # a number is evidenced only as a whole number of the message: the "0" of
            # "ACC-2001" is no amount (the local model answered 0 for "transfer to ACC-2001")
            said = whole_number(value.strip(), text)
        if said:
            read = self.catalog.extract(value, intent, today=today).slots.get(name)
            return read if read is not None else value.strip()
        if name in heard and (str(heard[name]) == value or name.endswith("_cents")):
            return heard[name]
        if slot_supported(name, value, text, today=today):
            if name.endswith("_cents") and re.fullmatch(r"\d+(?:\.\d+)?", value):
                return round(float(value))
            read = self.catalog.extract(value, intent, today=today).slots.get(name)
            return read if read is not None else value.strip()
        return None

    def _confidence(
        self,
        kind: str,
        intent: str,
        logprobs: Any,
        classified: IntentResult,
        values: Mapping[str, Any],
        refused: Mapping[str, str],
    ) -> float:
        if kind in ("set", "correct"):
            return 0.9 if values else 0.3
        p = label_probability(logprobs, intent)
        return evidence_confidence(
            p if p is not None else P_NO_LOGPROBS,
            intent,
            classified,
            slot_evidence=bool(values),
            refused_slots=len(refused),
        )


def _sure(reading: Reading) -> bool:
    """The reader is sure of every task it read, and says nothing left it unsure."""
    kinds = {c.kind for c in reading.commands}
    return (
        bool(kinds & {"start", "set", "correct"})
        and "cannot_tell" not in kinds
        and not reading.unsure
        and reading.confidence >= SURE_READER
    )


def _gist(commands: Sequence[Command]) -> set[tuple[str, str | None]]:
    """What a reading does, leaving its values aside: each command's kind and task."""
    return {(c.kind, getattr(c, "intent", None)) for c in commands}


def build_generator(
    choice: str,
    settings: Any,
    catalog: ScenarioSet,
    rules: RuleCommandGenerator,
    *,
    llm: Any = None,
) -> CommandGenerator:
    """The generator ``choice`` names: the rules, a model over them, or ``mixed``."""
    name, mixed = parse_choice(choice)
    if name is None:
        return rules
    model = llm if llm is not None else chat_model_for(choice, settings)
    return ModelCommandGenerator(
        model, catalog, rules, mixed=mixed, threshold=rules.threshold, today=rules.today
    )


__all__ = [
    "ModelCommandGenerator",
    "TaskOption",
    "build_generator",
    "task_options",
]
