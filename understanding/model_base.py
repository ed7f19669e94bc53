"""What every model command generator shares: the one structured call, its failure, its checks.

The shipped scenarios' generator (``understanding.model.ModelCommandGenerator``) and a pack's
(``packs.understanding.PackCommandGenerator``) ask the model the same way: one
``json_schema`` call a turn (a grammar on llama-server) returning a list of commands, read
back untrusted. What they share lives here:

- ``StructuredCommands``: the structured runnable, ``ask`` (any failure — timeout, HTTP
  error, a refusal, output that does not parse or has no command list — is a
  ``ModelFailure``, never an exception the turn sees; ``GraphBubbleUp`` passes through);
- ``commands_schema``: the JSON Schema of the answer, each generator naming its own keys;
- ``fallback``: the rules' reading, less sure, with why the model's was not used; and
  ``model_unavailable``, which tells a model that could not answer (timeout, server error)
  from one that answered badly, so the user hears the first as what it is, never as unclear;
- the value checks: ``value_pairs`` (the model's name/value list), ``whole_number`` (a number is
  evidence only as a whole number of the text) and ``grounded_in`` (a value appears in what
  the model was shown).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Literal

from langgraph.errors import GraphBubbleUp

from config.limits import JsonObject, JsonValue
from understanding.chat import prompt_tokens
from understanding.commands import Reading
from understanding.model_recognizer import describe_error

FALLBACK_DISCOUNT = 0.8
"""How much surer the rules' reading is taken to be when the model's could not be used."""
Method = Literal["json_schema", "function_calling"]
INVALID_OUTPUT = "invalid output"
"""The start of the error of a model that answered, but not usably."""
REFUSAL = "refusal"
"""The start of the error of a model that refused to answer."""
ANSWERED_BADLY = (INVALID_OUTPUT, REFUSAL, "a hand-off nobody asked for")
"""Errors of a model that did answer: the rules' reading is said as it is."""


class ModelFailure(Exception):
    """The model's answer cannot be used (its text is the protocol's ``error``)."""


class StructuredCommands:
    """One structured call a turn: the runnable, and the checks on what comes back."""

    def __init__(
        self, llm: Any, schema: dict[str, JsonValue], *, method: Method = "json_schema"
    ) -> None:
        """Bind ``schema`` to ``llm`` as structured output (strict for ``json_schema``)."""
        self.llm = llm
        self._runnable = llm.with_structured_output(
            schema,
            method=method,
            strict=True if method == "json_schema" else None,
            include_raw=True,
        )

    def ask(self, system: str, situation: str) -> tuple[JsonObject, Any]:  # the raw message
        """Ask once; return the parsed answer (a ``commands`` list) and the raw message.

        Raises ``ModelFailure`` for anything that is not a usable answer.
        """
        try:
            out = self._runnable.invoke([("system", system), ("user", situation)])
        except GraphBubbleUp:
            raise
        except Exception as error:  # noqa: BLE001 - any model failure falls back to the rules
            raise ModelFailure(describe_error(error)) from error
        raw, parsed = out.get("raw"), out.get("parsed")
        refusal = (getattr(raw, "additional_kwargs", None) or {}).get("refusal")
        if refusal:
            raise ModelFailure(f"{REFUSAL}: {str(refusal)[:120]}")
        if out.get("parsing_error") is not None:
            raise ModelFailure(f"{INVALID_OUTPUT}: {describe_error(out['parsing_error'])}")
        if not isinstance(parsed, dict) or not isinstance(parsed.get("commands"), list):
            raise ModelFailure(f"{INVALID_OUTPUT}: {str(getattr(raw, 'content', ''))[:120]!r}")
        return parsed, raw

    @staticmethod
    def tokens(raw: Any) -> int | None:
        """The prompt tokens the call's raw answer reports."""
        return prompt_tokens(raw)


def commands_schema(
    *,
    kinds: Sequence[str],
    target: str,
    targets: Sequence[str],
    values: str,
    names: Sequence[str],
    max_commands: int,
    max_values: int,
    description: str,
) -> dict[str, JsonValue]:
    """The answer's schema: ``{"commands": [{"kind", <target>, <values>: [{name, value}]}]}``."""
    slot: dict[str, JsonValue] = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "enum": [*names] if names else ["none"]},
            "value": {"type": "string"},
        },
        "required": ["name", "value"],
        "additionalProperties": False,
    }
    command: dict[str, JsonValue] = {
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": [*kinds]},
            target: {"type": "string", "enum": [*targets]},
            values: {"type": "array", "items": slot, "maxItems": max_values},
        },
        "required": ["kind", target, values],
        "additionalProperties": False,
    }
    return {
        "title": "commands",
        "description": description,
        "type": "object",
        "properties": {
            "commands": {
                "type": "array",
                "items": command,
                "minItems": 1,
                "maxItems": max_commands,
            }
        },
        "required": ["commands"],
        "additionalProperties": False,
    }


def fallback(rules: Reading, error: str) -> Reading:
    """The rules' reading, less sure, with why the model's was not used."""
    discounted = tuple(
        replace(c, confidence=round(c.confidence * FALLBACK_DISCOUNT, 3))
        if c.kind in ("start", "set", "correct")
        else c
        for c in rules.commands
    )
    return Reading(discounted, rules.language, source="rules", error=error, model_calls=1)


def model_unavailable(reading: Reading) -> bool:
    """The turn's model call failed (timeout, connection, server error): not the user's doing.

    A model that answered badly (output that does not parse, a refusal) is not unavailable:
    the rules' reading of the message is said as it is.
    """
    error = reading.error or ""
    return (
        reading.source == "rules"
        and reading.model_calls > 0
        and bool(error)
        and not error.startswith(ANSWERED_BADLY)
    )


def value_pairs(raw: Any) -> list[tuple[str, str]]:
    """The model's ``[{name, value}]`` list as pairs; anything else in it is left out."""
    if not isinstance(raw, list):
        return []
    return [
        (item["name"], str(item.get("value", "")))
        for item in raw
        if isinstance(item, dict) and isinstance(item.get("name"), str)
    ]


def whole_number(number: str, text: str) -> bool:
    """Whether ``number`` stands in ``text`` as a number of its own, not inside another."""
    plain = unicodedata.normalize("NFKC", text)
    return re.search(rf"(?<![\d.]){re.escape(number)}(?![\d.]|\.\d)", plain) is not None


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def normalized(text: str) -> str:
    """Case, width and spacing folded: how values are compared with what was said."""
    return " ".join(unicodedata.normalize("NFKC", str(text)).casefold().split())


def grounded_in(value: str, seen: str, allowed: frozenset[str] = frozenset()) -> bool:
    """Whether ``value`` appears in ``seen`` (a number as a whole number) or is ``allowed``."""
    norm = normalized(value)
    if not norm:
        return False
    if norm in allowed:
        return True
    if _NUMBER.fullmatch(norm):
        return whole_number(norm, seen)
    return norm in normalized(seen)


__all__ = [
    "ANSWERED_BADLY",
    "FALLBACK_DISCOUNT",
    "INVALID_OUTPUT",
    "Method",
    "ModelFailure",
    "StructuredCommands",
    "commands_schema",
    "fallback",
    "grounded_in",
    "model_unavailable",
    "normalized",
    "value_pairs",
    "whole_number",
]
