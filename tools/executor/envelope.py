"""The call and the envelope: what a planned tool call is, and what every call returns.

``ToolCall`` is a call as a node plans it; ``ToolResult`` is the one envelope the executor
(``tools.executor.pipeline``) returns for every call, success or not (``envelope`` builds it);
the state keeps both. The request id and fingerprint say what a call does, whatever its key
order, so a re-run finds the same idempotency record; ``Decision`` is a person's answer to a
confirmation.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, NotRequired, TypedDict, TypeVar, cast

from config.limits import json_safe
from security.pii import mask_pii
from tools.registry.cards import ToolCard
from tools.registry.types import Arguments


class ToolCall(TypedDict):
    """One planned call: the executor validates ``parameters`` before anything runs."""

    id: str
    """Derived from the task, tool and arguments, so a replay plans the same call."""
    name: str
    """The tool's name in the registry."""
    parameters: Arguments
    """Arguments as JSON; never trusted until validated."""
    task_id: NotRequired[str]
    """The task the call serves, when the step runs more than one (``TaskFrame`` batched)."""


class CallRequest(TypedDict, total=False):
    """A call as code asks the executor for it (``execute``).

    Any other shape is answered with a ``validation`` envelope, never raised.
    """

    name: str
    """The tool's name in the registry."""
    parameters: Arguments
    """Arguments as JSON; never trusted until validated."""
    id: str
    """The model's tool-call id, for correlation only."""
    idempotency_key: str
    """A caller's own key for the request, scoped to the user. A read is recorded only under
    such a key: a caller that must see the same answer when its node runs again on a resume
    (what a confirmation was built on) pins it so; any other read is read afresh."""


class ToolResult(TypedDict, total=False):
    """The one result envelope every tool call returns, success or not."""

    tool: str
    """The tool that ran (or was refused)."""
    status: Literal["success", "failed", "timeout", "rejected", "unknown", "pending"]
    """``unknown``: a side effect may have happened and could not be confirmed;
    ``pending``: awaiting a confirmation."""
    error_type: str | None
    """Why it did not succeed, as a machine-readable kind."""
    message: str | None
    """What went wrong, for operators; never shown to the user as is."""
    data: Any
    """The handler's result (masked), or details of the failure."""
    summary: str
    """One line for the audit log and a model's context."""
    request_id: str
    """The idempotency key of the call."""
    duplicated: bool
    """Answered from the idempotency record; the side effect did not run again."""
    retryable: bool
    """A transient failure that may succeed when tried again."""
    attempts: int
    """Attempts made by the executor."""
    latency_ms: float
    """Wall time of the call."""
    flags: list[str]
    """Warnings such as instruction-like text in the tool's output."""
    task_id: str
    """The task the call served, when one step served several (independent reads of one
    message); absent for the active task's own calls."""
    _audit_only_flags: list[str]
    """Flags for the audit record only (``AUDIT_ONLY_FLAGS``): the executor removes them
    before the envelope is returned (someone else's resource reads as a missing one)."""


D = TypeVar("D")


def result_data(result: ToolResult, shape: type[D]) -> D:
    """Return the ``data`` of a tool's envelope as its result type (empty when there is none).

    ``data`` is ``Any`` in the envelope, which carries every tool's result; the reader (a
    scenario's describer) knows which tool answered and names the type it reads. The executor
    checked a successful result against the card's ``result_model`` before it got here.
    """
    return cast("D", result.get("data") or {})


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
"""Why a call did not succeed; ``tools.executor.failures.classify`` says what each means."""


BACKEND_FAILURES = frozenset({"system", "compensated"})
"""Error types of the backend's own failures: the breaker counts them."""


DecisionKind = Literal["approve", "reject", "edit"]


def canonical(parameters: Mapping[str, object]) -> str:
    """Serialize arguments the same way whatever their key order.

    Values that are not JSON (only bad input has them) are written as their ``repr``, so a
    provisional request id can always be derived.
    """
    return json.dumps(
        parameters, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=repr
    )


AUDIT_ONLY_FLAGS: Final = "_audit_only_flags"
"""Envelope key for flags that go to the audit record and never into the returned envelope."""


def request_id_for(
    session_id: str, task_id: str, tool: str, parameters: Mapping[str, object]
) -> str:
    """Derive the call's request id from what it does, so a re-run yields the same id."""
    raw = f"{session_id}|{task_id}|{tool}|{canonical(parameters)}"
    return f"req_{hashlib.sha256(raw.encode('utf-8', 'surrogatepass')).hexdigest()[:24]}"


def fingerprint_for(tool: str, parameters: Mapping[str, object]) -> str:
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
) -> ToolResult:
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
    parameters: Arguments | None = None
    """The edited arguments, for ``edit``."""


def circuit_open(tool: str, request_id: str, attempts: int = 0) -> ToolResult:
    """The envelope of a call refused while the tool's breaker is open."""
    return envelope(
        tool=tool,
        status="rejected",
        error_type="circuit_open",
        message=f"{tool} is failing; calls are paused while it recovers",
        attempts=attempts,
        request_id=request_id,
    )


def system_failure(
    card: ToolCard, request_id: str, exc: Exception, *, transient: bool
) -> ToolResult:
    """The envelope of a failure the backend caused (retryable when transient and idempotent)."""
    return envelope(
        tool=card.name,
        status="failed",
        error_type="system",
        message=f"{type(exc).__name__}: {exc}",
        retryable=transient and card.idempotent,
        request_id=request_id,
    )
