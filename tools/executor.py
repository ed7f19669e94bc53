"""The action executor: the only path from a model's tool call to a real system.

Every call goes through the same steps: lookup, validation, function- and resource-level
authorization, execution under a deadline, normalization into one envelope, masking, audit.
Model output never reaches a handler without passing them.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Literal

from pydantic import ValidationError

from tools.errors import ToolError, TransientToolError
from tools.permissions import acts_on_any_owner, role_allows
from tools.pii import mask_pii
from tools.registry import ToolCard, ToolContext, ToolRegistry

Status = Literal["success", "failed", "timeout", "rejected", "pending", "unknown"]
ErrorType = Literal[
    "user_fixable",
    "validation",
    "not_found",
    "permission_denied",
    "rate_limited",
    "circuit_open",
    "system",
]

audit_log = logging.getLogger("reach.audit")
_log = logging.getLogger(__name__)


def request_id_for(session_id: str, task_id: str, tool: str, parameters: dict[str, Any]) -> str:
    """Derive the call's request id from what it does, so a re-run yields the same id."""
    canonical = json.dumps(parameters, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    digest = hashlib.sha256(f"{session_id}|{task_id}|{tool}|{canonical}".encode()).hexdigest()
    return f"req_{digest[:24]}"


def envelope(
    *,
    tool: str,
    status: Status,
    request_id: str,
    data: Any = None,
    error_type: ErrorType | None = None,
    message: str | None = None,
    summary: str = "",
    retryable: bool = False,
    attempts: int = 0,
    latency_ms: float = 0.0,
    duplicated: bool = False,
) -> dict[str, Any]:
    """Build the one result shape every tool call returns, success or not."""
    return {
        "tool": tool,
        "status": status,
        "error_type": error_type,
        "message": message,
        "data": mask_pii(data),
        "summary": mask_pii(summary),
        "request_id": request_id,
        "duplicated": duplicated,
        "retryable": retryable,
        "attempts": attempts,
        "latency_ms": round(latency_ms, 3),
    }


class ActionExecutor:
    """Run tool calls from a registry on behalf of a trusted caller."""

    def __init__(self, registry: ToolRegistry, *, max_workers: int = 8) -> None:
        """Bind the executor to a registry; handlers run on a bounded thread pool."""
        self.registry = registry
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="reach-tool")

    def execute(self, call: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        """Run one call ``{name, parameters}`` and return its envelope; never raises for input.

        Bugs in the executor itself still raise: hiding them would make failures silent.
        """
        started = time.perf_counter()
        name = str(call.get("name", ""))
        raw = call.get("parameters") or {}
        request_id = request_id_for(ctx.session_id, ctx.task_id, name, _as_dict(raw))
        result = self._run(name, raw, ctx, request_id)
        result["latency_ms"] = round((time.perf_counter() - started) * 1000, 3)
        self._audit(ctx, name, raw, result)
        return result

    async def aexecute(self, call: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        """Run one call without blocking the event loop."""
        return await asyncio.get_running_loop().run_in_executor(None, self.execute, call, ctx)

    def _run(self, name: str, raw: Any, ctx: ToolContext, request_id: str) -> dict[str, Any]:
        card = self.registry.get(name)
        if card is None:
            return self._not_found(name, request_id)
        try:
            args = card.parameters.model_validate(_as_dict(raw))
        except ValidationError as exc:
            return envelope(
                tool=name,
                status="failed",
                error_type="validation",
                message=_validation_message(exc),
                data={"errors": _validation_errors(exc)},
                request_id=request_id,
            )
        if not role_allows(ctx.user_role, card.permission):
            return envelope(
                tool=name,
                status="rejected",
                error_type="permission_denied",
                message=f"role {ctx.user_role!r} may not use {name} ({card.permission})",
                request_id=request_id,
            )
        if card.owner_of is not None and not acts_on_any_owner(ctx.user_role, card.domain):
            owner = card.owner_of(args, ctx)
            if owner != ctx.user_id:
                # Another user's resource answers exactly like a missing one: no leak.
                return envelope(
                    tool=name,
                    status="failed",
                    error_type="not_found",
                    message="no such resource for this user",
                    request_id=request_id,
                )
        return self._invoke(card, args, ctx, request_id)

    def _invoke(
        self, card: ToolCard, args: Any, ctx: ToolContext, request_id: str
    ) -> dict[str, Any]:
        future = self._pool.submit(_call_handler, card, args, ctx)
        try:
            data = future.result(timeout=card.timeout_s)
        except FutureTimeout:
            future.cancel()
            # A side-effecting call that timed out may or may not have happened.
            return envelope(
                tool=card.name,
                status="timeout" if card.idempotent else "unknown",
                error_type="system",
                message=f"{card.name} did not answer within {card.timeout_s}s",
                retryable=card.idempotent,
                attempts=1,
                request_id=request_id,
            )
        except ToolError as exc:
            return envelope(
                tool=card.name,
                status="failed",
                error_type=exc.error_type,  # type: ignore[arg-type]
                message=exc.message,
                data=exc.details or None,
                retryable=exc.retryable and card.idempotent,
                attempts=1,
                request_id=request_id,
            )
        except (ConnectionError, TimeoutError) as exc:
            return self._system_failure(card, request_id, exc, transient=True)
        except Exception as exc:  # a backend bug must not crash the conversation
            _log.exception("tool %s raised unexpectedly", card.name)
            return self._system_failure(card, request_id, exc, transient=False)
        summary = card.summarize(data) if card.summarize and isinstance(data, dict) else ""
        return envelope(
            tool=card.name,
            status="success",
            data=data,
            summary=summary,
            attempts=1,
            request_id=request_id,
        )

    def _system_failure(
        self, card: ToolCard, request_id: str, exc: Exception, *, transient: bool
    ) -> dict[str, Any]:
        return envelope(
            tool=card.name,
            status="failed",
            error_type="system",
            message=f"{type(exc).__name__}: {exc}",
            retryable=transient and card.idempotent,
            attempts=1,
            request_id=request_id,
        )

    def _not_found(self, name: str, request_id: str) -> dict[str, Any]:
        available = self.registry.names()
        hint = self.registry.closest(name)
        gone = " It was removed." if self.registry.was_removed(name) else ""
        suggestion = f" Did you mean {hint!r}?" if hint else ""
        return envelope(
            tool=name,
            status="failed",
            error_type="not_found",
            message=f"no tool named {name!r}.{gone}{suggestion}",
            data={"available": available, "closest": hint},
            request_id=request_id,
        )

    def _audit(self, ctx: ToolContext, name: str, raw: Any, result: dict[str, Any]) -> None:
        audit_log.info(
            "tool_call",
            extra={
                "audit": {
                    "session_id": ctx.session_id,
                    "task_id": ctx.task_id,
                    "user_id": ctx.user_id,
                    "tool": name,
                    "arguments": mask_pii(raw),
                    "status": result["status"],
                    "error_type": result["error_type"],
                    "latency_ms": result["latency_ms"],
                    "attempts": result["attempts"],
                    "request_id": result["request_id"],
                }
            },
        )


def _call_handler(card: ToolCard, args: Any, ctx: ToolContext) -> Any:
    result = card.handler(args, ctx)
    if inspect.isawaitable(result):
        return asyncio.run(_await(result))
    return result


async def _await(awaitable: Any) -> Any:
    return await awaitable


def _as_dict(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError:
            return {"__unparsed__": raw}
        return parsed if isinstance(parsed, dict) else {"__unparsed__": raw}
    return {"__unparsed__": repr(raw)}


def _validation_errors(exc: ValidationError) -> list[dict[str, str]]:
    return [
        {"field": ".".join(str(part) for part in err["loc"]) or "(arguments)", "reason": err["msg"]}
        for err in exc.errors()
    ]


def _validation_message(exc: ValidationError) -> str:
    parts = [f"{err['field']}: {err['reason']}" for err in _validation_errors(exc)]
    return "invalid arguments: " + "; ".join(parts)


__all__ = ["ActionExecutor", "TransientToolError", "envelope", "request_id_for"]
