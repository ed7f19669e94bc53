"""Turn a model's tool arguments into a JSON object, repairing only the unambiguous.

Repaired: code fences around the JSON, trailing commas, and a Python-literal dict (single
quotes, True/False/None). Anything else is a validation error carrying the raw text, so the
model or the clarification node can try again. ``json_repair`` was not used: it guesses at
truncated or unquoted input, and a guessed argument must never reach a handler.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

_FENCE = re.compile(r"^\s*```(?:json|JSON)?\s*(.*?)\s*```\s*$", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


class ArgumentParseError(ValueError):
    """The arguments are not a JSON object and could not be repaired without guessing."""

    def __init__(self, raw: str, reason: str) -> None:
        """Keep the raw text for the model to see."""
        super().__init__(f"arguments are not a JSON object ({reason}): {raw[:200]!r}")
        self.raw = raw
        self.reason = reason


def parse_arguments(raw: Any) -> tuple[dict[str, Any], list[str]]:
    """Return (arguments, repairs made). Raise ``ArgumentParseError`` when unusable."""
    if isinstance(raw, dict):
        return raw, []
    if raw is None:
        return {}, []
    if not isinstance(raw, str):
        raise ArgumentParseError(repr(raw), f"got {type(raw).__name__}")
    repairs: list[str] = []
    text = raw.strip()
    if not text:
        return {}, []
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
        repairs.append("code fence")
    for attempt in (_as_json, _without_trailing_commas, _as_python_literal):
        try:
            value, repair = attempt(text)
        except (ValueError, SyntaxError):
            continue
        if not isinstance(value, dict):
            raise ArgumentParseError(raw, f"a JSON {type(value).__name__}, not an object")
        return value, repairs + ([repair] if repair else [])
    raise ArgumentParseError(raw, "invalid JSON")


def _as_json(text: str) -> tuple[Any, str | None]:
    return json.loads(text), None


def _without_trailing_commas(text: str) -> tuple[Any, str | None]:
    fixed = _TRAILING_COMMA.sub(r"\1", text)
    if fixed == text:
        raise ValueError("no trailing comma")
    return json.loads(fixed), "trailing comma"


def _as_python_literal(text: str) -> tuple[Any, str | None]:
    value = ast.literal_eval(_TRAILING_COMMA.sub(r"\1", text))
    json.dumps(value)  # only JSON-representable values
    return value, "python literal"
