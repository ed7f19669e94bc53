"""Steps 1–4 of the pipeline and the idempotency lookup: what ``prepare`` does before any effect.

``CallPreparation`` is the first half of ``ActionExecutor`` (``tools.executor.pipeline``):
lookup, parse, validate, authorize, and the answer from an earlier identical request. The
graph calls it apart from ``run`` so it can ask for a confirmation in between. The audit
record every call ends with (``_finish``) is written here too, for both halves.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from pydantic import BaseModel, ValidationError

from config.limits import cut_marker, json_bytes, json_safe
from observability.audit import AuditLog
from observability.records import ToolCallRecord
from security.pii import mask_pii
from storage.db import Database
from tools.executor.admission import Admission
from tools.executor.checks import (
    bools_for_numbers,
    call_shape,
    loose_arguments,
    loose_view,
    short_text,
    summary_of,
    validation_errors,
    validation_message,
)
from tools.executor.envelope import (
    AUDIT_ONLY_FLAGS,
    ToolResult,
    envelope,
    fingerprint_for,
    request_id_for,
)
from tools.executor.errors import ToolError
from tools.executor.parsing import ArgumentParseError, argument_problem, parse_arguments
from tools.executor.stores import IdempotencyRecord
from tools.registry.cards import ToolCard, ToolRegistry
from tools.registry.context import ToolContext
from tools.registry.types import ValidatedArguments

_log = logging.getLogger(__name__)

MAX_AUDIT_ARGUMENT_BYTES = 4096
"""Arguments larger than this are audited as a marker (size and SHA-256 of the masked form)."""


class PendingAction(TypedDict):
    """A call waiting for a person's decision, as a confirmation prompt shows it (masked)."""

    request_id: str
    tool: str
    description: str
    arguments: ValidatedArguments


@dataclass(frozen=True)
class PreparedCall:
    """A call that passed lookup, parsing, validation and authorization."""

    card: ToolCard
    """The tool."""
    args: BaseModel
    """Validated arguments."""
    arguments: ValidatedArguments
    """The same, as JSON, for ids, audit and confirmation."""
    request_id: str
    """Deterministic id, or the caller's idempotency key."""
    fingerprint: str
    """Hash of tool and arguments."""
    call_id: str | None = None
    """The model's tool-call id, for correlation only; never used for idempotency."""
    flags: tuple[str, ...] = ()
    """Notes such as repairs made to the arguments."""
    keyed: bool = False
    """The caller gave its own idempotency key."""

    @property
    def recorded(self) -> bool:
        """Whether the call is deduplicated: a write, or a read its caller pinned with a key."""
        return self.card.writes or self.keyed

    @property
    def needs_confirmation(self) -> bool:
        """Whether a person must approve the call first."""
        return self.card.risk == "high"

    def action(self) -> PendingAction:
        """Describe the call for a confirmation prompt, identifiers masked."""
        return {
            "request_id": self.request_id,
            "tool": self.card.name,
            "description": self.card.description,
            "arguments": mask_pii(self.arguments),
        }


class CallPreparation:
    """Lookup, parsing, validation, authorization and the idempotency lookup of a call."""

    registry: ToolRegistry
    admission: Admission
    audit: AuditLog

    def prepare(self, call: Mapping[str, Any], ctx: ToolContext) -> PreparedCall | ToolResult:
        """Steps 1–4 and the idempotency lookup. Return a prepared call or an envelope.

        An envelope here is final (refused, or answered from a stored result) and audited.
        Any call shape is accepted here: a call that is not an object, a name that is not a
        string, arguments that are not JSON or are nested too deep all get a ``validation``
        envelope (and an audit record) instead of an exception.
        """
        started = time.perf_counter()
        shaped = call_shape(call, ctx)
        if not isinstance(shaped, tuple):
            return self._finish(ctx, "", loose_view(call), shaped, started)
        call, name = shaped
        prepared = self._prepare(call, ctx)
        if isinstance(prepared, dict):
            return self._finish(ctx, name, call.get("parameters"), prepared, started)
        return prepared

    def switched_off(self, name: str, *, request_id: str = "") -> ToolResult | None:
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

    def _prepare(self, call: Mapping[str, Any], ctx: ToolContext) -> PreparedCall | ToolResult:
        name = str(call.get("name", ""))
        raw = call.get("parameters")
        card = self.registry.get(name, task_id=ctx.task_id or None)  # keeps the task's version
        provisional = request_id_for(ctx.session_id, ctx.task_id, name, loose_arguments(raw))
        if card is None:
            off = self.switched_off(name, request_id=provisional)
            return off if off is not None else self._not_found(name, provisional)
        try:
            arguments, repairs = parse_arguments(raw)
            problem = argument_problem(arguments)
            if problem is not None:
                raise ArgumentParseError(short_text(raw), problem)
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
        bools = bools_for_numbers(card.parameters, arguments)
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
                message=validation_message(exc),
                data={"errors": validation_errors(exc)},
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
            keyed=bool(key),
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
                        summary=summary_of(card, done[1]),
                        request_id=request_id,
                        duplicated=True,
                        flags=["answered_from_ledger"],
                    )
        if card.precondition is not None:
            checked = self._precondition(prepared, ctx)
            if checked is not None:
                return checked
        return prepared

    def _precondition(self, prepared: PreparedCall, ctx: ToolContext) -> ToolResult | None:
        """The card's own check, before the call is confirmed or run: a refusal, or ``None``.

        Run after the replay lookup: a call already done answers from its record, not from a
        check that its own effect now fails ("already frozen this year").
        """
        card = prepared.card
        assert card.precondition is not None
        try:
            card.precondition(prepared.args, ctx)
        except ToolError as exc:
            return envelope(
                tool=card.name,
                status="failed",
                error_type=exc.error_type,  # type: ignore[arg-type]
                message=exc.message,
                data={**exc.details, "stage": "precondition"},
                request_id=prepared.request_id,
            )
        except Exception as exc:  # the check's backend failing: a failure, not a refusal
            _log.exception("precondition of %s raised unexpectedly", card.name)
            return envelope(
                tool=card.name,
                status="failed",
                error_type="system",
                message=f"the check before {card.name} failed: {type(exc).__name__}",
                data={"stage": "precondition"},
                request_id=prepared.request_id,
            )
        return None

    def _not_found(self, name: str, request_id: str) -> ToolResult:
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

    def _replayed(self, prepared: PreparedCall, record: IdempotencyRecord) -> ToolResult | None:
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

    def _finish(
        self,
        ctx: ToolContext,
        name: str,
        arguments: Any,
        result: ToolResult,
        started: float,
    ) -> ToolResult:
        result = {**result, "latency_ms": round((time.perf_counter() - started) * 1000, 3)}
        audit_only = result.pop(AUDIT_ONLY_FLAGS, [])
        arguments = mask_pii(json_safe(arguments))
        if json_bytes(arguments) > MAX_AUDIT_ARGUMENT_BYTES:
            arguments = cut_marker(arguments)
        record: ToolCallRecord = {
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
        # bad input must not be able to break the audit writer
        self.audit.write(json_safe(record))
        return result
