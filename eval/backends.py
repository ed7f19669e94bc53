"""Every import of project code the evaluation depends on, in one place.

The scenario code is moving (issue 8); when a name moves, repoint it here and nothing else
in ``eval/`` changes.
"""

from __future__ import annotations

from graph.builder import build_graph
from nodes.tasks import ScenarioSet
from nodes.understanding import RuleBasedUnderstanding, Understanding
from scenarios import SCENARIOS
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
from tools.permissions import Permissions
from tools.registry import ToolCard, ToolContext, ToolRegistry

PERMISSIONS = Permissions.merged(ScenarioSet(SCENARIOS).grants())
"""The shipped scenarios' role grants."""
SEEDS = [scenario.seed for scenario in SCENARIOS if scenario.seed is not None]
"""The shipped scenarios' tables and demo rows."""


def role_allows(role: str, permission: str) -> bool:
    """Tell whether ``role`` holds ``permission`` under the shipped scenarios' grants."""
    return PERMISSIONS.allows(role, permission)


def acts_on_any_owner(role: str, domain: str) -> bool:
    """Tell whether ``role`` may act on other users' resources of ``domain``."""
    return PERMISSIONS.acts_on_any_owner(role, domain)


def rules_understanding() -> None:
    """Ask ``build_graph`` for its default: rules over the graph's own scenarios."""
    return None


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
    "rules_understanding",
    "SEEDS",
]
