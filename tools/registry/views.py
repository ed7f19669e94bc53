"""What the registry says about a card outside the code: to a model, and when it refuses.

``ModelToolView`` is a card in OpenAI ``tools`` format (``ToolCard.model_view``): only what
helps a model choose and fill a call. ``Unavailable`` is why a registered tool does not serve
now (``ToolRegistry.unavailable``), which the executor's refusal carries. ``EngineeringView``
is what stays server-side (``ToolCard.engineering_view``), for operators and the audit.
"""

from __future__ import annotations

from typing import Literal, TypedDict

from config.limits import JsonValue


class FunctionView(TypedDict):
    """What a model is told of one tool: its name, when to use it, its parameters' schema."""

    name: str
    description: str
    parameters: dict[str, JsonValue]
    """The arguments' JSON Schema."""
    """The JSON Schema of the arguments (free-form JSON Schema, closed to unknown fields)."""


class ModelToolView(TypedDict):
    """A card in OpenAI ``tools`` format, as ``bind_tools`` takes it."""

    type: Literal["function"]
    function: FunctionView


class Unavailable(TypedDict):
    """Why a registered tool does not serve now: disabled, retired or past its sunset."""

    tool: str
    state: str
    reason: str | None
    sunset: str | None
    message: str


class EngineeringView(TypedDict):
    """A card's server-side fields, for operators and audit (``reach tools``), never a prompt."""

    name: str
    version: str
    domain: str
    permission: str
    risk: Literal["low", "high"]
    idempotent: bool
    timeout_s: float
    rate_limit: str | None
    cache_ttl_s: float | None
    deprecated: bool
    checks_owner: bool
    requires: list[str]
    has_status_lookup: bool
    checks_result: bool
