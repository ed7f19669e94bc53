"""What a client may see of a tool result.

The executor's envelope is for the graph, the audit log and ``tool_results``: it holds the
request id, latency, attempts, flags and the error's internal wording. Anything a front-end
can read (tool messages, protocol messages, stream events) gets ``client_view(envelope)``
instead: the status, user-safe data and a message for the user, nothing else. The message
and the ``cause`` of a failure come from the one failure vocabulary, ``tools.executor.failures``;
a success's message, when the tool gave no summary, is the catalog's ``client.success`` (or
``client.already_done``) in ``language/<code>/say.yaml``.

In particular "exists but is not yours" (``owner_mismatch``) and "does not exist" must look
the same in every byte, or any caller could probe which order ids exist: both become
``{"tool", "status": "failed", "error": "not_found", "cause": "not_found", "data": None,
"message": ...}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, NotRequired, TypedDict

from language import sentence
from tools.executor.failures import Outcome, classify, short

ClientError = Literal["not_found", "not_allowed", "needs_input", "try_later", "failed"]

INTERNAL_KEYS = frozenset(
    {
        "request_id",
        "idempotency_key",
        "fingerprint",
        "latency_ms",
        "attempts",
        "flags",
        "retryable",
        "error_type",
        "trace_id",
        "span_id",
    }
)
"""Keys dropped wherever they appear, including inside ``data``."""

_ERROR_OF: dict[Outcome, ClientError] = {
    "not_found": "not_found",
    "not_permitted": "not_allowed",
    "invalid": "needs_input",
    "refused": "needs_input",
    "conflict": "needs_input",
    "rate_limited": "try_later",
    "unavailable": "try_later",
    "timeout": "try_later",
    "unknown": "try_later",
    "disabled": "try_later",
    "sunset": "failed",
    "compensated": "failed",
}
"""The coarse ``error`` code of each failure class (the message says the class itself)."""


class ClientView(TypedDict):
    """A tool result as a client sees it."""

    tool: str
    """Which tool ran (the client already sees the tool call)."""
    status: str
    """success, failed, timeout, rejected, pending or unknown."""
    data: Any
    """User-safe data on success (masked, internals removed); ``None`` otherwise."""
    message: str
    """What to tell the user."""
    error: NotRequired[ClientError]
    """A coarse reason when not successful: not_found, not_allowed, needs_input, try_later."""
    cause: NotRequired[Outcome]
    """The failure's class (``tools.executor.failures``), which ``message`` says in words."""
    already_done: NotRequired[bool]
    """The call was answered from an earlier, identical request (nothing ran twice)."""


def _text(key: str, language: str) -> str:
    return sentence(f"client.{key}", language)


def strip_internals(value: Any) -> Any:
    """Drop ``INTERNAL_KEYS`` from ``value`` and from every mapping nested in it."""
    if isinstance(value, Mapping):
        return {k: strip_internals(v) for k, v in value.items() if k not in INTERNAL_KEYS}
    if isinstance(value, list | tuple):
        return [strip_internals(item) for item in value]
    return value


def client_view(envelope: Mapping[str, Any], *, language: str = "zh") -> ClientView:
    """Reduce an executor envelope to what the user may see.

    Args:
        envelope: A result from ``tools.executor.pipeline`` (``envelope()``'s shape).
        language: ``zh`` or ``en`` for the message.

    Returns:
        ``{tool, status, data, message}`` plus ``error`` when not successful and
        ``already_done`` for an idempotent replay. Failure data, flags and the executor's
        internal error wording are never included; an owner mismatch is indistinguishable
        from a missing resource.
    """
    status = str(envelope.get("status") or "failed")
    tool = str(envelope.get("tool") or "")
    outcome = classify({**envelope, "status": status})
    if outcome is None or outcome == "pending_review":
        summary = envelope.get("summary")
        view: ClientView = {
            "tool": tool,
            "status": "success",
            "data": strip_internals(envelope.get("data")),
            "message": str(summary) if summary else _text("success", language),
        }
        if outcome is not None:
            view["message"] = short(outcome, language)
            view["cause"] = outcome
        if envelope.get("duplicated"):
            view["already_done"] = True
            view["message"] = _text("already_done", language)
        return view
    message = short(outcome, language)
    if outcome in ("awaiting", "declined"):
        return {"tool": tool, "status": status, "data": None, "message": message}
    return {
        "tool": tool,
        # A timeout and an unknown outcome are reported as such; every other non-success is
        # "failed" or "rejected", so that the status cannot tell two not-found causes apart.
        "status": status if status in {"timeout", "rejected", "unknown"} else "failed",
        "data": None,
        "message": message,
        "error": _ERROR_OF.get(outcome, "failed"),
        "cause": outcome,
    }
