"""The sections of ``make bench`` (``bench/run.py``): each runs its variants side by side.

The turn and async sections interleave the variants turn by turn inside each round, so
load from other programs hits them alike; each row is the median of its rounds with their
spread (min–max), each ratio the median of per-round ratios.
"""

from __future__ import annotations

import asyncio
import resource
import sqlite3
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.executor import CARD as PING_CARD  # noqa: E402
from bench.executor import bench_registry, per_call_us  # noqa: E402
from bench.graphs import ALICE, MESSAGE, turn_ms  # noqa: E402
from bench.roundtrips import SENDS, replies_read_later  # noqa: E402
from observability.audit import AuditLog  # noqa: E402
from tools.executor.pipeline import ActionExecutor  # noqa: E402
from tools.executor.stores import MemoryIdempotencyStore, MemoryResultCache  # noqa: E402
from tools.registry.cards import ToolCard  # noqa: E402
from tools.registry.context import ToolContext  # noqa: E402

GROWTH_POINTS = (1, 50, 100, 200)


def spread(values: list[float]) -> dict[str, float]:
    """Median and min–max of a list of round results."""
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def turn_section(apps: dict[str, Any], rounds: int, turns: int, threads: int) -> dict[str, Any]:
    """Interleave rounds over the variants; each round runs ``turns`` turns per variant.

    Threads are ``threads`` turns long and rotate, so every thread length up to it is seen.
    """
    for name, app in apps.items():  # warm up: imports, first connections, caches
        for i in range(5):
            turn_ms(app, f"warm-{name}-{i}")
    samples: dict[str, list[float]] = {name: [] for name in apps}
    cpu_samples: dict[str, list[float]] = {name: [] for name in apps}
    steps: dict[str, int] = dict.fromkeys(apps, 0)
    sends: dict[str, int] = dict.fromkeys(apps, 0)
    later: dict[str, int] = dict.fromkeys(apps, 0)  # of those, sent without waiting
    # the kernel's share of the CPU and the threads' sleeps, summed over every turn
    kernel: dict[str, float] = dict.fromkeys(apps, 0.0)
    switches: dict[str, int] = dict.fromkeys(apps, 0)
    for round_no in range(rounds):
        times: dict[str, list[float]] = {name: [] for name in apps}
        cpu: dict[str, list[float]] = {name: [] for name in apps}
        # interleaved turn by turn, so a burst of load elsewhere hits every variant alike
        for i in range(turns):
            for name, app in apps.items():
                before, before_later = SENDS.count, replies_read_later(app)
                usage = resource.getrusage(resource.RUSAGE_SELF)
                started_cpu = time.process_time()
                times[name].append(turn_ms(app, f"r{round_no}-{name}-{i // threads}"))
                # the process's CPU, all threads: less moved by other processes than wall time
                cpu[name].append((time.process_time() - started_cpu) * 1000)
                after = resource.getrusage(resource.RUSAGE_SELF)
                kernel[name] += after.ru_stime - usage.ru_stime
                switches[name] += after.ru_nvcsw - usage.ru_nvcsw
                sends[name] += SENDS.count - before
                later[name] += replies_read_later(app) - before_later
        for name, app in apps.items():
            samples[name].append(statistics.median(times[name]))
            cpu_samples[name].append(statistics.median(cpu[name]))
            for t in range((turns + threads - 1) // threads):
                config = {"configurable": {"thread_id": f"r{round_no}-{name}-{t}"}}
                # every checkpoint but the turns' inputs is one superstep
                steps[name] += sum(
                    1 for s in app.get_state_history(config) if s.metadata["step"] >= 0
                )
    base = samples["bare langgraph"]
    cpu_base = cpu_samples["bare langgraph"]
    out: dict[str, Any] = {}
    for name, values in samples.items():
        ratios = [v / b for v, b in zip(values, base, strict=True)]
        cpu_ratios = [v / b for v, b in zip(cpu_samples[name], cpu_base, strict=True)]
        out[name] = {
            "turn_ms": spread(values),
            "turns_per_s": 1000 / statistics.median(values),
            "vs_bare": spread(ratios),
            "cpu_ms": spread(cpu_samples[name]),
            "cpu_vs_bare": spread(cpu_ratios),
            "supersteps_per_turn": steps[name] / (rounds * turns),
            "kernel_cpu_ms_per_turn": 1000 * kernel[name] / (rounds * turns),
            "voluntary_switches_per_turn": switches[name] / (rounds * turns),
        }
        if sends[name]:
            out[name]["redis_requests_per_superstep"] = sends[name] / steps[name]
            # a round trip is a request the caller waits for; a write whose reply is read
            # later (by the next call on its connection) is a request, not a wait
            out[name]["redis_round_trips_per_superstep"] = (sends[name] - later[name]) / steps[name]
    memory = samples["ours, in-memory"]
    for name in apps:
        ratios = [m / v for v, m in zip(samples[name], memory, strict=True)]
        out[name]["throughput_vs_ours_in_memory"] = spread(ratios)
    return out


def executor_section(rounds: int, calls: int) -> dict[str, Any]:
    """Per-call cost of the executor (in-process stores) against the bare handler call."""
    registry = bench_registry()
    registry.register(PING_CARD)
    executor = ActionExecutor(
        registry, idempotency=MemoryIdempotencyStore(), cache=MemoryResultCache(), audit=AuditLog()
    )
    offset = 0
    per_call_us(executor, 200, offset)
    direct: list[float] = []
    through: list[float] = []
    for _ in range(rounds):
        offset += calls
        direct.append(per_call_us(None, calls, offset))
        offset += calls
        through.append(per_call_us(executor, calls, offset))
    return {
        "direct_us": spread(direct),
        "executor_us": spread(through),
        "overhead_us": spread([t - d for t, d in zip(through, direct, strict=True)]),
    }


def history_section(apps: dict[str, Any], repeats: int) -> dict[str, Any]:
    """Time to read the latest 50 checkpoints of a 15-turn thread, per saver."""
    out: dict[str, Any] = {}
    for name, app in apps.items():
        for _ in range(15):  # four checkpoints a turn
            turn_ms(app, f"hist-{name}")
    samples: dict[str, list[float]] = {name: [] for name in apps}
    for _ in range(repeats):
        for name, app in apps.items():
            config = {"configurable": {"thread_id": f"hist-{name}"}}
            started = time.perf_counter()
            entries = list(app.get_state_history(config, limit=50))
            samples[name].append((time.perf_counter() - started) * 1000)
            assert len(entries) == 50, (name, len(entries))
    for name, values in samples.items():
        out[name] = {"history_50_ms": spread(values)}
    return out


def growth_section(app: Any, saver: Any, db_path: Path, turns: int) -> dict[str, Any]:
    """One long thread: checkpoint bytes and turn latency along it, total storage at the end."""
    config = {"configurable": {"thread_id": "growth"}}
    latencies: list[float] = []
    points: dict[str, Any] = {}
    script = [MESSAGE, "我的订单怎么还没到？", "OD-20240618-001", "北京明天天气怎么样"]
    for turn in range(1, turns + 1):
        latencies.append(turn_ms(app, "growth", script[(turn - 1) % len(script)]))
        if turn in GROWTH_POINTS or turn == turns:
            checkpoint = saver.get_tuple(config).checkpoint
            _, stored = saver.serde.dumps_typed(checkpoint)
            _, plain = saver.serde.inner.dumps_typed(checkpoint)
            points[str(turn)] = {"checkpoint_bytes": len(stored), "uncompressed_bytes": len(plain)}
    for key, row in points.items():
        turn = int(key)
        window = latencies[max(0, turn - 8) : turn + 4]  # 12 turns around the point
        row["turn_ms_median"] = statistics.median(window)
    conn = sqlite3.connect(str(db_path))
    total = conn.execute(
        "SELECT (SELECT COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0) FROM checkpoints"
        " WHERE thread_id = 'growth') + (SELECT COALESCE(SUM(LENGTH(value)), 0) FROM writes"
        " WHERE thread_id = 'growth')"
    ).fetchone()[0]
    conn.close()
    early = statistics.median(latencies[4:16])
    late = statistics.median(latencies[-12:])
    return {
        "points": points,
        "storage_bytes": int(total),
        "turns": turns,
        "turn_ms_at_5_16": early,
        "turn_ms_at_last_12": late,
        "late_vs_early": late / early,
    }


# ---- parallel tools, concurrent threads ------------------------------------------------------


class Nap(BaseModel):
    """Arguments of the slow tool."""

    model_config = ConfigDict(extra="forbid")
    n: int


def parallel_section(sleep_s: float = 0.2, calls: int = 8) -> dict[str, Any]:
    """Eight independent 200 ms calls through ``execute_many``: wall time against serial."""

    def nap(args: Nap, ctx: ToolContext) -> dict[str, Any]:
        time.sleep(sleep_s)
        return {"n": args.n}

    card = ToolCard(
        name="nap_backend",
        description="Wait, then answer.",
        when_to_use="Benchmarks.",
        when_not_to_use="Anything real.",
        parameters=Nap,
        returns="n.",
        handler=nap,
        idempotent=True,
        permission="order:read",
        domain="order",
        owner_of=lambda args, ctx: ctx.user_id,
        rate_limit="10000000/minute",
        timeout_s=5,
    )
    registry = bench_registry()
    registry.register(card)
    executor = ActionExecutor(
        registry, idempotency=MemoryIdempotencyStore(), cache=MemoryResultCache(), audit=AuditLog()
    )
    ctx = ToolContext(user_id="u_10001", user_role="customer", session_id="bench", task_id="p")
    walls = []
    for round_no in range(3):
        batch = [
            {"name": "nap_backend", "parameters": {"n": round_no * 100 + i}} for i in range(calls)
        ]
        started = time.perf_counter()
        results = executor.execute_many(batch, ctx)
        walls.append((time.perf_counter() - started) * 1000)
        assert all(r["status"] == "success" for r in results), results
    return {
        "calls": calls,
        "call_ms": sleep_s * 1000,
        "wall_ms": spread(walls),
        "serial_ms": calls * sleep_s * 1000,
    }


def async_section(apps: dict[str, Any], rounds: int, turns: int, threads: int) -> dict[str, Any]:
    """The same turn through ``ainvoke``, one conversation at a time, rounds interleaved.

    LangGraph's SQLite saver has no async API, so the savers here are memory and Redis.
    """

    async def one(app: Any, thread: str) -> float:
        started = time.perf_counter()
        config = {"configurable": {"thread_id": thread}}
        await app.ainvoke({"messages": [("user", MESSAGE)]}, config, context=ALICE)
        return (time.perf_counter() - started) * 1000

    async def everything() -> dict[str, list[float]]:
        for name, app in apps.items():
            for i in range(5):
                await one(app, f"awarm-{name}-{i}")
        samples: dict[str, list[float]] = {name: [] for name in apps}
        for round_no in range(rounds):
            times: dict[str, list[float]] = {name: [] for name in apps}
            for i in range(turns):
                for name, app in apps.items():
                    times[name].append(await one(app, f"a{round_no}-{name}-{i // threads}"))
            for name in apps:
                samples[name].append(statistics.median(times[name]))
        return samples

    samples = asyncio.run(everything())
    memory = samples["ours, in-memory, async"]
    return {
        name: {
            "turn_ms": spread(values),
            "throughput_vs_ours_in_memory": spread(
                [m / v for v, m in zip(values, memory, strict=True)]
            ),
        }
        for name, values in samples.items()
    }


def concurrent_section(
    app: Any, threads: int, turns: int, phrasings: Sequence[str] = ()
) -> dict[str, Any]:
    """``threads`` conversations at once through ``ainvoke``, each ``turns`` turns in order.

    Every turn says ``MESSAGE``, or, with ``phrasings``, the next of them (each thread
    starting at its own), so no reading is reused from another thread's.
    """
    latencies: list[float] = []

    async def conversation(i: int) -> None:
        config = {"configurable": {"thread_id": f"conc-{len(phrasings)}-{i}"}}
        for t in range(turns):
            text = phrasings[(i + t) % len(phrasings)] if phrasings else MESSAGE
            started = time.perf_counter()
            await app.ainvoke({"messages": [("user", text)]}, config, context=ALICE)
            latencies.append((time.perf_counter() - started) * 1000)

    async def everything() -> float:
        started = time.perf_counter()
        await asyncio.gather(*(conversation(i) for i in range(threads)))
        return time.perf_counter() - started

    wall = asyncio.run(everything())
    latencies.sort()
    return {
        "threads": threads,
        "turns_each": turns,
        "turns_per_s": len(latencies) / wall,
        "p50_ms": latencies[len(latencies) // 2],
        "p99_ms": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
    }
