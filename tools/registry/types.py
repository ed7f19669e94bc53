"""Shared strict types for tool and scenario parameter models.

Models receive JSON from a model or a user, where ``true`` is a valid JSON value and
``NaN``/``Infinity`` are accepted by Python's JSON parser. Money must never be a bool or a
float (``true`` is not one cent), and a measurement must be a finite number.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, TypeAlias

from pydantic import AfterValidator, BeforeValidator, Field, Strict

from config.limits import JsonValue

Arguments: TypeAlias = dict[str, Any]
"""A tool call's arguments as the model, a planner, a peer agent or a person wrote them: the
boundary where raw output enters. Free-form and untrusted until the card's pydantic model
validates them (``tools.executor.prepare``); after that the model instance
(``PreparedCall.args``) and its JSON dump (``ValidatedArguments``) are the types."""

ValidatedArguments: TypeAlias = dict[str, JsonValue]
"""A call's arguments after the card's model validated them: its ``model_dump(mode="json")``,
kept for ids, the audit and a confirmation (masked there)."""


def _not_bool(value: Any) -> Any:
    if isinstance(value, bool):
        msg = "a boolean is not a number"
        raise ValueError(msg)  # noqa: TRY004 - pydantic turns ValueError into a field error
    return value


def _finite(value: float) -> float:
    if not math.isfinite(value):
        msg = "must be a finite number (not NaN or infinity)"
        raise ValueError(msg)
    return value


Cents = Annotated[int, Strict()]
"""An amount of money in cents: an integer, never a bool, a float or a string."""
PositiveCents = Annotated[int, Strict(), Field(gt=0)]
"""A positive amount of money in cents (a transfer, a refund)."""
FiniteFloat = Annotated[
    float, BeforeValidator(_not_bool), Field(allow_inf_nan=False), AfterValidator(_finite)
]
"""A float that is neither NaN nor ±infinity, and not a bool."""
StrictCount = Annotated[int, Field(ge=0), BeforeValidator(_not_bool)]
"""A non-negative count; integers only (``true`` is refused)."""


def is_finite_number(value: Any) -> bool:
    """Tell whether ``value`` is an int or a finite float (bools excluded)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and math.isfinite(value)


def non_finite_paths(value: Any, path: str = "") -> list[str]:
    """Return the paths of NaN or infinite floats nested in ``value`` (tool output checks)."""
    if isinstance(value, float) and not math.isfinite(value):
        return [path or "(value)"]
    if isinstance(value, dict):
        return [
            found
            for key, item in value.items()
            for found in non_finite_paths(item, f"{path}.{key}" if path else str(key))
        ]
    if isinstance(value, list | tuple):
        return [
            found
            for index, item in enumerate(value)
            for found in non_finite_paths(item, f"{path}[{index}]")
        ]
    return []


__all__ = [
    "Cents",
    "FiniteFloat",
    "PositiveCents",
    "StrictCount",
    "is_finite_number",
    "non_finite_paths",
]
