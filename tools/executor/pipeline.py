"""The action executor: the only path from a model's tool call to a real system.

Every call goes through the same pipeline, in this order:

1. lookup       an unknown tool is ``not_found``, naming the available ones
2. parse        unambiguous JSON slips are repaired; anything else is ``validation``
3. validate     the card's pydantic model; nothing invalid reaches a handler
4. authorize    role → permission, then resource owner → ``Context.user_id``
5. confirm      high-risk tools need an explicit decision (the graph asks with interrupt())
6. idempotency  a request id derived from thread, task, tool and arguments; a second run
                of a write returns the stored result with ``duplicated: true`` (a read is
                read again, unless its caller pinned it with its own key)
7. limits       task guards, per-user rate limit, per-tool circuit breaker (checked
                before every attempt, so an open circuit spares the backend)
8. cache        idempotent read tools with ``cache_ttl_s``
9. execute      with the card's timeout; transient failures of idempotent tools retried
                with exponential backoff and jitter; a side-effecting timeout is checked
                with the card's status lookup, or reported ``unknown``
10. normalize   one envelope for every outcome
11. sanitize    identifiers masked; instruction-like text in output flagged as untrusted
12. audit       one record per call, written off the hot path

Steps 1–4 and the idempotency lookup are ``prepare``; the rest is ``run``. The graph calls
them apart so it can ask for confirmation in between, once per node, before any effect.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import replace
from typing import Any

from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)

from config.limits import json_safe
from observability.audit import AuditLog
from security.untrusted import FLAG_PREFIX, defang_value, find_injections
from storage.db import AlreadyWritten, Database
from tools.executor.admission import Admission, LocalAdmission, Outcome
from tools.executor.checks import (
    call_handler,
    in_flight,
    summary_of,
)
from tools.executor.envelope import (
    BACKEND_FAILURES,
    Decision,
    ToolResult,
    canonical,
    circuit_open,
    envelope,
    fingerprint_for,
    request_id_for,
    system_failure,
)
from tools.executor.errors import SchemaDriftError, ToolError, TransientToolError
from tools.executor.guards import (
    CircuitBreaker,
    CircuitBreakers,
    CircuitOpenError,
    ExecutorSettings,
    RateLimiter,
)
from tools.executor.prepare import CallPreparation, PreparedCall
from tools.executor.stores import (
    IdempotencyStore,
    MemoryIdempotencyStore,
    MemoryResultCache,
    ResultCache,
)
from tools.registry.cards import ToolRegistry
from tools.registry.context import ToolContext
from tools.registry.types import Arguments, non_finite_paths

_log = logging.getLogger(__name__)


class _SystemFailure(Exception):
    """A failure the breaker counts: transient, timeout or unexpected."""

    def __init__(self, result: ToolResult, *, transient: bool) -> None:
        super().__init__(result.get("message"))
        self.result = result
        self.transient = transient


class ActionExecutor(CallPreparation):
    """Run tool calls from a registry on behalf of a trusted caller."""

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        idempotency: IdempotencyStore | None = None,
        cache: ResultCache | None = None,
        rate_limiter: RateLimiter | None = None,
        admission: Admission | None = None,
        breakers: CircuitBreakers | None = None,
        audit: AuditLog | None = None,
        settings: ExecutorSettings | None = None,
        max_workers: int = 32,
    ) -> None:
        """Bind the executor to a registry and its stores (in-process ones by default).

        Give ``admission`` (e.g. ``RedisAdmission``) to use one store for rate limits, cache
        and idempotency; otherwise the three separate stores are composed.
        """
        self.registry = registry
        self.admission = admission or LocalAdmission(
            idempotency or MemoryIdempotencyStore(),
            cache or MemoryResultCache(),
            rate_limiter or RateLimiter(),
        )
        self.breakers = breakers or CircuitBreakers()
        self.audit = audit or AuditLog()
        self.settings = settings or ExecutorSettings()
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="reach-tool")

    # ---- public API -------------------------------------------------------------------

    def execute(
        self, call: Mapping[str, Any], ctx: ToolContext, *, decision: Decision | None = None
    ) -> ToolResult:
        """Prepare and run one call ``{name, parameters}``; never raises for bad input.

        A high-risk call without an approving ``decision`` is not executed: it answers
        ``pending`` (awaiting confirmation) or ``rejected``.
        """
        started = time.perf_counter()
        prepared = self.prepare(call, ctx)
        if isinstance(prepared, dict):
            return prepared  # already final and audited
        return self.run(prepared, ctx, decision=decision, started=started)

    async def aexecute(
        self, call: Mapping[str, Any], ctx: ToolContext, *, decision: Decision | None = None
    ) -> ToolResult:
        """Run one call without blocking the event loop."""
        return await asyncio.to_thread(self.execute, call, ctx, decision=decision)

    def execute_many(
        self, calls: Sequence[Mapping[str, Any]], ctx: ToolContext
    ) -> list[ToolResult]:
        """Run independent calls concurrently; results keep the calls' order."""
        if isinstance(calls, Mapping | str | bytes) or not isinstance(calls, Sequence):
            calls = [calls]  # one bad call still gets an envelope
        if len(calls) <= 1:
            return [self.execute(call, ctx) for call in calls]
        with ThreadPoolExecutor(max_workers=min(16, len(calls))) as pool:
            return list(pool.map(lambda call: self.execute(call, ctx), calls))

    async def aexecute_many(
        self, calls: Sequence[Mapping[str, Any]], ctx: ToolContext
    ) -> list[ToolResult]:
        """Run independent calls concurrently on the event loop."""
        return list(await asyncio.gather(*(self.aexecute(call, ctx) for call in calls)))

    def run(
        self,
        prepared: PreparedCall,
        ctx: ToolContext,
        *,
        decision: Decision | None = None,
        started: float | None = None,
    ) -> ToolResult:
        """Steps 5–12 for a prepared call."""
        started = time.perf_counter() if started is None else started
        result = self._run(prepared, ctx, decision)
        return self._finish(ctx, prepared.card.name, prepared.arguments, result, started)

    def with_arguments(
        self, prepared: PreparedCall, parameters: Arguments, ctx: ToolContext
    ) -> PreparedCall | ToolResult:
        """Re-prepare an edited call: new arguments are validated and get a new request id."""
        return self.prepare({"name": prepared.card.name, "parameters": parameters}, ctx)

    # ---- the pipeline -----------------------------------------------------------------

    def _run(
        self, prepared: PreparedCall, ctx: ToolContext, decision: Decision | None
    ) -> ToolResult:
        card, request_id = prepared.card, prepared.request_id
        if prepared.needs_confirmation and (decision is None or decision.kind != "approve"):
            if decision is None:
                return envelope(
                    tool=card.name,
                    status="pending",
                    message="awaiting the user's confirmation",
                    data={"action": prepared.action()},
                    request_id=request_id,
                )
            return envelope(
                tool=card.name,
                status="rejected",
                message="the user did not confirm; nothing was done",
                data={"action": prepared.action()},
                request_id=request_id,
            )
        guard = ctx.history.tripped(self.settings.guards, request_id)
        if guard:
            return envelope(
                tool=card.name,
                status="rejected",
                error_type="rate_limited",
                message=f"task guard: {guard}",
                data={"guard": guard},
                request_id=request_id,
            )
        cache_key = (
            f"{card.name}:{prepared.fingerprint}" if card.cache_ttl_s and card.idempotent else None
        )
        admitted = self.admission.admit(
            rate_rule=card.rate_limit,
            user_id=ctx.user_id,
            tool=card.name,
            cache_key=cache_key,
            # only a write is deduplicated: a read asked again is read again, never answered
            # from the record of an earlier run ("already submitted" is no answer to a status)
            request_id=request_id if prepared.recorded else None,
            fingerprint=prepared.fingerprint,
        )
        if not admitted.allowed:
            return envelope(
                tool=card.name,
                status="rejected",
                error_type="rate_limited",
                message=f"rate limit {card.rate_limit} reached for {card.name}",
                retryable=True,
                request_id=request_id,
            )
        claim = admitted.claim
        if claim is not None and not claim.acquired and claim.record is not None:
            held = claim.record.state == "pending" and not card.idempotent
            if held and claim.record.fingerprint == prepared.fingerprint:
                # another run is making this effect: wait for its outcome (or take it over)
                claim = self.admission.await_claim(
                    request_id, prepared.fingerprint, timeout_s=card.timeout_s
                )
        if claim is not None and not claim.acquired and claim.record is not None:
            replayed = self._replayed(prepared, claim.record)
            if replayed is not None:
                return replayed
            # still pending: another run is mid-call, or a crash left it so
            if not card.idempotent:
                return in_flight(self._check_status(prepared, ctx, attempts=0))
        if admitted.cached is not None:
            result: ToolResult = {**admitted.cached, "request_id": request_id, "attempts": 0}
            result["flags"] = ["cached"]
            self._settle(prepared, result, None)
            return result
        breaker = self.breakers.get(card.name)
        result = self._execute(prepared, ctx, breaker)
        self._settle(prepared, result, cache_key)
        return result

    def _execute(
        self, prepared: PreparedCall, ctx: ToolContext, breaker: CircuitBreaker
    ) -> ToolResult:
        card = prepared.card
        attempts = 0
        settings = self.settings

        def attempt() -> ToolResult:
            nonlocal attempts
            breaker.before_call()
            attempts += 1
            try:
                result = self._attempt(prepared, ctx)
            except _SystemFailure:
                breaker.record_failure()
                raise
            breaker.record_success()
            return result

        retrying = Retrying(
            stop=stop_after_attempt(
                settings.max_attempts if card.idempotent or card.status_lookup else 1
            ),
            wait=wait_exponential_jitter(
                multiplier=settings.backoff_initial_s,
                max=settings.backoff_max_s,
                jitter=settings.backoff_jitter_s,
            ),
            retry=retry_if_exception(lambda exc: self._may_retry(prepared, ctx, exc)),
            reraise=True,
            before_sleep=_log_retry,
        )
        try:
            result = retrying(attempt)
        except _SystemFailure as failure:
            result = failure.result
            maybe_applied = isinstance(failure.__cause__, ConnectionError | SchemaDriftError)
            if not card.idempotent and (
                result["status"] in ("timeout", "unknown") or maybe_applied
            ):
                return self._check_status(prepared, ctx, attempts=attempts)
        except CircuitOpenError:
            return circuit_open(card.name, prepared.request_id, attempts=attempts)
        return {**result, "attempts": attempts}

    def _may_retry(self, prepared: PreparedCall, ctx: ToolContext, exc: BaseException) -> bool:
        """Retry a transient failure of an idempotent tool, or of a write that surely did not land.

        A side-effecting call is repeated only when the backend refused it outright (a
        ``TransientToolError`` such as a 503, which says nothing was done; not a timeout or a
        dropped connection, whose request may still land) and the card's status lookup
        confirms the effect is absent. A user expects a brief outage before the write to be
        ridden out, not handed to a human.
        """
        if not isinstance(exc, _SystemFailure) or not exc.transient:
            return False
        card = prepared.card
        if card.idempotent:
            return True
        if card.status_lookup is None or not isinstance(exc.__cause__, TransientToolError):
            return False
        try:
            return card.status_lookup(prepared.args, ctx) is None
        except Exception:  # the lookup failing leaves the outcome unknown: do not repeat
            _log.exception("status lookup of %s failed", card.name)
            return False

    def _attempt(self, prepared: PreparedCall, ctx: ToolContext) -> ToolResult:
        """One call of the handler under the card's deadline; raise what the breaker counts."""
        card, request_id = prepared.card, prepared.request_id
        ctx = replace(ctx, request_id=request_id)  # the handler's business_writes key
        future = self._pool.submit(call_handler, card, prepared.args, ctx)
        try:
            data = future.result(timeout=card.timeout_s)
        except AlreadyWritten as done:  # the ledger outlives the idempotency record
            return envelope(
                tool=card.name,
                status="success",
                data=done.result,
                summary=summary_of(card, done.result),
                request_id=request_id,
                duplicated=True,
                flags=["answered_from_ledger"],
            )
        except FutureTimeout:
            future.cancel()
            result = envelope(
                tool=card.name,
                status="timeout" if card.idempotent else "unknown",
                error_type="system",
                message=f"{card.name} did not answer within {card.timeout_s}s",
                retryable=card.idempotent,
                request_id=request_id,
            )
            raise _SystemFailure(result, transient=True) from None
        except ToolError as exc:
            result = envelope(
                tool=card.name,
                status="failed",
                error_type=exc.error_type,  # type: ignore[arg-type]
                message=exc.message,
                data=exc.details or None,
                retryable=exc.retryable and card.idempotent,
                request_id=request_id,
            )
            if exc.error_type in BACKEND_FAILURES:
                raise _SystemFailure(result, transient=exc.retryable) from exc
            return result  # the user can fix it: not the backend's fault, breaker untouched
        except (ConnectionError, TimeoutError) as exc:
            result = system_failure(card, request_id, exc, transient=True)
            raise _SystemFailure(result, transient=True) from exc
        except Exception as exc:  # a backend bug must not crash the conversation
            _log.exception("tool %s raised unexpectedly", card.name)
            result = system_failure(card, request_id, exc, transient=False)
            raise _SystemFailure(result, transient=False) from exc
        flags = [f"{FLAG_PREFIX}{path}" for path in find_injections(data)]
        non_finite = non_finite_paths(data)
        if non_finite and card.idempotent:
            # A backend answering NaN or infinity is broken; its number must not reach a reply.
            result = envelope(
                tool=card.name,
                status="failed",
                error_type="system",
                message=f"{card.name} returned a non-finite number at {', '.join(non_finite[:5])}",
                request_id=request_id,
                flags=[f"non_finite:{path}" for path in non_finite[:20]],
            )
            raise _SystemFailure(result, transient=False)
        flags += [f"non_finite:{path}" for path in non_finite[:20]]
        data = defang_value(json_safe(data))  # tool text is data: no links, images or HTML
        summary = summary_of(card, data)
        return envelope(
            tool=card.name,
            status="success",
            data=data,
            summary=summary,
            request_id=request_id,
            flags=[*prepared.flags, *flags],
        )

    def _check_status(
        self, prepared: PreparedCall, ctx: ToolContext, *, attempts: int
    ) -> ToolResult:
        """After a side-effecting call's outcome is unknown, ask the card's status lookup."""
        card = prepared.card
        found = None
        if card.status_lookup is not None:
            try:
                found = card.status_lookup(prepared.args, ctx)
            except Exception:  # the lookup itself failing leaves the outcome unknown
                _log.exception("status lookup of %s failed", card.name)
        if found is not None:
            result = envelope(
                tool=card.name,
                status="success",
                data=found,
                summary=card.summarize(found) if card.summarize else "",
                attempts=attempts,
                request_id=prepared.request_id,
                flags=["confirmed_by_status_lookup"],
            )
            self._settle(prepared, result, None)
            return result
        done = (
            ctx.resources.earlier_write(prepared.request_id)
            if isinstance(ctx.resources, Database)
            else None
        )
        if done is not None:  # the ledger row commits with the write: it happened, once
            result = envelope(
                tool=card.name,
                status="success",
                data=done[1],
                summary=summary_of(card, done[1]),
                attempts=attempts,
                request_id=prepared.request_id,
                flags=["confirmed_by_ledger"],
            )
            self._settle(prepared, result, None)
            return result
        return envelope(
            tool=card.name,
            status="unknown",
            error_type="system",
            message=f"{card.name} may or may not have happened; not retried",
            attempts=attempts,
            request_id=prepared.request_id,
        )

    def _settle(self, prepared: PreparedCall, result: ToolResult, cache_key: str | None) -> None:
        """Record the outcome: final ones are kept; a call that did not happen is released."""
        status = result["status"]
        outcome: Outcome
        if status == "success":
            outcome = "succeeded"
        elif status == "unknown":
            outcome = "keep"  # stays pending: a re-run must check, not repeat
        elif result.get("error_type") in ("user_fixable", "not_found") and not result["retryable"]:
            outcome = "failed"
        else:
            outcome = "release"
        self.admission.settle(
            request_id=prepared.request_id if prepared.recorded else None,
            fingerprint=prepared.fingerprint,
            outcome=outcome,
            result=result,
            cache_key=cache_key,
            cache_ttl_s=prepared.card.cache_ttl_s,
        )

    # ---- helpers ----------------------------------------------------------------------


def _log_retry(state: RetryCallState) -> None:
    _log.info("retrying %s after a transient failure (attempt %d)", state.fn, state.attempt_number)


__all__ = [
    "ActionExecutor",
    "Decision",
    "ExecutorSettings",
    "PreparedCall",
    "TransientToolError",
    "canonical",
    "envelope",
    "fingerprint_for",
    "request_id_for",
]
