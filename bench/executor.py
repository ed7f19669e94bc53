"""Benchmark the action executor's own overhead per call, against calling the handler.

A no-op tool with every step on (parsing, validation, authorization, idempotency claim and
record, rate limit, cache read and write, breaker, timeout, retries armed, masking, injection
scan, audit). Each call has new arguments, so none is answered from the cache or the
idempotency record. Stores: in-process, SQLite idempotency, and Redis (one admission round
trip in, one out). Starts its own redis-server.

    uv run python bench/executor.py [--calls 3000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field
from redis import Redis

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.roundtrips import SENDS  # noqa: E402
from observability.audit import AuditLog  # noqa: E402
from security.permissions import Permissions  # noqa: E402
from tests.services import RedisServer  # noqa: E402
from tools.executor.admission import RedisAdmission  # noqa: E402
from tools.executor.pipeline import ActionExecutor  # noqa: E402
from tools.executor.stores import (  # noqa: E402
    MemoryIdempotencyStore,
    MemoryResultCache,
    SQLiteIdempotencyStore,
)
from tools.registry.cards import ToolCard, ToolRegistry  # noqa: E402
from tools.registry.context import ToolContext  # noqa: E402


class Ping(BaseModel):
    model_config = ConfigDict(extra="forbid")
    n: int = Field(ge=0)
    note: str = "bench"


def noop(args: Ping, ctx: ToolContext) -> dict[str, object]:
    return {"n": args.n, "ok": True}


CARD = ToolCard(
    name="ping_backend",
    description="Answer immediately; measures the executor itself.",
    when_to_use="Benchmarks.",
    when_not_to_use="Anything real.",
    parameters=Ping,
    returns="n and ok.",
    handler=noop,
    idempotent=True,
    permission="order:read",
    domain="order",
    owner_of=lambda args, ctx: ctx.user_id,
    rate_limit="10000000/minute",
    cache_ttl_s=60,
    timeout_s=5,
    summarize=lambda data: f"pong {data['n']}",
)


def bench_registry() -> ToolRegistry:
    """An empty registry whose customers may read orders, as the benchmark tools need."""
    return ToolRegistry(permissions=Permissions.merged({"customer": ["order:read"]}))


def per_call_us(executor: ActionExecutor | None, calls: int, offset: int) -> float:
    ctx = ToolContext(user_id="u_10001", user_role="customer", session_id="bench", task_id="t")
    started = time.perf_counter()
    for i in range(calls):
        if executor is None:
            noop(Ping(n=offset + i), ctx)
        else:
            result = executor.execute(
                {"name": "ping_backend", "parameters": {"n": offset + i}}, ctx
            )
            assert result["status"] == "success", result
    return (time.perf_counter() - started) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default="bench/results/executor.json")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="reach-bench-"))
    server = RedisServer(work / "redis").start()
    registry = bench_registry()
    registry.register(CARD)
    try:
        executors: dict[str, ActionExecutor | None] = {
            "direct handler call": None,
            "executor, in-process stores": ActionExecutor(
                registry,
                idempotency=MemoryIdempotencyStore(),
                cache=MemoryResultCache(),
                audit=AuditLog(),
            ),
            "executor, SQLite idempotency": ActionExecutor(
                registry,
                idempotency=SQLiteIdempotencyStore(work / "idem.db"),
                audit=AuditLog(),
            ),
            "executor, Redis stores": ActionExecutor(
                registry,
                admission=RedisAdmission(Redis.from_url(server.url)),
                audit=AuditLog(),
            ),
        }
        samples: dict[str, list[float]] = {name: [] for name in executors}
        round_trips = 0.0
        offset = 0
        for executor in executors.values():  # warm up
            per_call_us(executor, 200, offset)
            offset += 200
        for _ in range(args.rounds):
            for name, executor in executors.items():
                before = SENDS.count
                samples[name].append(per_call_us(executor, args.calls, offset))
                if name == "executor, Redis stores":
                    round_trips = (SENDS.count - before) / args.calls
                offset += args.calls
    finally:
        server.stop()
    results = {name: statistics.median(values) for name, values in samples.items()}
    base = results["direct handler call"]
    print(f"{'':32} {'µs/call':>9} {'overhead µs':>12}")
    for name, value in results.items():
        print(f"{name:32} {value:>9.1f} {value - base:>12.1f}")
    print(f"Redis round trips per call: {round_trips:.2f}")
    out = {name: {"us_per_call": v, "overhead_us": v - base} for name, v in results.items()}
    out["redis_round_trips_per_call"] = round_trips  # type: ignore[assignment]
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
