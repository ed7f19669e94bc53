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

from tools.registry.types import Arguments

MAX_ARGUMENT_CHARS = 64 * 1024
"""Longest argument text parsed; a model's arguments are far shorter."""
MAX_ARGUMENT_DEPTH = 32
"""Deepest nesting accepted in arguments."""

_FENCE = re.compile(r"^\s*```(?:json|JSON)?\s*(.*?)\s*```\s*$", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


class ArgumentParseError(ValueError):
    """The arguments are not a JSON object and could not be repaired without guessing."""

    def __init__(self, raw: str, reason: str) -> None:
        """Keep the raw text for the model to see."""
        super().__init__(f"arguments are not a JSON object ({reason}): {raw[:200]!r}")
        self.raw = raw
        self.reason = reason


def parse_arguments(raw: Any) -> tuple[Arguments, list[str]]:
    """Return (arguments, repairs made). Raise ``ArgumentParseError`` when unusable."""
    if isinstance(raw, dict):
        return raw, []
    if raw is None:
        return {}, []
    if not isinstance(raw, str):
        raise ArgumentParseError(_short_repr(raw), f"got {type(raw).__name__}")
    if len(raw) > MAX_ARGUMENT_CHARS:
        raise ArgumentParseError(raw[:200], f"longer than {MAX_ARGUMENT_CHARS} characters")
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
        except (ValueError, SyntaxError, TypeError):
            continue  # not this form (TypeError: a Python literal that is not JSON, e.g. a set)
        except (RecursionError, MemoryError):
            raise ArgumentParseError(raw, "nested too deeply") from None
        if not isinstance(value, dict):
            raise ArgumentParseError(raw, f"a JSON {type(value).__name__}, not an object")
        return value, repairs + ([repair] if repair else [])
    raise ArgumentParseError(raw, "invalid JSON")


def argument_problem(value: Any, max_depth: int = MAX_ARGUMENT_DEPTH) -> str | None:
    """Return why ``value`` is not plain JSON data a handler may see, or ``None`` if it is.

    Checked without recursion (so a structure nested a million deep is refused, not a
    ``RecursionError``): only dict (string keys), list, str, bool, None, int and finite float;
    at most ``max_depth`` levels; strings at most ``MAX_ARGUMENT_CHARS`` long.
    """
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    seen = 0
    while stack:
        item, path, depth = stack.pop()
        seen += 1
        if seen > 100_000:
            return "too many values"
        if depth > max_depth:
            return f"nested deeper than {max_depth} levels at {path or '(arguments)'}"
        if item is None or isinstance(item, bool):
            continue
        if isinstance(item, int):
            if item.bit_length() > 63:
                return f"integer out of range at {path or '(arguments)'}"
            continue
        if isinstance(item, float):
            if item != item or item in (float("inf"), float("-inf")):
                return f"NaN or infinity at {path or '(arguments)'} is not JSON"
            continue
        if isinstance(item, str):
            if len(item) > MAX_ARGUMENT_CHARS:
                return f"string longer than {MAX_ARGUMENT_CHARS} characters at {path}"
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    return f"invalid Unicode (a lone surrogate) at {path or '(arguments)'}"
            continue
        if isinstance(item, dict):
            for key, child in item.items():
                if not isinstance(key, str):
                    return f"non-string key {_short_repr(key)} at {path or '(arguments)'}"
                stack.append((child, f"{path}.{key}" if path else key, depth + 1))
            continue
        if isinstance(item, list):
            stack.extend((child, f"{path}[{i}]", depth + 1) for i, child in enumerate(item))
            continue
        return f"{type(item).__name__} at {path or '(arguments)'} is not JSON"
    return None


def _short_repr(value: Any) -> str:
    try:
        return repr(value)[:200]
    except Exception:  # noqa: BLE001 - a repr that raises is still only bad input
        return f"<{type(value).__name__}>"


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
