"""Checks on a call's shape, arguments and result, outside the pipeline's order.

Pure functions the pipeline (``tools.executor.pipeline``) and its preparation
(``tools.executor.prepare``) share: a call that is not an object, arguments that are not JSON,
a boolean given for a number, pydantic's errors said as one message, a result that drifted
from the card's ``result_model``, and a handler that returns an awaitable.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from config.limits import JsonObject, json_safe
from tools.executor.envelope import ToolResult, envelope, request_id_for
from tools.executor.errors import SchemaDriftError
from tools.executor.parsing import ArgumentParseError, argument_problem, parse_arguments
from tools.registry.cards import ToolCard
from tools.registry.context import ToolContext
from tools.registry.types import Arguments

_log = logging.getLogger(__name__)

MAX_TOOL_NAME_CHARS = 128
"""Longest tool name looked up; longer ones are refused before any lookup."""


def in_flight(result: ToolResult) -> ToolResult:
    """Say a call another run still holds is being processed: never that nothing happened."""
    if result["status"] != "unknown":
        return result  # the status lookup found the outcome
    check = f"check its status later with request id {result['request_id']}; do not repeat it"
    return {
        **result,
        "message": f"{result['tool']} is still being processed by another run; {check}",
        "data": {"in_flight": True, "request_id": result["request_id"]},
        "flags": [*result.get("flags", []), "in_flight"],
    }


def summary_of(card: ToolCard, data: Any) -> str:
    """Summarize a result; a summarizer choking on an unexpected shape leaves it empty."""
    if card.summarize is None or not isinstance(data, dict):
        return ""
    try:
        return str(card.summarize(data))
    except Exception as error:  # the backend's data is not what the card expects: still data
        _log.warning("summary of %s left empty: %s: %s", card.name, type(error).__name__, error)
        return ""


def call_handler(card: ToolCard, args: Any, ctx: ToolContext) -> Any:
    """Run the card's handler (awaiting an async one) and check the result's shape."""
    result = card.handler(args, ctx)
    if inspect.isawaitable(result):
        result = asyncio.run(await_result(result))
    check_result(card, result)
    return result


def check_result(card: ToolCard, data: Any) -> None:
    """Raise ``SchemaDriftError`` when ``data`` does not match the card's ``result_model``.

    A backend that renamed a field would otherwise reach a describer or a model as if it
    were the promised shape; as a ``system`` failure it is audited, counted by the breaker
    and answered with the generic failure sentence.
    """
    if card.result_model is None:
        return
    try:
        card.result_model.model_validate(data)
    except ValidationError as exc:
        fields = sorted(
            {".".join(str(p) for p in err["loc"]) or "(result)" for err in exc.errors()}
        )
        msg = f"{card.name} answered in an unexpected shape: {', '.join(fields)}"
        raise SchemaDriftError(
            msg, details={"reason": "schema_drift", "fields": [*fields]}
        ) from exc


async def await_result(awaitable: Any) -> Any:
    """Await ``awaitable`` (``asyncio.run`` needs a coroutine)."""
    return await awaitable


def loose_arguments(raw: Any) -> Arguments:
    """Parse arguments for a provisional request id; unparsable ones as bounded text."""
    try:
        parsed = parse_arguments(raw)[0]
    except ArgumentParseError:
        return {"__unparsed__": short_text(raw)}
    if argument_problem(parsed) is not None:
        return {"__unparsed__": short_text(raw)}
    return parsed


def short_text(value: Any, limit: int = 2000) -> str:
    """Return a bounded text form of any value (a repr that raises is bad input too)."""
    if isinstance(value, str):
        return value[:limit]
    try:
        return repr(value)[:limit]
    except Exception:  # noqa: BLE001
        return f"<{type(value).__name__}>"


def loose_view(call: Any) -> Any:
    """Return what of a malformed call can be audited."""
    if isinstance(call, Mapping):
        return json_safe(dict(call))
    return short_text(call, 500)


def call_shape(  # the call as given: raw, its parameters not yet parsed
    call: Any, ctx: ToolContext
) -> tuple[JsonObject, str] | ToolResult:
    """Return ``(call, name)`` for a well-shaped call, or the validation envelope."""
    reason: str | None = None
    if isinstance(call, str):
        try:
            call, _ = parse_arguments(call)
        except ArgumentParseError as exc:
            reason = f"a tool call must be a JSON object ({exc.reason})"
    if reason is None and not isinstance(call, Mapping):
        kind = type(call).__name__
        reason = f"a tool call must be an object with name and parameters, not {kind}"
    name: Any = call.get("name", "") if reason is None else ""
    if reason is None and not isinstance(name, str):
        reason = f"the tool name must be a string, not {type(name).__name__}"
    if reason is None and len(name) > MAX_TOOL_NAME_CHARS:
        reason = f"the tool name is longer than {MAX_TOOL_NAME_CHARS} characters"
    if reason is None:
        return dict(call), name
    unparsed = {"__unparsed__": short_text(call)}
    provisional = request_id_for(ctx.session_id, ctx.task_id, "", unparsed)
    return envelope(
        tool="",
        status="failed",
        error_type="validation",
        message=reason,
        data={"errors": [{"field": "(call)", "reason": reason}]},
        request_id=provisional,
    )


def bools_for_numbers(model: type[BaseModel], arguments: Arguments) -> list[str]:
    """Return the fields declared as numbers to which the caller gave a bool.

    Pydantic accepts ``true`` for an ``int`` field in lax mode; ``true`` is never an amount
    of money or a count, so it is refused here for every tool, whatever its model says.
    """
    found = []
    for field_name, info in model.model_fields.items():
        keys = [field_name, *([info.alias] if info.alias else [])]
        value = next((arguments[key] for key in keys if key in arguments), None)
        if isinstance(value, bool) and is_numeric(info.annotation):
            found.append(field_name)
    return found


def is_numeric(annotation: Any) -> bool:
    """Whether a field's annotation is a number (and not also a bool)."""
    if annotation in (int, float):
        return True
    args = getattr(annotation, "__args__", ())
    return bool(args) and any(arg in (int, float) for arg in args) and bool not in args


def validation_errors(exc: ValidationError) -> list[dict[str, str]]:
    """Return pydantic's errors as ``{field, reason}``."""
    return [
        {"field": ".".join(str(part) for part in err["loc"]) or "(arguments)", "reason": err["msg"]}
        for err in exc.errors()
    ]


def validation_message(exc: ValidationError) -> str:
    """Say pydantic's errors in one message."""
    parts = [f"{err['field']}: {err['reason']}" for err in validation_errors(exc)]
    return "invalid arguments: " + "; ".join(parts)
