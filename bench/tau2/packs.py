"""A τ² domain as a pack: its toolkit's own functions and its policy, nothing copied by hand.

τ² gives an agent its tools as ``tau2.environment.tool.Tool`` objects, each wrapping a bound
method of the domain's toolkit (``RetailTools``, ``AirlineTools``) marked with
``@is_tool(ToolType.…)``. The method's signature and docstring make the card
(``packs.functions``); its ``ToolType`` is the annotation: ``WRITE`` changes the database
(confirmed first, never retried), ``READ`` and ``GENERIC`` do not, ``THINK`` is left out (it
does nothing). A name that is not ``verb_object`` (``calculate``) takes its first
parameter's name (``calculate_expression``); the call still goes out under τ²'s name.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from packs import Pack, ToolAnnotation, pack_from_functions
from packs.functions import Invoke
from tools.registry.cards import InvalidToolCardError, validate_tool_name

TOOL_TYPE_ATTR = "__tool_type__"
CALL_TIMEOUT_S = 120.0
"""One call's deadline: the orchestrator answers a call with no model in between."""


def annotation_for(function: Callable[..., Any]) -> ToolAnnotation | None:
    """The annotation τ²'s ``ToolType`` stands for; ``None`` for a tool left out."""
    kind = str(getattr(getattr(function, TOOL_TYPE_ATTR, None), "value", "write"))
    if kind == "think":
        return None
    name = function.__name__
    try:
        validate_tool_name(name)
        renamed = None
    except InvalidToolCardError:
        first = next(iter(_parameters(function)), "request")
        renamed = f"{name}_{first}"
    writes = kind == "write"
    return ToolAnnotation(
        name=renamed,
        side_effect=writes,
        confirm=writes,
        idempotent=not writes,
        timeout_s=CALL_TIMEOUT_S,
    )


def tau2_pack(tools: Sequence[Any], policy: str, *, domain: str, invoke: Invoke) -> Pack:
    """The pack of τ² ``tools`` (as an agent receives them) under ``policy``."""
    functions = []
    annotations: dict[str, ToolAnnotation] = {}
    for tool in tools:
        function = getattr(tool, "_func", None) or tool
        annotation = annotation_for(function)
        if annotation is None:
            continue
        functions.append(function)
        annotations[function.__name__] = annotation
    return pack_from_functions(
        domain, functions, policy=policy, annotations=annotations, invoke=invoke
    )


def _parameters(function: Callable[..., Any]) -> list[str]:
    return [n for n in inspect.signature(function).parameters if n not in ("self", "cls")]
