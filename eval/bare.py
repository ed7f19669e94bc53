"""The bare baseline: the same agent, with a deliberately naive executor.

Like the minimal executor in the design, it looks the tool up and calls its handler. It
keeps no idempotency record, checks no permission or owner, validates nothing (arguments
are built with ``model_construct``), sets no deadline, has no circuit breaker and retries
every failure blindly, side effect or not. Understanding, slot filling, confirmation
questions and replies are the same graph as the agent's, so an A/B isolates the
execution layer.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping
from typing import Any

from eval.backends import (
    ActionExecutor,
    Decision,
    PreparedCall,
    ToolContext,
    ToolError,
    ToolRegistry,
    envelope,
)
from tools.executor.envelope import ToolResult
from tools.registry.types import Arguments

NAIVE_ATTEMPTS = 3
"""Attempts per call, whatever the tool does."""


class BareExecutor(ActionExecutor):
    """Direct dispatch: lookup, call, blind retry. No checks."""

    def __init__(self, registry: ToolRegistry) -> None:
        """Bind to ``registry``; the stores of the base class are unused."""
        super().__init__(registry)
        self.proposed = 0
        """Calls proposed to this executor (none is ever intercepted)."""

    def prepare(self, call: Mapping[str, Any], ctx: ToolContext) -> PreparedCall | ToolResult:
        """Look the tool up and build its arguments without validating them."""
        self.proposed += 1
        name = str(call.get("name", ""))
        card = self.registry.get(name)
        request_id = f"bare_{uuid.uuid4().hex[:16]}"  # a new id every time: no idempotency
        if card is None:
            return envelope(
                tool=name,
                status="failed",
                error_type="not_found",
                message=f"tool not found: {name}",
                request_id=request_id,
            )
        raw = call.get("parameters") or {}
        if isinstance(raw, str):
            try:
                raw = json.loads(raw)
            except ValueError:
                raw = {}
        arguments = dict(raw) if isinstance(raw, dict) else {}
        args = card.parameters.model_construct(**arguments)
        return PreparedCall(
            card=card,
            args=args,
            arguments=arguments,
            request_id=request_id,
            fingerprint=request_id,
            call_id=call.get("id"),
        )

    def run(
        self,
        prepared: PreparedCall,
        ctx: ToolContext,
        *,
        decision: Decision | None = None,
        started: float | None = None,
    ) -> ToolResult:
        """Ask for confirmation like the agent does, then call the handler, retrying blindly."""
        started = time.perf_counter() if started is None else started
        card = prepared.card
        if prepared.needs_confirmation and (decision is None or decision.kind != "approve"):
            return envelope(
                tool=card.name,
                status="pending" if decision is None else "rejected",
                message="not confirmed",
                data={"action": prepared.action()},
                request_id=prepared.request_id,
            )
        last: ToolResult = {}
        for attempt in range(1, NAIVE_ATTEMPTS + 1):
            try:
                data = card.handler(prepared.args, ctx)
            except ToolError as exc:
                last = envelope(
                    tool=card.name,
                    status="failed",
                    error_type=exc.error_type,  # type: ignore[arg-type]
                    message=exc.message,
                    data=exc.details or None,
                    request_id=prepared.request_id,
                    attempts=attempt,
                )
                if exc.error_type != "system":
                    break
            except Exception as exc:  # noqa: BLE001 - the naive agent retries anything
                last = envelope(
                    tool=card.name,
                    status="failed",
                    error_type="system",
                    message=f"{type(exc).__name__}: {exc}",
                    request_id=prepared.request_id,
                    attempts=attempt,
                )
            else:
                summary = card.summarize(data) if card.summarize and isinstance(data, dict) else ""
                last = envelope(
                    tool=card.name,
                    status="success",
                    data=data,
                    summary=summary,
                    request_id=prepared.request_id,
                    attempts=attempt,
                )
                break
        last["latency_ms"] = round((time.perf_counter() - started) * 1000, 3)
        return last

    def execute(
        self, call: Mapping[str, Any], ctx: ToolContext, *, decision: Decision | None = None
    ) -> ToolResult:
        """Prepare and run one call."""
        prepared = self.prepare(call, ctx)
        if isinstance(prepared, dict):
            return prepared
        return self.run(prepared, ctx, decision=decision)

    def with_arguments(
        self, prepared: PreparedCall, parameters: Arguments, ctx: ToolContext
    ) -> PreparedCall | ToolResult:
        """Take edited arguments as they are."""
        return self.prepare({"name": prepared.card.name, "parameters": parameters}, ctx)

    def close(self) -> None:
        """Stop the unused worker pool."""
        self._pool.shutdown(wait=False)
