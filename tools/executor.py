"""The action executor: the only path from a model's tool call to a real system.

Every call goes through the same pipeline, in this order:

1. lookup       an unknown tool is ``not_found``, naming the available ones
2. parse        unambiguous JSON slips are repaired; anything else is ``validation``
3. validate     the card's pydantic model; nothing invalid reaches a handler
4. authorize    role → permission, then resource owner → ``Context.user_id``
5. confirm      high-risk tools need an explicit decision (the graph asks with interrupt())
6. idempotency  a request id derived from thread, task, tool and arguments; a second run
                returns the stored result with ``duplicated: true``
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
import hashlib
import inspect
import json
import logging
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pydantic import BaseModel, ValidationError
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)

from tools.admission import Admission, LocalAdmission, Outcome
from tools.audit import AuditLog
from tools.db import AlreadyWritten, Database
from tools.errors import SchemaDriftError, ToolError, TransientToolError
from tools.guards import CircuitBreaker, CircuitBreakers, CircuitOpenError, RateLimiter, TaskGuards
from tools.limits import cut_marker, json_bytes, json_safe
from tools.parsing import ArgumentParseError, argument_problem, parse_arguments
from tools.pii import mask_pii
from tools.registry import ToolCard, ToolContext, ToolRegistry
from tools.stores import (
    IdempotencyRecord,
    IdempotencyStore,
    MemoryIdempotencyStore,
    MemoryResultCache,
    ResultCache,
)
from tools.types import non_finite_paths
from tools.untrusted import FLAG_PREFIX, defang_value, find_injections

Status = Literal["success", "failed", "timeout", "rejected", "pending", "unknown"]
ErrorType = Literal[
    "user_fixable",
    "validation",
    "not_found",
    "permission_denied",
    "rate_limited",
    "circuit_open",
    "not_requested",
    "disabled",
    "conflict",
    "compensated",
    "system",
]
"""Why a call did not succeed; ``tools.failures.classify`` says what each means to a user."""
BACKEND_FAILURES = frozenset({"system", "compensated"})
"""Error types of the backend's own failures: the breaker counts them."""
DecisionKind = Literal["approve", "reject", "edit"]

_log = logging.getLogger(__name__)
MAX_TOOL_NAME_CHARS = 128
"""Longest tool name looked up; longer ones are refused before any lookup."""
MAX_AUDIT_ARGUMENT_BYTES = 4096
"""Arguments larger than this are audited as a marker (size and SHA-256 of the masked form)."""


def canonical(parameters: dict[str, Any]) -> str:
    """Serialize arguments the same way whatever their key order.

    Values that are not JSON (only bad input has them) are written as their ``repr``, so a
    provisional request id can always be derived.
    """
    return json.dumps(
        parameters, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=repr
    )


AUDIT_ONLY_FLAGS = "_audit_only_flags"
"""Envelope key for flags that go to the audit record and never into the returned envelope."""


def request_id_for(session_id: str, task_id: str, tool: str, parameters: dict[str, Any]) -> str:
    """Derive the call's request id from what it does, so a re-run yields the same id."""
    raw = f"{session_id}|{task_id}|{tool}|{canonical(parameters)}"
    return f"req_{hashlib.sha256(raw.encode('utf-8', 'surrogatepass')).hexdigest()[:24]}"


def fingerprint_for(tool: str, parameters: dict[str, Any]) -> str:
    """Hash what a request does, to catch an idempotency key reused for something else."""
    return hashlib.sha256(f"{tool}|{canonical(parameters)}".encode()).hexdigest()[:32]


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
    flags: Sequence[str] = (),
) -> dict[str, Any]:
    """Build the one result shape every tool call returns, success or not."""
    return {
        "tool": tool,
        "status": status,
        "error_type": error_type,
        "message": message,
        "data": mask_pii(json_safe(data)),
        "summary": mask_pii(summary),
        "request_id": request_id,
        "duplicated": duplicated,
        "retryable": retryable,
        "attempts": attempts,
        "latency_ms": round(latency_ms, 3),
        "flags": list(flags),
    }


@dataclass(frozen=True)
class Decision:
    """A person's answer to a confirmation request."""

    kind: DecisionKind
    """approve, reject, or edit (approve with changed arguments)."""
    parameters: dict[str, Any] | None = None
    """The edited arguments, for ``edit``."""


@dataclass(frozen=True)
class PreparedCall:
    """A call that passed lookup, parsing, validation and authorization."""

    card: ToolCard
    """The tool."""
    args: BaseModel
    """Validated arguments."""
    arguments: dict[str, Any]
    """The same, as JSON, for ids, audit and confirmation."""
    request_id: str
    """Deterministic id, or the caller's idempotency key."""
    fingerprint: str
    """Hash of tool and arguments."""
    call_id: str | None = None
    """The model's tool-call id, for correlation only; never used for idempotency."""
    flags: tuple[str, ...] = ()
    """Notes such as repairs made to the arguments."""

    @property
    def needs_confirmation(self) -> bool:
        """Whether a person must approve the call first."""
        return self.card.risk == "high"

    def action(self) -> dict[str, Any]:
        """Describe the call for a confirmation prompt, identifiers masked."""
        return {
            "request_id": self.request_id,
            "tool": self.card.name,
            "description": self.card.description,
            "arguments": mask_pii(self.arguments),
        }


@dataclass(frozen=True)
class ExecutorSettings:
    """Retry and guard settings; the defaults suit interactive use."""

    max_attempts: int = 3
    """Attempts of an idempotent tool on transient failure (1 = no retry)."""
    backoff_initial_s: float = 0.2
    """First backoff; doubles each retry."""
    backoff_max_s: float = 2.0
    """Longest backoff."""
    backoff_jitter_s: float = 0.1
    """Random jitter added to each backoff."""
    guards: TaskGuards = field(default_factory=TaskGuards)
    """Per-task ceilings."""


class _SystemFailure(Exception):
    """A failure the breaker counts: transient, timeout or unexpected."""

    def __init__(self, result: dict[str, Any], *, transient: bool) -> None:
        super().__init__(result.get("message"))
        self.result = result
        self.transient = transient


class ActionExecutor:
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
        self, call: dict[str, Any], ctx: ToolContext, *, decision: Decision | None = None
    ) -> dict[str, Any]:
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
        self, call: dict[str, Any], ctx: ToolContext, *, decision: Decision | None = None
    ) -> dict[str, Any]:
        """Run one call without blocking the event loop."""
        return await asyncio.to_thread(self.execute, call, ctx, decision=decision)

    def execute_many(
        self, calls: Sequence[dict[str, Any]], ctx: ToolContext
    ) -> list[dict[str, Any]]:
        """Run independent calls concurrently; results keep the calls' order."""
        if isinstance(calls, Mapping | str | bytes) or not isinstance(calls, Sequence):
            calls = [calls]  # type: ignore[list-item]  # one bad call still gets an envelope
        if len(calls) <= 1:
            return [self.execute(call, ctx) for call in calls]
        with ThreadPoolExecutor(max_workers=min(16, len(calls))) as pool:
            return list(pool.map(lambda call: self.execute(call, ctx), calls))

    async def aexecute_many(
        self, calls: Sequence[dict[str, Any]], ctx: ToolContext
    ) -> list[dict[str, Any]]:
        """Run independent calls concurrently on the event loop."""
        return list(await asyncio.gather(*(self.aexecute(call, ctx) for call in calls)))

    def prepare(self, call: dict[str, Any], ctx: ToolContext) -> PreparedCall | dict[str, Any]:
        """Steps 1–4 and the idempotency lookup. Return a prepared call or an envelope.

        An envelope here is final (refused, or answered from a stored result) and audited.
        Any call shape is accepted here: a call that is not an object, a name that is not a
        string, arguments that are not JSON or are nested too deep all get a ``validation``
        envelope (and an audit record) instead of an exception.
        """
        started = time.perf_counter()
        shaped = _call_shape(call, ctx)
        if not isinstance(shaped, tuple):
            return self._finish(ctx, "", _loose_view(call), shaped, started)
        call, name = shaped
        prepared = self._prepare(call, ctx)
        if isinstance(prepared, dict):
            return self._finish(ctx, name, call.get("parameters"), prepared, started)
        return prepared

    def switched_off(self, name: str, *, request_id: str = "") -> dict[str, Any] | None:
        """The refusal of a registered tool that does not serve now, else ``None``.

        Disabled, retired or past its sunset: switched off is not "no such record", and must
        never read as not found. Nothing is audited here; ``prepare`` audits what it refuses.
        """
        refusal = self.registry.unavailable(name)
        if refusal is None:
            return None
        return envelope(
            tool=name,
            status="failed",
            error_type="disabled",
            message=refusal["message"],
            data={**refusal, "available": self.registry.names()},
            request_id=request_id,
        )

    def _prepare(self, call: dict[str, Any], ctx: ToolContext) -> PreparedCall | dict[str, Any]:
        name = str(call.get("name", ""))
        raw = call.get("parameters")
        card = self.registry.get(name, task_id=ctx.task_id or None)  # keeps the task's version
        provisional = request_id_for(ctx.session_id, ctx.task_id, name, _loose(raw))
        if card is None:
            off = self.switched_off(name, request_id=provisional)
            return off if off is not None else self._not_found(name, provisional)
        try:
            arguments, repairs = parse_arguments(raw)
            problem = argument_problem(arguments)
            if problem is not None:
                raise ArgumentParseError(_short(raw), problem)
        except ArgumentParseError as exc:
            return envelope(
                tool=name,
                status="failed",
                error_type="validation",
                message=f"arguments are not a JSON object ({exc.reason})",
                data={
                    "raw": exc.raw[:500],
                    "errors": [{"field": "(arguments)", "reason": exc.reason}],
                },
                request_id=provisional,
            )
        bools = _bools_for_numbers(card.parameters, arguments)
        if bools:
            errors = [{"field": field, "reason": "a boolean is not a number"} for field in bools]
            return envelope(
                tool=name,
                status="failed",
                error_type="validation",
                message="invalid arguments: "
                + "; ".join(f"{e['field']}: {e['reason']}" for e in errors),
                data={"errors": errors},
                request_id=provisional,
            )
        try:
            args = card.parameters.model_validate(arguments)
        except ValidationError as exc:
            return envelope(
                tool=name,
                status="failed",
                error_type="validation",
                message=_validation_message(exc),
                data={"errors": _validation_errors(exc)},
                request_id=provisional,
            )
        except (TypeError, ValueError, RecursionError) as exc:  # a validator choking on input
            return envelope(
                tool=name,
                status="failed",
                error_type="validation",
                message=f"invalid arguments: {type(exc).__name__}: {str(exc)[:200]}",
                data={"errors": [{"field": "(arguments)", "reason": str(exc)[:200]}]},
                request_id=provisional,
            )
        validated = args.model_dump(mode="json")
        identity = {k: v for k, v in validated.items() if k not in card.evidence_fields}
        request_id = request_id_for(ctx.session_id, ctx.task_id, name, identity)
        key = call.get("idempotency_key")
        if key:
            request_id = f"key_{hashlib.sha256(f'{ctx.user_id}|{key}'.encode()).hexdigest()[:24]}"
        if not self.registry.permissions.allows(ctx.user_role, card.permission):
            return envelope(
                tool=name,
                status="rejected",
                error_type="permission_denied",
                message=f"role {ctx.user_role!r} may not use {name} ({card.permission})",
                request_id=request_id,
            )
        if ctx.requested is not None and card.writes and name not in ctx.requested:
            return envelope(
                tool=name,
                status="rejected",
                error_type="not_requested",
                message=f"{name} changes something the user did not ask for in this task",
                request_id=request_id,
            )
        if card.owner_of is not None and not self.registry.permissions.acts_on_any_owner(
            ctx.user_role, card.domain
        ):
            owner = card.owner_of(args, ctx)
            if owner != ctx.user_id:
                # Someone else's resource answers exactly like a missing one: no leak. The
                # difference is kept for the audit record only (``_finish`` pops it).
                refused = envelope(
                    tool=name,
                    status="failed",
                    error_type="not_found",
                    message="no such resource for this user",
                    request_id=request_id,
                )
                audit_only = ["owner_mismatch"] if owner is not None else []
                return {**refused, AUDIT_ONLY_FLAGS: audit_only}
        missing = [req for req in card.requires if req not in ctx.history.succeeded_tools]
        if missing:
            return envelope(
                tool=name,
                status="rejected",
                error_type="validation",
                message=f"{name} requires {', '.join(missing)} to succeed first in this task",
                data={"requires": missing},
                request_id=request_id,
            )
        fingerprint = fingerprint_for(name, identity)
        prepared = PreparedCall(
            card=card,
            args=args,
            arguments=validated,
            request_id=request_id,
            fingerprint=fingerprint,
            call_id=call.get("id"),
            flags=tuple(f"repaired:{r}" for r in repairs),
        )
        if prepared.needs_confirmation:
            # A replayed high-risk call is answered from its record, without asking again.
            record = self.admission.peek(request_id)
            if record is not None:
                return self._replayed(prepared, record) or prepared
            if isinstance(ctx.resources, Database):  # the record expired; the ledger did not
                done = ctx.resources.earlier_write(request_id)
                if done is not None:
                    return envelope(
                        tool=name,
                        status="success",
                        data=done[1],
                        summary=_summary(card, done[1]),
                        request_id=request_id,
                        duplicated=True,
                        flags=["answered_from_ledger"],
                    )
        return prepared

    def run(
        self,
        prepared: PreparedCall,
        ctx: ToolContext,
        *,
        decision: Decision | None = None,
        started: float | None = None,
    ) -> dict[str, Any]:
        """Steps 5–12 for a prepared call."""
        started = time.perf_counter() if started is None else started
        result = self._run(prepared, ctx, decision)
        return self._finish(ctx, prepared.card.name, prepared.arguments, result, started)

    def with_arguments(
        self, prepared: PreparedCall, parameters: dict[str, Any], ctx: ToolContext
    ) -> PreparedCall | dict[str, Any]:
        """Re-prepare an edited call: new arguments are validated and get a new request id."""
        return self.prepare({"name": prepared.card.name, "parameters": parameters}, ctx)

    # ---- the pipeline -----------------------------------------------------------------

    def _run(
        self, prepared: PreparedCall, ctx: ToolContext, decision: Decision | None
    ) -> dict[str, Any]:
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
            request_id=request_id,
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
                return _in_flight(self._check_status(prepared, ctx, attempts=0))
        if admitted.cached is not None:
            result = {**admitted.cached, "request_id": request_id, "attempts": 0}
            result["flags"] = ["cached"]
            self._settle(prepared, result, None)
            return result
        breaker = self.breakers.get(card.name)
        result = self._execute(prepared, ctx, breaker)
        self._settle(prepared, result, cache_key)
        return result

    def _execute(
        self, prepared: PreparedCall, ctx: ToolContext, breaker: CircuitBreaker
    ) -> dict[str, Any]:
        card = prepared.card
        attempts = 0
        settings = self.settings

        def attempt() -> dict[str, Any]:
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
            return self._circuit_open(card, prepared.request_id, attempts=attempts)
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

    def _attempt(self, prepared: PreparedCall, ctx: ToolContext) -> dict[str, Any]:
        """One call of the handler under the card's deadline; raise what the breaker counts."""
        card, request_id = prepared.card, prepared.request_id
        ctx = replace(ctx, request_id=request_id)  # the handler's business_writes key
        future = self._pool.submit(_call_handler, card, prepared.args, ctx)
        try:
            data = future.result(timeout=card.timeout_s)
        except AlreadyWritten as done:  # the ledger outlives the idempotency record
            return envelope(
                tool=card.name,
                status="success",
                data=done.result,
                summary=_summary(card, done.result),
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
            result = self._system_failure(card, request_id, exc, transient=True)
            raise _SystemFailure(result, transient=True) from exc
        except Exception as exc:  # a backend bug must not crash the conversation
            _log.exception("tool %s raised unexpectedly", card.name)
            result = self._system_failure(card, request_id, exc, transient=False)
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
        summary = _summary(card, data)
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
    ) -> dict[str, Any]:
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
                summary=_summary(card, done[1]),
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

    def _settle(
        self, prepared: PreparedCall, result: dict[str, Any], cache_key: str | None
    ) -> None:
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
            request_id=prepared.request_id,
            fingerprint=prepared.fingerprint,
            outcome=outcome,
            result=result,
            cache_key=cache_key,
            cache_ttl_s=prepared.card.cache_ttl_s,
        )

    def _replayed(self, prepared: PreparedCall, record: IdempotencyRecord) -> dict[str, Any] | None:
        if record.fingerprint != prepared.fingerprint:
            return envelope(
                tool=prepared.card.name,
                status="rejected",
                error_type="conflict",
                message="idempotency key reused with different arguments",
                request_id=prepared.request_id,
            )
        if record.state in ("succeeded", "failed") and record.result is not None:
            return {**record.result, "duplicated": True, "attempts": 0}
        return None

    # ---- helpers ----------------------------------------------------------------------

    def _finish(
        self,
        ctx: ToolContext,
        name: str,
        arguments: Any,
        result: dict[str, Any],
        started: float,
    ) -> dict[str, Any]:
        result = {**result, "latency_ms": round((time.perf_counter() - started) * 1000, 3)}
        audit_only = result.pop(AUDIT_ONLY_FLAGS, [])
        arguments = mask_pii(json_safe(arguments))
        if json_bytes(arguments) > MAX_AUDIT_ARGUMENT_BYTES:
            arguments = cut_marker(arguments)
        self.audit.write(
            json_safe(  # bad input must not be able to break the audit writer
                {
                    "ts": time.time(),
                    "session_id": ctx.session_id,
                    "task_id": ctx.task_id,
                    "user_id": ctx.user_id,
                    "user_role": ctx.user_role,
                    "tool": name,
                    "arguments": arguments,
                    "status": result["status"],
                    "error_type": result["error_type"],
                    "message": result.get("message"),
                    "summary": result.get("summary", ""),
                    "latency_ms": result["latency_ms"],
                    "attempts": result["attempts"],
                    "request_id": result["request_id"],
                    "duplicated": result["duplicated"],
                    "flags": [*result.get("flags", []), *audit_only],
                }
            )
        )
        return result

    def _circuit_open(self, card: ToolCard, request_id: str, attempts: int = 0) -> dict[str, Any]:
        return envelope(
            tool=card.name,
            status="rejected",
            error_type="circuit_open",
            message=f"{card.name} is failing; calls are paused while it recovers",
            attempts=attempts,
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


def _in_flight(result: dict[str, Any]) -> dict[str, Any]:
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


def _summary(card: ToolCard, data: Any) -> str:
    """Summarize a result; a summarizer choking on an unexpected shape leaves it empty."""
    if card.summarize is None or not isinstance(data, dict):
        return ""
    try:
        return str(card.summarize(data))
    except Exception:  # the backend's data is not what the card expects: still only data
        _log.exception("summary of %s failed", card.name)
        return ""


def _log_retry(state: RetryCallState) -> None:
    _log.info("retrying %s after a transient failure (attempt %d)", state.fn, state.attempt_number)


def _call_handler(card: ToolCard, args: Any, ctx: ToolContext) -> Any:
    result = card.handler(args, ctx)
    if inspect.isawaitable(result):
        result = asyncio.run(_await(result))
    _check_result(card, result)
    return result


def _check_result(card: ToolCard, data: Any) -> None:
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
        raise SchemaDriftError(msg, details={"reason": "schema_drift", "fields": fields}) from exc


async def _await(awaitable: Any) -> Any:
    return await awaitable


def _loose(raw: Any) -> dict[str, Any]:
    try:
        parsed = parse_arguments(raw)[0]
    except ArgumentParseError:
        return {"__unparsed__": _short(raw)}
    if argument_problem(parsed) is not None:
        return {"__unparsed__": _short(raw)}
    return parsed


def _short(value: Any, limit: int = 2000) -> str:
    """Return a bounded text form of any value (a repr that raises is bad input too)."""
    if isinstance(value, str):
        return value[:limit]
    try:
        return repr(value)[:limit]
    except Exception:  # noqa: BLE001
        return f"<{type(value).__name__}>"


def _loose_view(call: Any) -> Any:
    """Return what of a malformed call can be audited."""
    if isinstance(call, Mapping):
        return json_safe(dict(call))
    return _short(call, 500)


def _call_shape(call: Any, ctx: ToolContext) -> tuple[dict[str, Any], str] | dict[str, Any]:
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
    provisional = request_id_for(ctx.session_id, ctx.task_id, "", {"__unparsed__": _short(call)})
    return envelope(
        tool="",
        status="failed",
        error_type="validation",
        message=reason,
        data={"errors": [{"field": "(call)", "reason": reason}]},
        request_id=provisional,
    )


def _bools_for_numbers(model: type[BaseModel], arguments: dict[str, Any]) -> list[str]:
    """Return the fields declared as numbers to which the caller gave a bool.

    Pydantic accepts ``true`` for an ``int`` field in lax mode; ``true`` is never an amount
    of money or a count, so it is refused here for every tool, whatever its model says.
    """
    found = []
    for field_name, info in model.model_fields.items():
        keys = [field_name, *([info.alias] if info.alias else [])]
        value = next((arguments[key] for key in keys if key in arguments), None)
        if isinstance(value, bool) and _is_numeric(info.annotation):
            found.append(field_name)
    return found


def _is_numeric(annotation: Any) -> bool:
    if annotation in (int, float):
        return True
    args = getattr(annotation, "__args__", ())
    return bool(args) and any(arg in (int, float) for arg in args) and bool not in args


def _validation_errors(exc: ValidationError) -> list[dict[str, str]]:
    return [
        {"field": ".".join(str(part) for part in err["loc"]) or "(arguments)", "reason": err["msg"]}
        for err in exc.errors()
    ]


def _validation_message(exc: ValidationError) -> str:
    parts = [f"{err['field']}: {err['reason']}" for err in _validation_errors(exc)]
    return "invalid arguments: " + "; ".join(parts)


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
