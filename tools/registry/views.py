"""What the registry says about a card outside the code: to a model, and when it refuses.

``ModelToolView`` is a card in OpenAI ``tools`` format (``ToolCard.model_view``): only what
helps a model choose and fill a call. ``Unavailable`` is why a registered tool does not serve
now (``ToolRegistry.unavailable``), which the executor's refusal carries.
"""

from __future__ import annotations

from typing import Literal, TypedDict

from config.limits import JsonObject


class FunctionView(TypedDict):
    """What a model is told of one tool: its name, when to use it, its parameters' schema."""

    name: str
    description: str
    parameters: JsonObject
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
