"""Every import of project code the evaluation depends on, in one place.

The scenario code is moving (issue 8); when a name moves, repoint it here and nothing else
in ``eval/`` changes.
"""

from __future__ import annotations

from graph.builder import build_graph
from nodes.understanding import RuleBasedUnderstanding, Understanding
from tools.audit import AuditLog
from tools.db import Database
from tools.errors import (
    PermanentToolError,
    ResourceNotFoundError,
    ToolError,
    TransientToolError,
)
from tools.executor import ActionExecutor, Decision, ExecutorSettings, PreparedCall, envelope
from tools.parsing import ArgumentParseError, parse_arguments
from tools.permissions import acts_on_any_owner, role_allows
from tools.registry import ToolCard, ToolContext, ToolRegistry

WEATHER_URL_ENV = "REACH_WEATHER_URL"
"""Where the weather tool finds its API."""
TODAY_ENV = "REACH_TODAY"
"""The fixed "today" relative dates are counted from."""


def clear_settings_cache() -> None:
    """Forget cached settings, so an environment change made by the harness is seen."""
    try:
        from tools.settings import get_settings
    except ImportError:  # pragma: no cover - settings moved
        return
    get_settings.cache_clear()


def start_weather_server() -> tuple[object, str]:
    """Start the demo weather API (Beijing, Shanghai, Hangzhou; 404 otherwise)."""
    from cli.weather_server import start_demo_weather_server

    return start_demo_weather_server()


__all__ = [
    "TODAY_ENV",
    "WEATHER_URL_ENV",
    "ActionExecutor",
    "ArgumentParseError",
    "AuditLog",
    "Database",
    "Decision",
    "ExecutorSettings",
    "PermanentToolError",
    "PreparedCall",
    "ResourceNotFoundError",
    "RuleBasedUnderstanding",
    "ToolCard",
    "ToolContext",
    "ToolError",
    "ToolRegistry",
    "TransientToolError",
    "Understanding",
    "acts_on_any_owner",
    "build_graph",
    "clear_settings_cache",
    "envelope",
    "parse_arguments",
    "role_allows",
]
