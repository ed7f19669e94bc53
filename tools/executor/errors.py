"""Failures a tool handler can raise, each mapped to one ``error_type`` of the envelope.

Handlers raise these instead of returning ad-hoc error dicts, so the executor alone decides
what the model sees, what is retried and what the user is told.
"""

from __future__ import annotations

from config.limits import JsonValue


class ToolError(Exception):
    """A failure the executor turns into a structured result instead of a crash."""

    error_type = "system"
    retryable = False

    def __init__(self, message: str, *, details: dict[str, JsonValue] | None = None) -> None:
        """Keep a message for the model and optional machine-readable details."""
        super().__init__(message)
        self.message = message
        self.details = details or {}


class UserFixableError(ToolError):
    """The user can fix this (wrong state of the order, missing detail); say exactly why."""

    error_type = "user_fixable"


class ResourceNotFoundError(ToolError):
    """The resource does not exist, or belongs to someone else: the two look the same."""

    error_type = "not_found"


class ConflictError(ToolError):
    """The request collides with what just changed (already done, taken by someone else).

    Nothing was done by this call; the user should check before trying again.
    """

    error_type = "conflict"


class CompensatedError(ToolError):
    """The effect happened, then failed to complete, and a compensating action reversed it.

    Nothing is left of it: a transfer whose clearing failed was put back. The breaker counts
    it as the backend's failure.
    """

    error_type = "compensated"


class TransientToolError(ToolError):
    """The backend is briefly unavailable (timeout, connection, 5xx); a retry may succeed."""

    error_type = "system"
    retryable = True


class PermanentToolError(ToolError):
    """The backend failed in a way a retry will not fix."""

    error_type = "system"


class SchemaDriftError(PermanentToolError):
    """The backend answered, but not in the shape its card declares (a renamed field).

    ``details`` holds ``{"reason": "schema_drift", "fields": [...]}``. For a side-effecting
    tool the effect may have happened: the executor checks its status lookup.
    """


class HandoffRequired(ToolError):
    """This agent may not do it; another agent (``details["handoff"]``) must take over."""

    error_type = "permission_denied"
