"""Understanding for a pack: one structured model call a turn, the policy in its prompt.

A pack has no cue tables, so the model reads every message the rules do not settle. Its
prompt is a fixed part (the instructions, the policy, and the tool cards as its options: name,
parameters, one line each; a write is marked as needing a yes), which a server's prompt
cache keeps between calls, and the situation: the latest turns of the conversation (the
agent's replies hold the results of earlier calls, so the ids a call needs), what waits for
a yes, what the waiting call still needs, and the message. The whole prompt is held within
``budget_tokens`` (3,500 by default, under the 4,096 a small local server starts with): the
policy is cut at a paragraph when it is too long, and the oldest turns are dropped first.

What the model says is checked before the engine sees it:

- a tool must be one of the pack's, a parameter one of that tool's; the kind follows the
  task stack (a small model says "set" for a call nothing waits on: that call starts);
- a value must be *grounded*: it appears in the message, in the conversation shown (a
  result said before), or in the tool's own parameter description (an allowed value such
  as 'no longer needed'); an invented id is refused and the agent asks for it instead;
- a ``confirm`` never approves anything: only the rules' reading of a yes does (and a yes
  to a pending action never reaches the model at all: the confirmation node reads it);
- any failure (timeout, HTTP error, output that does not parse) falls back to the rules'
  reading, the error recorded.
"""

from __future__ import annotations

import json
import re
import typing
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from langgraph.errors import GraphBubbleUp
from pydantic import BaseModel, TypeAdapter, ValidationError

from state import SlotValues
from tools.registry.cards import ToolCard
from understanding.chat import prompt_tokens
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
from understanding.model_recognizer import describe_error
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
START_CONFIDENCE = 0.9
Method = Literal["json_schema", "function_calling"]

INSTRUCTIONS = (
    "You are the understanding step of a customer-service agent. Read the customer's latest "
    "message in the light of the conversation and say, as JSON commands, which tool call it "
    "asks for. You never write to the customer: the agent asks for missing values itself, "
    "and asks for a yes before any change.\n"
    "Kinds: start = call a tool now (give every argument the conversation already shows); "
    "set = gives what the waiting call asks for; correct = changes a value of the waiting or "
    "pending call; cancel = drops the waiting call; reject = says no to the pending call; "
    "handoff = wants a human agent, or the policy says to transfer; cannot_tell = no tool fits.\n"
    "Follow the policy: check identity first when it says so; never start a change the "
    "policy forbids. Copy values exactly as written in the conversation or in a result (ids "
    "with their '#' and prefix); never invent one; leave out what is not known yet. A list "
    "value is a JSON list."
)


class PackCommandGenerator:
    """Commands for a pack from a chat model, checked against the cards and the conversation."""

    def __init__(
        self,
        llm: Any,
        cards: Sequence[ToolCard],
        policy: str,
        rules: RuleCommandGenerator,
        *,
        budget_tokens: int = BUDGET_TOKENS,
        method: Method = "json_schema",
    ) -> None:
        """Keep the model, the cards it may name, the policy, and the rules behind it."""
        self.llm = llm
        self.cards = {card.name: card for card in cards}
        self.rules = rules
        self.budget_tokens = budget_tokens
        self.system_prompt = self._prompt(policy)
        self._runnable = llm.with_structured_output(
            self._schema(),
            method=method,
            strict=True if method == "json_schema" else None,
            include_raw=True,
        )

    # ---- the generator -------------------------------------------------------------------
    def generate(self, text: str, view: DialogueView) -> Reading:
        """Read the message; ask the model unless the rules' reading settles it."""
        rules = self.rules.generate(text, view)
        if self._settled(rules, view):
            return rules
        try:
            parsed, raw = self._call(text, view)
        except _Failure as failure:
            return Reading(
                rules.commands, rules.language, source="rules", error=str(failure), model_calls=1
            )
        commands, refused = self._checked(parsed, text, view)
        if not commands:
            commands = [CannotTell(evidence=("model: no usable command",))]
        return Reading(
            tuple(commands),
            rules.language or "en",
            source="model",
            model_calls=1,
            prompt_tokens=prompt_tokens(raw),
            refused=refused,
        )

    def reconsider(self, text: str, view: DialogueView) -> Reading:
        """A second look is the rules' alone: the turn's model call is spent."""
        return self.rules.reconsider(text, view)

    def _settled(self, rules: Reading, view: DialogueView) -> bool:
        """The rules decide alone: a yes or no to what waits, a person, a bare courtesy."""
        kinds = {c.kind for c in rules.commands}
        if view.pending is not None and kinds & {"confirm", "reject"}:
            return True
        if "handoff" in kinds:
            return True
        return kinds == {"chitchat"}

    # ---- the prompt ------------------------------------------------------------------------
    def _prompt(self, policy: str) -> str:
        tools = ["Tools (a write is done only after the customer's yes):"]
        for card in self.cards.values():
            params = ", ".join(
                name + ("" if info.is_required() else "?")
                for name, info in card.parameters.model_fields.items()
            )
            mark = " [write]" if card.writes else ""
            summary = _first_sentence(card.description)
            tools.append(f"- {card.name}({params}){mark}: {summary}")
        fixed = f"{INSTRUCTIONS}\n" + "\n".join(tools)
        room = int((self.budget_tokens - SITUATION_MIN_TOKENS) * CHARS_PER_TOKEN) - len(fixed)
        return f"{INSTRUCTIONS}\nPolicy:\n{_cut(policy.strip(), room)}\n" + "\n".join(tools)

    def situation(self, view: DialogueView, text: str) -> str:
        """The dynamic part of the prompt, held within what the fixed part leaves."""
        tail: list[str] = []
        if view.pending is not None:
            tail.append(f"Waiting for a yes or no: {view.pending.intent}({_shown(view.pending)})")
        if view.waiting is not None:
            tail.append(
                f"Waiting call: {view.waiting.intent} needs {', '.join(view.waiting.missing)}; "
                f"has {_shown(view.waiting) or 'nothing'}"
            )
        tail.append(f"Message: {text[:TURN_CHARS]}")
        room = int(self.budget_tokens * CHARS_PER_TOKEN) - len(self.system_prompt)
        room -= sum(len(line) + 1 for line in tail)
        turns: list[str] = []
        for who, said in reversed(view.recent):
            line = f"{who}: {' '.join(said.split())[:TURN_CHARS]}"
            if len(line) + 1 > room:
                break
            turns.append(line)
            room -= len(line) + 1
        head = ["Conversation (latest last):", *reversed(turns)] if turns else []
        return "\n".join([*head, *tail])

    def _schema(self) -> dict[str, Any]:
        names = sorted({n for card in self.cards.values() for n in card.parameters.model_fields})
        slot = {
            "type": "object",
            "properties": {
                "name": {"type": "string", "enum": names or [NO_TOOL]},
                "value": {"type": "string"},
            },
            "required": ["name", "value"],
            "additionalProperties": False,
        }
        command = {
            "type": "object",
            "properties": {
                "kind": {"type": "string", "enum": list(KINDS)},
                "tool": {"type": "string", "enum": [*self.cards, NO_TOOL]},
                "arguments": {"type": "array", "items": slot, "maxItems": 8},
            },
            "required": ["kind", "tool", "arguments"],
            "additionalProperties": False,
        }
        return {
            "title": "commands",
            "description": "What the customer's message asks the agent to do.",
            "type": "object",
            "properties": {
                "commands": {
                    "type": "array",
                    "items": command,
                    "minItems": 1,
                    "maxItems": MAX_COMMANDS,
                }
            },
            "required": ["commands"],
            "additionalProperties": False,
        }

    # ---- the call ----------------------------------------------------------------------------
    def _call(self, text: str, view: DialogueView) -> tuple[dict[str, Any], Any]:
        messages = [("system", self.system_prompt), ("user", self.situation(view, text))]
        try:
            out = self._runnable.invoke(messages)
        except GraphBubbleUp:
            raise
        except Exception as error:  # noqa: BLE001 - any model failure falls back to the rules
            raise _Failure(describe_error(error)) from error
        raw, parsed = out.get("raw"), out.get("parsed")
        if out.get("parsing_error") is not None:
            raise _Failure(f"invalid output: {describe_error(out['parsing_error'])}")
        if not isinstance(parsed, dict) or not isinstance(parsed.get("commands"), list):
            raise _Failure(f"invalid output: {str(getattr(raw, 'content', ''))[:120]!r}")
        return parsed, raw

    # ---- checking what came back ---------------------------------------------------------------
    def _checked(
        self, parsed: dict[str, Any], text: str, view: DialogueView
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
                values, bad = grounded(card, _pairs(item.get("arguments")), seen)
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
        if len(commands) > 1:
            commands = [c for c in commands if c.kind != "cannot_tell"] or commands[:1]
        return commands, refused


def grounded(
    card: ToolCard, pairs: Sequence[tuple[str, str]], seen: str
) -> tuple[SlotValues, dict[str, str]]:
    """Keep the values of ``card``'s parameters that ``seen`` or the card itself shows.

    A value is typed as the parameter is (a JSON list for a list, a number for a number);
    one that cannot be typed is kept as written, for the executor's validation to refuse
    with its reason.
    """
    fields = card.parameters.model_fields
    haystack = _norm(seen)
    values: SlotValues = {}
    refused: dict[str, str] = {}
    for name, raw in pairs:
        info = fields.get(name)
        if info is None or not raw.strip():
            continue
        value = typed(info.annotation, raw)
        allowed = choices(info.annotation, info.description or "")
        if all(_norm(part) in haystack or _norm(part) in allowed for part in _atoms(value)):
            values[name] = value
        else:
            refused[name] = raw
    return values, refused


_QUOTED = re.compile(r"""['"]([^'"]{1,60})['"]""")
_EXAMPLE = re.compile(r"(such as|e\.g\.|for example|like)\W*$", re.IGNORECASE)


def choices(annotation: Any, description: str) -> frozenset[str]:
    """The values a parameter allows by itself: a ``Literal``'s, or quoted in its description.

    A quoted value the description gives as an example ("such as '#W0000000'") is no
    choice: it grounds nothing.
    """
    found = {_norm(str(v)) for v in typing.get_args(annotation) if isinstance(v, str | int)}
    if typing.get_origin(annotation) is not Literal:
        found = set()
    for match in _QUOTED.finditer(description):
        if not _EXAMPLE.search(description[max(0, match.start() - 16) : match.start()]):
            found.add(_norm(match.group(1)))
    return frozenset(found)


def typed(annotation: Any, raw: str) -> Any:
    """``raw`` as ``annotation`` wants it, when that reading is unambiguous; else ``raw``."""
    text = raw.strip()
    if annotation is str or annotation is None:
        return text
    candidates: list[Any] = []
    if text[:1] in "[{":
        try:
            candidates.append(json.loads(text))
        except ValueError:
            pass
    if _is_list(annotation) and text[:1] != "[":
        candidates.append([part.strip().strip("'\"") for part in text.split(",") if part.strip()])
    candidates.append(text)
    adapter: TypeAdapter[Any] = TypeAdapter(annotation)
    for candidate in candidates:
        try:
            value = adapter.validate_python(candidate)
        except (ValidationError, TypeError, ValueError):
            continue
        return _plain(value)
    return text


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _is_list(annotation: Any) -> bool:
    origin = typing.get_origin(annotation)
    return origin in (list, tuple, set) or annotation in (list, tuple, set)


def _atoms(value: Any) -> list[str]:
    """The pieces of a value that must each be grounded: strings and numbers, not keys."""
    if isinstance(value, bool):
        return []
    if isinstance(value, Mapping):
        return [atom for v in value.values() for atom in _atoms(v)]
    if isinstance(value, list | tuple):
        return [atom for v in value for atom in _atoms(v)]
    if isinstance(value, float) and value.is_integer():
        return [str(int(value))]
    return [str(value)] if str(value).strip() else []


def _norm(text: str) -> str:
    return " ".join(str(text).casefold().split())


def _pairs(raw: Any) -> list[tuple[str, str]]:
    if not isinstance(raw, list):
        return []
    return [
        (item["name"], str(item.get("value", "")))
        for item in raw
        if isinstance(item, dict) and isinstance(item.get("name"), str)
    ]


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


class _Failure(Exception):
    """The model's answer cannot be used."""


__all__ = [
    "BUDGET_TOKENS",
    "PackCommandGenerator",
    "choices",
    "grounded",
    "typed",
]
