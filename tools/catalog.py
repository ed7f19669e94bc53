"""The default tool catalog: every tool the agent ships with, registered once."""

from __future__ import annotations

from tools.orders import ORDER_TOOLS
from tools.registry import ToolRegistry


def default_registry() -> ToolRegistry:
    """Return a fresh registry holding the built-in tools."""
    registry = ToolRegistry()
    for card in ORDER_TOOLS:
        registry.register(card)
    return registry
