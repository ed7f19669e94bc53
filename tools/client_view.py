"""What a client may see of a tool result.

The executor's envelope is for the graph, the audit log and ``tool_results``: it holds the
request id, latency, attempts, flags and the error's internal wording. Anything a front-end
can read (tool messages, protocol messages, stream events) gets ``client_view(envelope)``
instead: the status, user-safe data and a message for the user, nothing else.

In particular "exists but is not yours" (``owner_mismatch``) and "does not exist" must look
the same in every byte, or any caller could probe which order ids exist: both become
``{"tool", "status": "failed", "error": "not_found", "data": None, "message": ...}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, NotRequired, TypedDict

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

_ERROR_OF: dict[str | None, ClientError] = {
    "not_found": "not_found",
    "permission_denied": "not_allowed",
    "user_fixable": "needs_input",
    "validation": "needs_input",
    "rate_limited": "try_later",
    "circuit_open": "try_later",
    "system": "try_later",
}

_MESSAGES: dict[tuple[str, str], str] = {
    ("success", "zh"): "已完成",
    ("success", "en"): "Done.",
    ("not_found", "zh"): "没有找到相关记录，请核对后再试。",
    ("not_found", "en"): "Nothing was found for that; please check and try again.",
    ("not_allowed", "zh"): "抱歉，您没有权限进行这项操作。",
    ("not_allowed", "en"): "Sorry, you are not allowed to do that.",
    ("needs_input", "zh"): "信息不完整或格式不对，请补充或更正。",
    ("needs_input", "en"): "Some details are missing or invalid; please correct them.",
    ("try_later", "zh"): "服务暂时不可用，请稍后再试。",
    ("try_later", "en"): "The service is unavailable right now; please try again later.",
    ("failed", "zh"): "操作没有完成。",
    ("failed", "en"): "That did not go through.",
    ("pending", "zh"): "等待您的确认。",
    ("pending", "en"): "Waiting for your confirmation.",
    ("rejected", "zh"): "已取消，未做任何操作。",
    ("rejected", "en"): "Cancelled; nothing was done.",
    ("unknown", "zh"): "暂时无法确认是否已办理，请勿重复提交，我们会核实后告知您。",
    ("unknown", "en"): "We can't confirm yet whether it went through; please don't retry.",
    ("already_done", "zh"): "此前已提交，无需重复操作。",
    ("already_done", "en"): "This was already submitted earlier.",
}


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
    already_done: NotRequired[bool]
    """The call was answered from an earlier, identical request (nothing ran twice)."""


def _text(key: str, language: str) -> str:
    return _MESSAGES.get((key, language)) or _MESSAGES[(key, "zh")]


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
        envelope: A result from ``tools.executor`` (``envelope()``'s shape).
        language: ``zh`` or ``en`` for the message.

    Returns:
        ``{tool, status, data, message}`` plus ``error`` when not successful and
        ``already_done`` for an idempotent replay. Failure data, flags and the executor's
        internal error wording are never included; an owner mismatch is indistinguishable
        from a missing resource.
    """
    status = str(envelope.get("status") or "failed")
    tool = str(envelope.get("tool") or "")
    if status == "success":
        summary = envelope.get("summary")
        view: ClientView = {
            "tool": tool,
            "status": "success",
            "data": strip_internals(envelope.get("data")),
            "message": str(summary) if summary else _text("success", language),
        }
        if envelope.get("duplicated"):
            view["already_done"] = True
            view["message"] = _text("already_done", language)
        return view
    error_type = envelope.get("error_type")
    if status == "pending":
        return {"tool": tool, "status": status, "data": None, "message": _text("pending", language)}
    if status == "rejected" and error_type is None:
        return {
            "tool": tool,
            "status": status,
            "data": None,
            "message": _text("rejected", language),
        }
    if status == "unknown":
        return {
            "tool": tool,
            "status": status,
            "data": None,
            "message": _text("unknown", language),
            "error": "try_later",
        }
    error = _ERROR_OF.get(error_type, "failed")
    if status == "timeout":
        error = "try_later"
    return {
        "tool": tool,
        # A timeout is reported as such; every other non-success is "failed" or "rejected",
        # so that the status cannot tell two not-found causes apart either.
        "status": status if status in {"timeout", "rejected"} else "failed",
        "data": None,
        "message": _text(error, language),
        "error": error,
    }
