"""What a model's values are checked against: the message, the conversation, the card.

A value the model gives a pack's parameter is kept only when it is **grounded**: it appears
in the message or the conversation shown (a number as a whole number), it is one of the
choices the parameter allows (a ``Literal``'s, or quoted in its description — never its
examples), or it is the value the message gives by type ("June 20" for 2024-06-20). It is
typed as the parameter wants it (a JSON list for a list); one that cannot be typed is kept as
written, for validation to refuse with its reason.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, TypeAdapter, ValidationError

from packs.docs import quoted_choices
from state import SlotValues
from tools.registry.cards import ToolCard
from understanding.model_base import grounded_in, normalized


def grounded(
    card: ToolCard,
    pairs: Sequence[tuple[str, str]],
    seen: str,
    typed_values: Mapping[str, Any] | None = None,
) -> tuple[SlotValues, dict[str, str]]:
    """Keep the values of ``card``'s parameters that ``seen`` or the card itself shows.

    A value is typed as the parameter is (a JSON list for a list, a number for a number);
    one that cannot be typed is kept as written, for validation to refuse with its reason.
    A value the message gives by type (``typed_values``: "June 20" for 2024-06-20) is
    grounded as that value.
    """
    fields = card.parameters.model_fields
    given = typed_values or {}
    values: SlotValues = {}
    refused: dict[str, str] = {}
    for name, raw in pairs:
        info = fields.get(name)
        if info is None or not raw.strip():
            continue
        value = typed(info.annotation, raw)
        allowed = choices(info.annotation, info.description or "")
        if name in given and normalized(str(given[name])) == normalized(str(value)):
            values[name] = given[name]
        elif all(grounded_in(part, seen, allowed) for part in _atoms(value)) and _atoms(value):
            values[name] = value
        else:
            refused[name] = raw
    return values, refused


def choices(annotation: Any, description: str) -> frozenset[str]:
    """The values a parameter allows by itself: a ``Literal``'s, or quoted in its description.

    A quoted value the description gives as an example ("such as '#W0000000'") is no
    choice: it grounds nothing.
    """
    found = {normalized(str(v)) for v in typing.get_args(annotation) if isinstance(v, str | int)}
    if typing.get_origin(annotation) is not Literal:
        found = set()
    found.update(normalized(choice) for choice in quoted_choices(description))
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
    if isinstance(value, date):
        return value.isoformat()
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
        return ["true"] if value else ["false"]
    if isinstance(value, Mapping):
        return [atom for v in value.values() for atom in _atoms(v)]
    if isinstance(value, list | tuple):
        return [atom for v in value for atom in _atoms(v)]
    if isinstance(value, float) and value.is_integer():
        return [str(int(value))]
    return [str(value)] if str(value).strip() else []


def param_hint(name: str, annotation: Any, required: bool) -> str:
    """``name`` with what its type says, for the prompt (``days: 7-30``, ``day: date``)."""
    hint = ""
    base = annotation
    if typing.get_origin(base) is Literal:
        hint = "|".join(str(v) for v in typing.get_args(base))
    elif base is date:
        hint = "date"
    elif base in (int, float):
        hint = base.__name__
    return f"{name}{'' if required else '?'}" + (f": {hint}" if hint else "")


__all__ = ["choices", "grounded", "param_hint", "typed"]
