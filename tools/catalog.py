"""The default tool catalog and the executor's default stores."""

from __future__ import annotations

import os

from redis import Redis

from tools.admission import RedisAdmission
from tools.appointments import APPOINTMENT_TOOLS
from tools.audit import AuditLog
from tools.db import data_dir
from tools.executor import ActionExecutor, ExecutorSettings
from tools.finance import FINANCE_TOOLS
from tools.flights import FLIGHT_TOOLS
from tools.guards import CircuitBreakers, RateLimiter
from tools.orders import ORDER_TOOLS
from tools.registry import ToolRegistry
from tools.sales import SALES_TOOLS
from tools.stores import MemoryResultCache, SQLiteIdempotencyStore
from tools.weather import WEATHER_TOOLS

RETENTION_ENV = "REACH_IDEMPOTENCY_RETENTION_S"


def default_registry() -> ToolRegistry:
    """Return a fresh registry holding the built-in tools."""
    registry = ToolRegistry()
    for card in (*ORDER_TOOLS, *FLIGHT_TOOLS, *APPOINTMENT_TOOLS, *WEATHER_TOOLS, *SALES_TOOLS):
        registry.register(card)
    return registry


def finance_registry() -> ToolRegistry:
    """Return the finance agent's registry: the transfer chain, nothing else."""
    registry = ToolRegistry()
    for card in FINANCE_TOOLS:
        registry.register(card)
    return registry


def default_executor(
    registry: ToolRegistry, settings: ExecutorSettings | None = None
) -> ActionExecutor:
    """Build the executor with the configured stores.

    With ``REDIS_URL`` set, idempotency records, cached results and rate-limit counters are
    shared in Redis (two round trips per call); otherwise idempotency is in SQLite in the
    data directory and the rest in-process. The audit trail goes to ``audit.jsonl`` in the
    data directory.
    """
    retention = float(os.environ.get(RETENTION_ENV) or 24 * 3600)
    url = os.environ.get("REDIS_URL")
    if url:
        return ActionExecutor(
            registry,
            admission=RedisAdmission(Redis.from_url(url), retention_s=retention),
            breakers=CircuitBreakers(),
            audit=AuditLog(data_dir() / "audit.jsonl"),
            settings=settings,
        )
    return ActionExecutor(
        registry,
        idempotency=SQLiteIdempotencyStore(data_dir() / "executor.db", retention_s=retention),
        cache=MemoryResultCache(),
        rate_limiter=RateLimiter(),
        breakers=CircuitBreakers(),
        audit=AuditLog(data_dir() / "audit.jsonl"),
        settings=settings,
    )
