"""Every import of project code the evaluation depends on, in one place.

The evaluation drives the shipped graph through its public seams only: ``Services`` (the
scenarios, settings, understanding, database and executor of one graph), ``build_graph``
and the executor's contract. It never imports from ``tests``. When a name moves, repoint it
here and nothing else in ``eval/`` changes.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from http.server import ThreadingHTTPServer
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph

from cli.weather_server import start_demo_weather_server
from graph.builder import build_graph
from nodes.services import Services
from nodes.understanding import Understanding
from scenarios import SCENARIOS
from tools.audit import AuditLog
from tools.db import Database
from tools.errors import PermanentToolError, ToolError, TransientToolError
from tools.executor import ActionExecutor, Decision, ExecutorSettings, PreparedCall, envelope
from tools.permissions import Permissions
from tools.registry import ToolCard, ToolContext, ToolRegistry
from tools.settings import Settings, get_settings

SEEDS = [scenario.seed for scenario in SCENARIOS if scenario.seed is not None]
"""The shipped scenarios' tables and demo rows."""

UnderstandingFactory = Callable[[], Understanding | None]
"""Builds the recognizer of one run; ``None`` asks for the graph's default (the rules)."""


def rules_understanding() -> None:
    """Ask ``Services`` for its default: rules over the graph's own scenarios and dates."""
    return None


def eval_settings(*, today: str | date, weather_url: str) -> Settings:
    """Return the process settings with the case's business date and the demo weather API.

    The copy travels with the run's ``Services`` (and every ``ToolContext`` built from it),
    so the evaluation never mutates ``os.environ`` or the cached settings.
    """
    day = today if isinstance(today, date) else date.fromisoformat(str(today))
    return get_settings().model_copy(update={"today": day, "weather_url": weather_url})


def eval_graph(
    *,
    database: Database,
    executor_factory: Callable[[ToolRegistry], ActionExecutor],
    understanding: UnderstandingFactory,
    settings: Settings,
    checkpointer: BaseCheckpointSaver[Any],
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile the shipped graph over the shipped scenarios with the run's own backends."""
    services = Services(
        scenarios=SCENARIOS,
        settings=settings,
        understanding=understanding(),
        database_factory=lambda: database,
        executor_factory=executor_factory,
    )
    return build_graph(checkpointer=checkpointer, services=services)


def start_weather_server() -> tuple[ThreadingHTTPServer, str]:
    """Start the demo weather API (Beijing, Shanghai, Hangzhou; 404 otherwise)."""
    return start_demo_weather_server()


__all__ = [
    "SEEDS",
    "ActionExecutor",
    "AuditLog",
    "Database",
    "Decision",
    "ExecutorSettings",
    "PermanentToolError",
    "Permissions",
    "PreparedCall",
    "Settings",
    "ToolCard",
    "ToolContext",
    "ToolError",
    "ToolRegistry",
    "TransientToolError",
    "Understanding",
    "UnderstandingFactory",
    "envelope",
    "eval_graph",
    "eval_settings",
    "rules_understanding",
    "start_weather_server",
]
