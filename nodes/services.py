"""The backends nodes depend on, injected by ``build_graph`` so tests can swap any of them."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from nodes.understanding import CONFIDENCE_THRESHOLD, RuleBasedUnderstanding, Understanding
from tools.catalog import default_executor, default_registry, finance_registry
from tools.db import Database
from tools.executor import ActionExecutor
from tools.registry import ToolRegistry


@dataclass(kw_only=True)
class Services:
    """Understanding, tools and data for one compiled graph."""

    understanding: Understanding = field(default_factory=RuleBasedUnderstanding)
    """Intent and slot recognition (rule-based offline)."""
    registry: ToolRegistry = field(default_factory=default_registry)
    """The tool cards the executor may run."""
    database_factory: Callable[[], Database] = Database.default
    """Opens the business database on first use, so importing the graph touches no file."""
    executor_factory: Callable[[ToolRegistry], ActionExecutor] = default_executor
    """Builds the action executor and its stores on first use."""
    max_tool_retries: int = 2
    """Retries of a transiently failing idempotent tool before handing over to a human."""
    confidence_threshold: float = CONFIDENCE_THRESHOLD
    """Below this, the intent goes to reflect-refine."""
    _database: Database | None = field(default=None, init=False, repr=False)
    _executor: ActionExecutor | None = field(default=None, init=False, repr=False)
    _finance_executor: ActionExecutor | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    @property
    def database(self) -> Database:
        """Return the business database, opening it on first use."""
        with self._lock:
            if self._database is None:
                self._database = self.database_factory()
            return self._database

    @property
    def executor(self) -> ActionExecutor:
        """Return the action executor, building it on first use."""
        with self._lock:
            if self._executor is None:
                self._executor = self.executor_factory(self.registry)
            return self._executor

    @property
    def finance_executor(self) -> ActionExecutor:
        """Return the finance agent's executor: its own tools, which the main agent lacks."""
        with self._lock:
            if self._finance_executor is None:
                self._finance_executor = self.executor_factory(finance_registry())
            return self._finance_executor
