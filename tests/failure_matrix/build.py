"""One row built: a fresh database and graph, the fault applied before the first turn."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from eval.backends import SEEDS, eval_settings
from graph.builder import build_graph
from jobs.bodies import JOBS
from jobs.runner import JobRunner
from jobs.store import SQLiteJobStore
from nodes.services import MAIN_AGENT, Services
from observability.audit import AuditLog
from scenarios import SCENARIOS
from storage.db import Database
from tests.failure_matrix.catalog import CATALOG, FAST, Route, routes
from tests.failure_matrix.faults import FAULT_BY_NAME, Fault, _Blocked, _raising
from tools.executor.errors import (
    PermanentToolError,
)
from tools.executor.guards import CircuitBreakers, RateLimiter
from tools.executor.pipeline import ActionExecutor
from tools.registry.cards import ToolCard, ToolRegistry
from tools.registry.lifecycle import ToolLifecycle

# ---- one row --------------------------------------------------------------------------------

RATE_RULE = "1/hour"
RESTORED_DEADLINE_S = 1.0
"""A timeout row's tool, restored: long enough for a real local call, short to wait out."""


@dataclass
class Row:
    """A built conversation with its fault applied, and what it observed."""

    tool: str
    fault: Fault
    route: Route
    db: Database
    services: Services
    app: Any
    executors: list[ActionExecutor]
    calls: list[str] = field(default_factory=list)
    """Each time the tool's real handler ran."""
    restore: list[Callable[[], None]] = field(default_factory=list)
    """Takes the fault away (the next turn must then work)."""
    teardown: list[Callable[[], None]] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)
    reached_at: int | None = None
    thread: str = "matrix"

    def config(self) -> dict[str, Any]:
        """The thread's config."""
        return {"configurable": {"thread_id": self.thread}}


def build_row(
    tool: str, fault_name: str, workdir: Path, weather_url: str, language: str = "zh"
) -> Row:
    """Build the graph of one row on a fresh database, the fault applied before any turn."""
    fault = FAULT_BY_NAME[fault_name]
    route = routes(language)[tool]
    workdir.mkdir(parents=True, exist_ok=True)
    db = Database(workdir / "business.db", seeds=SEEDS)
    settings = eval_settings(today=route.today, weather_url=weather_url).model_copy(
        update={"data_dir": workdir}
    )
    executors: list[ActionExecutor] = []
    limiter = RateLimiter()
    breakers = CircuitBreakers(fail_max=1000)  # only the breaker row opens one

    def executor_factory(registry: ToolRegistry) -> ActionExecutor:
        executor = ActionExecutor(
            registry, settings=FAST, audit=AuditLog(), rate_limiter=limiter, breakers=breakers
        )
        executors.append(executor)
        return executor

    services = Services(
        scenarios=SCENARIOS,
        settings=settings,
        database_factory=lambda: db,
        executor_factory=executor_factory,
    )
    app = build_graph(checkpointer=InMemorySaver(), services=services)
    row = Row(tool, fault, route, db, services, app, executors)
    today = date.fromisoformat(route.today)
    for agent in (MAIN_AGENT, *CATALOG.agent_cards):
        executor = services.executor_for(agent)
        registry = executor.registry
        registry.lifecycle = ToolLifecycle(today=lambda: today)
        for name, kind in route.also.items():
            if registry.get(name) is not None and kind == "down":
                _replace(registry, name, handler=_raising(PermanentToolError))
        if registry.get(tool) is not None:
            _inject(row, registry, executor, limiter, breakers, today)
    if tool in ("export_sales_report", "query_job_status", "send_bulk_notification"):
        _hold_jobs(row, workdir, settings)
    return row


def _replace(registry: ToolRegistry, name: str, **changes: Any) -> ToolCard:
    card = registry.get(name)
    assert card is not None, name
    registry.register(dataclasses.replace(card, **changes), replace_existing=True)
    return card


def _inject(
    row: Row,
    registry: ToolRegistry,
    executor: ActionExecutor,
    limiter: RateLimiter,
    breakers: CircuitBreakers,
    today: date,
) -> None:
    fault, tool = row.fault, row.tool
    original = registry.get(tool)
    assert original is not None
    real = original.handler

    def spied(args: Any, ctx: Any) -> Any:
        row.calls.append(tool)
        return real(args, ctx)

    changes: dict[str, Any] = {"handler": spied, **fault.card(original)}
    if fault.rate_limited:
        changes["rate_limit"] = RATE_RULE
        limiter.hit(RATE_RULE, row.route.user, tool)  # the user's one call this hour is used
    _replace(registry, tool, **changes)
    # a timeout row's tool comes back with a short deadline too: the next turn's same request
    # waits at most that long for the abandoned call's record (the card's own 5 s otherwise)
    back: dict[str, Any] = {"timeout_s": RESTORED_DEADLINE_S} if "timeout_s" in changes else {}
    row.restore.append(
        lambda: registry.register(
            dataclasses.replace(original, handler=spied, **back), replace_existing=True
        )
    )
    for value in changes.values():
        if isinstance(value, _Blocked):
            row.restore.append(value.release.set)
    if fault.breaker_open:
        breaker = breakers.get(tool)
        for _ in range(breakers.fail_max):
            breaker.record_failure()
        row.restore.append(breaker.record_success)
    if fault.lifecycle is not None:
        lifecycle = registry.lifecycle
        if fault.lifecycle == "retired":
            lifecycle.set_status(tool, "retired", version=original.version)
        elif fault.lifecycle == "sunset":
            lifecycle.set_status(tool, "deprecated", sunset=today - timedelta(days=17))
        else:
            lifecycle.set_status(tool, "disabled")
        version = original.version if fault.lifecycle == "retired" else None
        row.restore.append(lambda: lifecycle.set_status(tool, "active", version=version))


def _hold_jobs(row: Row, workdir: Path, settings: Any) -> None:
    """Give the row a job runner whose jobs stay running until the row ends."""
    gate = threading.Event()
    runner = JobRunner(SQLiteJobStore(workdir / "jobs.db"), resources=row.db)
    JOBS.install(row.db, runner, settings)
    for kind, body in list(runner.bodies.items()):

        def gated(params: dict[str, Any], ctx: Any, body: Any = body) -> Any:
            gate.wait(30)
            return body(params, ctx)

        runner.register(kind, gated)

    def stop() -> None:
        JOBS.forget(row.db)
        gate.set()
        runner.close()

    row.teardown.append(stop)
