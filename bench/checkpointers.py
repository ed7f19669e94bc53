"""Benchmark the same graph workload through InMemorySaver, SqliteSaver and PlainRedisSaver.

Reports invocations/s and the ratio to in-memory, Redis requests, round trips (the requests
a caller waited for) and commands per superstep, and the time to read a 50-checkpoint
history. Starts its own redis-server.

    uv run python bench/checkpointers.py [--turns 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from langgraph.checkpoint.memory import InMemorySaver
from redis import Redis

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.roundtrips import SENDS, replies_read_later  # noqa: E402
from graph.builder import build_graph  # noqa: E402
from graph.checkpoint import sqlite_checkpointer  # noqa: E402
from graph.checkpoint.plain_redis import PlainRedisSaver  # noqa: E402
from state import Context  # noqa: E402
from tests.helpers import open_database  # noqa: E402
from tests.services import RedisServer  # noqa: E402

ALICE = Context(user_id="u_10001", user_role="customer")
SCRIPT = ["我的订单怎么还没到？", "OD-20240618-001", "where is order 202506001?"]


def run_workload(app, turns: int, prefix: str) -> tuple[float, int, int, int]:  # type: ignore[no-untyped-def]
    """Run ``turns`` invocations over threads of len(SCRIPT) turns.

    Returns (seconds, supersteps, Redis requests the invocations made, of those the ones
    sent without waiting for their reply).
    """
    sends_before = SENDS.count
    later_before = replies_read_later(app)
    started = time.perf_counter()
    threads = 0
    for i in range(turns):
        thread = f"{prefix}-{i // len(SCRIPT)}"
        threads = i // len(SCRIPT) + 1
        app.invoke(
            {"messages": [("user", SCRIPT[i % len(SCRIPT)])]},
            {"configurable": {"thread_id": thread}},
            context=ALICE,
        )
    elapsed = time.perf_counter() - started
    sends = SENDS.count - sends_before
    later = replies_read_later(app) - later_before
    steps = sum(
        len(list(app.get_state_history({"configurable": {"thread_id": f"{prefix}-{t}"}})))
        for t in range(threads)
    )
    return elapsed, steps, sends, later


async def run_workload_async(app, turns: int, prefix: str) -> float:  # type: ignore[no-untyped-def]
    """Run the same workload through ``ainvoke``; return the seconds it took."""
    started = time.perf_counter()
    for i in range(turns):
        await app.ainvoke(
            {"messages": [("user", SCRIPT[i % len(SCRIPT)])]},
            {"configurable": {"thread_id": f"{prefix}-{i // len(SCRIPT)}"}},
            context=ALICE,
        )
    return time.perf_counter() - started


def history_read_ms(app, thread: str, repeats: int = 20) -> float:  # type: ignore[no-untyped-def]
    config = {"configurable": {"thread_id": thread}}
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        entries = list(app.get_state_history(config, limit=50))
        samples.append((time.perf_counter() - started) * 1000)
    assert len(entries) == 50, len(entries)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=120, help="invocations per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default="bench/results/checkpointers.json")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="reach-bench-"))
    db = open_database(work / "business.db")  # seeded: the workload reads orders
    server = RedisServer(work / "redis").start()
    try:
        savers = {
            "memory": InMemorySaver(),
            "sqlite": sqlite_checkpointer(work / "checkpoints.db"),
            "plain-redis": PlainRedisSaver.from_url(server.url),
            "plain-redis-unix": PlainRedisSaver.from_url(f"unix://{server.unix_socket}?db=0"),
        }
        apps = {
            name: build_graph(checkpointer=saver, database_factory=lambda: db)
            for name, saver in savers.items()
        }
        for name, app in apps.items():
            run_workload(app, 30, f"warm-{name}")  # warm up
        # Interleave conversation by conversation, so load on the machine hits every saver
        # alike (whole rounds of 120 turns, one saver at a time, moved the ratios by ±0.15).
        rates: dict[str, list[float]] = {name: [] for name in apps}
        async_rates: dict[str, list[float]] = {name: [] for name in apps}
        steps_total = dict.fromkeys(apps, 0)
        sends_total = dict.fromkeys(apps, 0)
        later_total = dict.fromkeys(apps, 0)
        redis = Redis.from_url(server.url)
        redis.config_resetstat()
        conversations = max(1, args.turns // len(SCRIPT))
        for round_no in range(args.rounds):
            seconds = dict.fromkeys(apps, 0.0)
            for c in range(conversations):
                for name, app in apps.items():
                    elapsed, steps, sends, later = run_workload(
                        app, len(SCRIPT), f"r{round_no}-{name}-{c}"
                    )
                    seconds[name] += elapsed
                    steps_total[name] += steps
                    sends_total[name] += sends
                    later_total[name] += later
            for name in apps:
                rates[name].append(conversations * len(SCRIPT) / seconds[name])
        # server-side commands count those run inside the Lua scripts too, and the history
        # reads that count the supersteps: an upper bound
        commands = sum(
            v["calls"]
            for k, v in redis.info("commandstats").items()
            if k not in ("cmdstat_config", "cmdstat_info")
        )

        async def async_rounds() -> None:
            # SqliteSaver has no async API (AsyncSqliteSaver has)
            served = {name: app for name, app in apps.items() if name != "sqlite"}
            for round_no in range(args.rounds):
                seconds = dict.fromkeys(served, 0.0)
                for c in range(conversations):
                    for name, app in served.items():
                        seconds[name] += await run_workload_async(
                            app, len(SCRIPT), f"a{round_no}-{name}-{c}"
                        )
                for name in served:
                    async_rates[name].append(conversations * len(SCRIPT) / seconds[name])

        asyncio.run(async_rounds())
        results: dict[str, dict[str, float]] = {}
        for name, app in apps.items():
            # a history of at least 50 checkpoints (four or five a turn)
            for i in range(15):
                app.invoke(
                    {"messages": [("user", SCRIPT[i % 3])]},
                    {"configurable": {"thread_id": f"hist-{name}"}},
                    context=ALICE,
                )
            results[name] = {
                "invocations_per_s": statistics.median(rates[name]),
                "async_invocations_per_s": (
                    statistics.median(async_rates[name]) if async_rates[name] else float("nan")
                ),
                "supersteps": steps_total[name],
                "history_50_ms": history_read_ms(app, f"hist-{name}"),
            }
        redis_steps = steps_total["plain-redis"] + steps_total["plain-redis-unix"]
        for name in ("plain-redis", "plain-redis-unix"):
            results[name]["requests_per_superstep"] = sends_total[name] / steps_total[name]
            results[name]["round_trips_per_superstep"] = (
                sends_total[name] - later_total[name]
            ) / steps_total[name]
            results[name]["redis_commands_per_superstep"] = commands / redis_steps
        base = results["memory"]
        for row in results.values():
            row["throughput_vs_memory"] = row["invocations_per_s"] / base["invocations_per_s"]
            row["async_throughput_vs_memory"] = (
                row["async_invocations_per_s"] / base["async_invocations_per_s"]
            )
            row["history_vs_memory"] = row["history_50_ms"] / base["history_50_ms"]
    finally:
        server.stop()

    header = (
        f"{'saver':<17} {'sync inv/s':>10} {'× mem':>6} {'async inv/s':>11} {'× mem':>6} "
        f"{'hist50 ms':>9} {'× mem':>6} {'req/step':>8} {'RT/step':>8} {'cmd/step':>8}"
    )
    print(header)
    for name, row in results.items():
        print(
            f"{name:<17} {row['invocations_per_s']:>10.1f} {row['throughput_vs_memory']:>6.2f} "
            f"{row['async_invocations_per_s']:>11.1f} {row['async_throughput_vs_memory']:>6.2f} "
            f"{row['history_50_ms']:>9.2f} {row['history_vs_memory']:>6.2f} "
            f"{row.get('requests_per_superstep', float('nan')):>8.2f} "
            f"{row.get('round_trips_per_superstep', float('nan')):>8.2f} "
            f"{row.get('redis_commands_per_superstep', float('nan')):>8.2f}"
        )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
