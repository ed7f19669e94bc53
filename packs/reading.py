"""A pack's values across its tools: what a message, the conversation and the backend give.

``ToolValues`` (``packs.values``) reads one tool's parameters out of one message; a pack
needs more, each read by type and shape alone, never by a word of the domain:

- ``extract`` is the scenario's slot extractor (``Scenario.extract``);
- ``named`` finds the tools a message names by a value only they take ("C-0620-YOGA" is a
  class id, and only the booking takes one): a request that names a write and its values
  starts that write;
- ``carried`` fills a task's code-shaped values from the conversation before (the member id
  a lookup just said), the latest turn that holds exactly one such value;
- ``bare_patterns`` are the messages that are nothing but a read's one value ("This is
  13800001111."): that read (``Scenario.bare``);
- ``lookup`` is the suggester that looks a missing value up through a read the message
  gives everything to (the member from the phone given): ``TaskSpec.suggest``.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Callable, Mapping, Sequence
from datetime import date
from typing import Any

from contract.scenario import Offer, SlotResult, Speaker
from contract.text_match import normalize
from language import alternation, every
from packs.docs import has_cjk
from packs.values import Reader, ToolValues, codes_in, dates_in
from state import SlotValues, ToolResult
from tools.executor.envelope import CallRequest
from tools.registry.cards import ToolCard
from understanding.lexical import clauses
from understanding.view import DialogueView

_FEW_WORDS = r"[a-z ]{1,24}?"
"""What "…" stands for in a Latin value intro ("my … is")."""
_FEW_CHARACTERS = r"[\u4e00-\u9fff]{0,5}?"
"""What "…" stands for in a Chinese one ("我…是")."""


def _intro(phrase: str) -> str:
    """One lexicon intro as a pattern: "…" is a few words, ":" a colon of either width."""
    few = _FEW_CHARACTERS if has_cjk(phrase) else _FEW_WORDS
    parts = [re.escape(normalize(part)).replace(":", "[:：]") for part in phrase.split("…")]
    return few.join(parts)


def _lead_in() -> str:
    """What may open a message of one value: a greeting, then words that introduce it."""
    intros = sorted(every("value_intros"), key=len, reverse=True)
    greeting = alternation(every("greetings"), whole=True)
    introduced = "|".join(_intro(phrase) for phrase in intros) or r"(?!x)x"
    return rf"(?:(?:{greeting})[,，!！. ]*)?(?:(?:{introduced})\s*[:：]?\s*)?"


def _trail() -> str:
    """What may close it: a courtesy or a particle (the lexicon's), then punctuation."""
    return rf"\s*(?:{alternation(every('value_trails'), whole=True)})?\s*[.。!！?？]*"


class PackValues:
    """The typed values of a pack's tools, read from messages, turns and lookups."""

    def __init__(self, cards: Sequence[ToolCard]) -> None:
        """Index every tool's parameter readers, and which tools each code shape names."""
        self.cards = {card.name: card for card in cards}
        self.tools = {card.name: ToolValues(card.parameters) for card in cards}
        owners: dict[str, set[str]] = {}
        for name, values in self.tools.items():
            for reader in values.shaped():
                assert reader.pattern is not None
                owners.setdefault(reader.pattern.pattern, set()).add(name)
        self._owners = owners
        dated = [
            n for n, v in self.tools.items() if any(r.kind == "date" for r in v.readers.values())
        ]
        self._dated = dated[0] if len(dated) == 1 else None
        self.required = {
            card.name: [n for n, i in card.parameters.model_fields.items() if i.is_required()]
            for card in cards
        }

    def extract(self, text: str, intent: str, *, today: date) -> SlotResult:
        """The values ``text`` gives the parameters of ``intent``'s tool."""
        values = self.tools.get(intent)
        return values.read(text, today=today) if values is not None else SlotResult()

    def codes(self, text: str, intent: str) -> dict[str, str]:
        """The code-shaped values ``text`` gives ``intent``'s tool, one each (no clock needed)."""
        values = self.tools.get(intent)
        if values is None:
            return {}
        found = codes_in(text, values.shaped())
        return {name: codes[0] for name, codes in found.items() if len(set(codes)) == 1}

    def readers(self, intent: str) -> dict[str, Reader]:
        """The parameter readers of ``intent``'s tool."""
        values = self.tools.get(intent)
        return dict(values.readers) if values is not None else {}

    def named(self, text: str, *, today: date) -> dict[str, tuple[SlotResult, str]]:
        """The tools a clause of ``text`` names by its values.

        A code whose shape is one tool's alone names that tool ("C-0620-YOGA": a class id);
        so does a date, when one tool alone takes a date. Else a clause that gives one
        tool every value it needs, a code among them, and more values than any other tool
        takes from it, names that tool ("rent B-0001 for 3 hours": the bike and the hours
        are the rental's, the bike alone the lookup's). Each tool comes with its values and
        the clause naming it.
        """
        out: dict[str, tuple[SlotResult, str]] = {}
        for clause in clauses(text):
            fullest: list[tuple[int, str, SlotResult]] = []
            for name, values in self.tools.items():
                if name in out:
                    continue
                found = codes_in(clause, values.shaped())
                by_code = any(
                    len(self._owners[values.readers[param].pattern.pattern]) == 1  # type: ignore[union-attr]
                    for param in found
                )
                by_date = name == self._dated and bool(dates_in(clause, today))
                read = values.read(clause, today=today)
                if by_code or by_date:
                    out[name] = (read, clause)
                    continue
                given = {*read.slots, *read.invalid, *read.several}
                required = self.required[name]
                if found and required and set(required) <= given:
                    fullest.append((len(given), name, read))
            fullest.sort(reverse=True)
            if fullest and (len(fullest) == 1 or fullest[0][0] > fullest[1][0]):
                out.setdefault(fullest[0][1], (fullest[0][2], clause))
        return out

    def carried(self, intent: str, have: Mapping[str, Any], view: DialogueView) -> SlotValues:
        """Code-shaped values ``intent`` still misses, from the tasks and turns before.

        A value another task of the conversation holds under the same name comes first; else
        the latest turn holding exactly one value of the parameter's shape gives it. Two
        values in that turn give none: the agent asks rather than guess.
        """
        values = self.tools.get(intent)
        card = self.cards.get(intent)
        if values is None or card is None:
            return {}
        required = [n for n, i in card.parameters.model_fields.items() if i.is_required()]
        missing = [n for n in required if n not in have and values.readers[n].kind == "shape"]
        found: dict[str, Any] = {}
        tasks = [view.pending, view.waiting, *view.queued, *reversed(view.suspended), view.last]
        for name in missing:
            for task in tasks:
                if task is not None and task.slots.get(name) not in (None, ""):
                    found[name] = task.slots[name]
                    break
            if name in found:
                continue
            for _, said in reversed(view.recent):
                codes = codes_in(said, [values.readers[name]]).get(name, [])
                if codes:
                    if len(set(codes)) == 1:
                        found[name] = codes[0]
                    break
        return found


def bare_patterns(cards: Sequence[ToolCard]) -> dict[str, re.Pattern[str]]:
    """Reads of one code-shaped value that a message of only that value asks for.

    A write is never started by a bare value. Two reads of the same one shape: neither.
    """
    by_shape: dict[str, list[tuple[str, Reader]]] = {}
    for card in cards:
        if card.writes:
            continue
        required = [n for n, i in card.parameters.model_fields.items() if i.is_required()]
        if len(required) != 1:
            continue
        reader = ToolValues(card.parameters).readers[required[0]]
        if reader.kind == "shape" and reader.pattern is not None:
            by_shape.setdefault(reader.pattern.pattern, []).append((card.name, reader))
    out: dict[str, re.Pattern[str]] = {}
    for pattern, owners in by_shape.items():
        if len(owners) == 1:
            out[owners[0][0]] = re.compile(rf"{_lead_in()}(?:{pattern}){_trail()}", re.I)
    return out


def result_keys(fn: Callable[..., Any], described: Mapping[str, Any]) -> frozenset[str]:
    """The fields a function's result holds: its ``Returns:`` lines, or its typed result's."""
    keys = set(described)
    annotation = typing.get_type_hints(fn).get("return") if fn is not None else None
    for candidate in (annotation, *typing.get_args(annotation or ())):
        fields = getattr(candidate, "__annotations__", None) or getattr(
            candidate, "model_fields", None
        )
        if isinstance(fields, Mapping) and isinstance(candidate, type):
            keys.update(str(k) for k in fields)
    return frozenset(keys)


def lookup(
    pack: PackValues, gives: Mapping[str, frozenset[str]], intent: str
) -> Callable[..., Offer]:
    """The suggester of ``intent``: a missing value looked up through a read.

    For a missing parameter, a read whose result holds a field of that name and whose own
    parameters are code-shaped and all given by the message (the phone for the member) is
    run through the executor; one record found fills the value, checked as the parameter
    wants it.
    """

    def suggest(
        missing: Sequence[str],
        text: str,
        run: Callable[[CallRequest], ToolResult],
        speaker: Speaker,
    ) -> Offer:
        filled: dict[str, Any] = {}
        readers = pack.readers(intent)
        for name in missing:
            for tool, fields in gives.items():
                card = pack.cards[tool]
                if tool == intent or card.writes or name not in fields:
                    continue
                required = [n for n, i in card.parameters.model_fields.items() if i.is_required()]
                found = pack.codes(text, tool)
                if not required or any(n not in found for n in required):
                    continue
                result = run({"name": tool, "parameters": {n: found[n] for n in required}})
                value = (
                    _one(result.get("data"), name) if result.get("status") == "success" else None
                )
                if value is None or name not in readers:
                    continue
                checked, why = readers[name].check(value)
                if why is None:
                    filled[name] = checked
                    break
        return Offer(filled=filled)

    return suggest


def _one(data: Any, name: str) -> Any:
    """The one value of ``name`` in a result: a record's, or the only record's of a list."""
    if isinstance(data, Mapping):
        return data.get(name)
    if isinstance(data, list):
        values = {str(item[name]) for item in data if isinstance(item, Mapping) and name in item}
        return values.pop() if len(values) == 1 else None
    return None


__all__ = ["PackValues", "bare_patterns", "lookup", "result_keys"]
