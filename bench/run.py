"""``make bench``: the agent's costs side by side with bare LangGraph, in one process.

Everything runs in this process, and the variants of each comparison run in interleaved
rounds, so load from other programs on the machine hits them alike; each row reports the
median of its rounds and their spread (min–max), and each ratio is the median of per-round
ratios. Sections:

- turn: a bare LangGraph turn (fake model → ToolNode → fake model, InMemorySaver) against
  our turn in rules mode on InMemorySaver, SQLite and Redis (over loopback TCP and over a
  unix socket), same message, threads of ``--thread-turns`` turns; Redis round trips per
  superstep, the kernel's CPU per turn and the threads' voluntary context switches.
- async: the same turn through ``ainvoke`` on InMemorySaver and Redis (TCP, unix socket).
- executor: one call through the action executor against calling the handler directly.
- savers: history read (50 checkpoints) per saver; throughput comes from the turn section.
- growth: one thread of ``--growth-turns`` turns on SQLite: checkpoint bytes and turn latency
  at turns 1, 50, 100, 200, and the thread's total checkpoint storage.
- parallel: 8 tool calls of 200 ms each through ``execute_many`` → wall time.
- concurrent: 100 threads × 5 turns through the async graph on Redis: turns/s, p50, p99.
- understanding: model calls per turn (rules, model, mixed) over common conversations,
  prompt tokens per model call, and with ``REACH_BENCH_MODEL_URL`` the local model's turn
  latency (``bench/understanding.py``).

Writes ``bench/results/latest.json`` and draws ``bench/results/latest.png``.

    uv run python bench/run.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from redis import Redis

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.graphs import bare_graph, skeleton_graph, untraced  # noqa: E402
from bench.reading import (  # noqa: E402
    against_a_model_agent,
    dev_messages,
    reader_latency,
    varied_concurrency,
)
from bench.report import draw, print_table  # noqa: E402
from bench.sections import (  # noqa: E402
    async_section,
    concurrent_section,
    executor_section,
    growth_section,
    history_section,
    parallel_section,
    turn_section,
)
from bench.understanding import understanding_section  # noqa: E402
from config.settings import Settings  # noqa: E402
from graph.builder import build_graph  # noqa: E402
from graph.checkpoint import sqlite_checkpointer  # noqa: E402
from graph.checkpoint.plain_redis import PlainRedisSaver  # noqa: E402
from nodes.services import Services  # noqa: E402
from scenarios import SCENARIOS  # noqa: E402
from storage.transcript import RedisTranscriptStore, SQLiteTranscriptStore  # noqa: E402
from tests.helpers import open_database  # noqa: E402
from tests.services import RedisServer  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"


def main() -> None:
    """Run every section and write the results."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds and turns (~2 min)")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--out", type=Path, default=RESULTS / "latest.json")
    args = parser.parse_args()
    quick = args.quick
    rounds = args.rounds or (3 if quick else 7)
    turns = 10 if quick else 20
    thread_turns = 10
    growth_turns = 100 if quick else 200
    conc_threads = 20 if quick else 100

    work = Path(tempfile.mkdtemp(prefix="reach-bench-"))
    settings = Settings(data_dir=work)
    db = open_database(work / "business.db")
    server = RedisServer(work / "redis").start()
    started = time.perf_counter()
    try:
        redis_url = server.url
        unix_url = f"unix://{server.unix_socket}"  # the same server, without loopback TCP

        def ours(saver: Any, transcript: Any) -> Any:
            return build_graph(
                checkpointer=saver,
                settings=settings,
                database_factory=lambda: db,
                transcript=transcript,
            )

        sqlite_path = work / "checkpoints.db"
        sqlite_saver = sqlite_checkpointer(sqlite_path)
        transcript = SQLiteTranscriptStore(work / "transcript.db")
        redis_transcript = RedisTranscriptStore(Redis.from_url(redis_url))
        apps: dict[str, Any] = {
            "bare langgraph": bare_graph(db),
            "skeleton (our state, no work)": skeleton_graph(masking=False),
            "skeleton, 2 steps (fused)": skeleton_graph(masking=False, steps=2),
            "skeleton + masking saver": skeleton_graph(masking=True),
            "ours, in-memory": ours(InMemorySaver(), transcript),
            "ours, no trace": untraced(settings, db, transcript),
            "ours, SQLite": ours(sqlite_saver, transcript),
            "ours, Redis": ours(PlainRedisSaver.from_url(redis_url), redis_transcript),
            "ours, Redis, unix socket": ours(
                PlainRedisSaver.from_url(unix_url), RedisTranscriptStore(Redis.from_url(unix_url))
            ),
        }
        results: dict[str, Any] = {
            "machine": {
                "python": platform.python_version(),
                "cpus": _cpus(),
                "load_avg_at_start": _load(),
            },
            "quick": quick,
            "rounds": rounds,
        }
        print(f"turn section: {rounds} rounds × {turns} turns per variant", flush=True)
        results["turn"] = turn_section(apps, rounds, turns, thread_turns)
        print("async section", flush=True)
        results["async"] = async_section(
            {
                "ours, in-memory, async": apps["ours, in-memory"],
                "ours, Redis, async": apps["ours, Redis"],
                "ours, Redis, unix socket, async": apps["ours, Redis, unix socket"],
            },
            rounds,
            turns,
            thread_turns,
        )
        print("executor section", flush=True)
        results["executor"] = executor_section(rounds, 500 if quick else 2000)
        print("history section", flush=True)
        results["history"] = history_section(
            {k: v for k, v in apps.items() if k.startswith("ours")}, 10 if quick else 30
        )
        print(f"growth section: {growth_turns} turns", flush=True)
        growth_saver = sqlite_checkpointer(work / "growth.db")
        results["growth"] = growth_section(
            ours(growth_saver, transcript), growth_saver, work / "growth.db", growth_turns
        )
        print("parallel section", flush=True)
        results["parallel"] = parallel_section()
        print(f"concurrent section: {conc_threads} threads × 5 turns", flush=True)
        results["concurrent"] = concurrent_section(
            ours(PlainRedisSaver.from_url(redis_url), redis_transcript), conc_threads, 5
        )
        print(f"varied concurrency: {conc_threads} threads × 5 turns, each a new phrasing")
        results["concurrent_varied"] = varied_concurrency(
            ours(PlainRedisSaver.from_url(redis_url), redis_transcript), conc_threads, 5
        )
        print("understanding section: model calls per turn, prompt tokens", flush=True)
        model_url = os.environ.get("REACH_BENCH_MODEL_URL")
        results["understanding"] = understanding_section(model_url)
        reader = Services(scenarios=SCENARIOS, settings=settings).rule_commands
        results["understanding"]["reader_ms"] = reader_latency(reader, dev_messages())
        if model_url:
            print("our default-mode turn against a bare agent on the model", flush=True)
            results["understanding"]["against_a_model_agent"] = against_a_model_agent(
                ours(InMemorySaver(), transcript), model_url, db, 1 if quick else 3
            )
        results["machine"]["load_avg_at_end"] = _load()
        results["seconds"] = time.perf_counter() - started
    finally:
        server.stop()
    print_table(results)
    understood = results.get("understanding") or {}
    for mode in ("rules", "model", "mixed"):
        row = understood.get(mode) or {}
        calls = row.get("model_calls_per_turn") or {}
        tokens = (row.get("prompt_tokens") or {}).get("median", "-")
        print(
            f"understanding, {mode}: model calls per turn max {calls.get('max')} "
            f"mean {calls.get('mean')}; prompt tokens per call (median) {tokens}"
        )
    print(f"understanding, local model turn latency: {understood.get('local')}")
    print(f"understanding, the default reader per message: {understood.get('reader_ms')}")
    print(f"our default turn against a bare model agent: {understood.get('against_a_model_agent')}")
    print(f"concurrent, varied phrasings: {results.get('concurrent_varied')}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    draw(results, args.out.with_suffix(".png"))
    print(f"\nwrote {args.out} and {args.out.with_suffix('.png')} in {results['seconds']:.0f} s")


def _cpus() -> int:
    import os  # noqa: PLC0415

    return os.cpu_count() or 0


def _load() -> list[float]:
    import os  # noqa: PLC0415

    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


if __name__ == "__main__":
    main()
