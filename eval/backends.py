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

from config.settings import Settings, get_settings, local_base_url
from graph.builder import build_graph
from nodes.services import Services
from observability.audit import AuditLog
from scenarios import SCENARIOS
from scenarios.weather.demo_server import start_demo_weather_server
from security.permissions import Permissions
from state import StateUpdate
from storage.db import Database
from tools.executor.errors import PermanentToolError, ToolError, TransientToolError
from tools.executor.failures import classify, said
from tools.executor.pipeline import (
    ActionExecutor,
    Decision,
    ExecutorSettings,
    PreparedCall,
    envelope,
)
from tools.registry.cards import ToolCard, ToolRegistry
from tools.registry.context import ToolContext
from understanding.recognizer import Understanding

SEEDS = [scenario.seed for scenario in SCENARIOS if scenario.seed is not None]
"""The shipped scenarios' tables and demo rows."""
ACTING_NODES = frozenset({"tool", *(agent for s in SCENARIOS for agent in s.agents)})
"""The nodes that run tools: the tool node and every scenario's sub-agents."""

UnderstandingFactory = Callable[[], Understanding | None]
"""Builds the recognizer of one run; ``None`` asks for the graph's default (the rules)."""


def rules_understanding() -> None:
    """Ask ``Services`` for its default: rules over the graph's own scenarios and dates."""
    return None


def eval_settings(*, today: str | date, weather_url: str, base_url: str | None = None) -> Settings:
    """Return the process settings with the case's business date and the demo weather API.

    The copy travels with the run's ``Services`` (and every ``ToolContext`` built from it),
    so the evaluation never mutates ``os.environ`` or the cached settings. ``base_url``
    points the model at the evaluation's cache proxy.
    """
    day = today if isinstance(today, date) else date.fromisoformat(str(today))
    update: StateUpdate = {"today": day, "weather_url": weather_url}
    if base_url is not None:
        update["base_url"] = base_url
    return get_settings().model_copy(update=update)


def model_upstream(settings: Settings | None = None) -> str:
    """The endpoint the configured model calls go to (what a cache proxy forwards to).

    ``REACH_BASE_URL`` when set; else the local server when any node's choice is ``local``
    or ``mixed`` (which is the local model unless it names another); else OpenAI's API.
    """
    settings = settings or get_settings()
    if settings.base_url:
        return settings.base_url
    choices = [settings.model] + [
        getattr(settings, f"{node}_model", None) or "" for node in ("intent", "tool", "reflect")
    ]
    if any(c == "local" or c == "mixed" or c == "mixed:local" for c in choices):
        return local_base_url(settings)
    return "https://api.openai.com/v1"


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
    "ACTING_NODES",
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
    "model_upstream",
    "rules_understanding",
    "said",
    "classify",
    "start_weather_server",
]
