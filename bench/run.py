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
import asyncio
import json
import os
import platform
import resource
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import BaseModel, ConfigDict
from redis import Redis

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.executor import CARD as PING_CARD  # noqa: E402
from bench.executor import bench_registry, per_call_us  # noqa: E402
from bench.roundtrips import SENDS, replies_read_later  # noqa: E402
from bench.understanding import understanding_section  # noqa: E402
from config.settings import Settings  # noqa: E402
from graph.builder import build_graph, make_builder  # noqa: E402
from graph.checkpoint import sqlite_checkpointer  # noqa: E402
from graph.checkpoint.compress import protect  # noqa: E402
from graph.checkpoint.plain_redis import PlainRedisSaver  # noqa: E402
from nodes.services import Services  # noqa: E402
from observability.audit import AuditLog  # noqa: E402
from scenarios import SCENARIOS  # noqa: E402
from state import AgentState, Context, Overwrite  # noqa: E402
from storage.db import Database  # noqa: E402
from storage.transcript import RedisTranscriptStore, SQLiteTranscriptStore  # noqa: E402
from tests.helpers import open_database  # noqa: E402
from tests.services import RedisServer  # noqa: E402
from tools.executor.pipeline import ActionExecutor  # noqa: E402
from tools.executor.stores import MemoryIdempotencyStore, MemoryResultCache  # noqa: E402
from tools.registry.cards import ToolCard  # noqa: E402
from tools.registry.context import ToolContext  # noqa: E402

ALICE = Context(user_id="u_10001", user_role="customer")
MESSAGE = "OD-20240618-001 到哪了"
GROWTH_POINTS = (1, 50, 100, 200)
RESULTS = Path(__file__).resolve().parent / "results"


# ---- the bare LangGraph turn -------------------------------------------------------------


def bare_graph(db: Database) -> Any:
    """A minimal ReAct turn: fake model asks for the tool, ToolNode runs it, fake model answers.

    The tool reads the same order from the same SQLite database as ours does, so the two
    turns do the same useful work.
    """

    @tool
    def query_order_status(order_id: str) -> dict[str, Any]:
        """Return an order's status."""
        row = db.query_one("SELECT * FROM orders WHERE order_id = ?", (order_id,))
        return dict(row) if row else {"error": "not found"}

    def model(state: MessagesState) -> dict[str, Any]:
        last = state["messages"][-1]
        if isinstance(last, HumanMessage):
            order = str(last.content).split()[0]
            call = {
                "id": f"call_{len(state['messages'])}",
                "name": "query_order_status",
                "args": {"order_id": order},
                "type": "tool_call",
            }
            return {"messages": [AIMessage(content="", tool_calls=[call])]}
        assert isinstance(last, ToolMessage)
        return {"messages": [AIMessage(content=f"您的订单状态：{str(last.content)[:40]}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", model)
    builder.add_node("tools", ToolNode([query_order_status]))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition, ["tools", END])
    builder.add_edge("tools", "model")
    return builder.compile(checkpointer=InMemorySaver())


def skeleton_graph(*, masking: bool) -> Any:
    """Our state and our supersteps, with nodes that do no work: the framework's floor.

    Our turn takes two node supersteps (intent with slot filling, the tool with the reply:
    ``nodes.fusion``); each skeleton node returns the keys ours returns there, with constant
    values; the second keeps the last three user messages, as compaction does. With
    ``masking`` the saver gets our masking serializer, so the row shows what masking every
    checkpoint blob costs.
    """
    note = {"role": "agent", "content": {"stage": "bench"}, "session_id": "s", "task_id": "t"}
    call = {"id": "c", "name": "query_order_status", "parameters": {"order_id": "OD-1"}}
    result = {"status": "success", "tool": "query_order_status", "request_id": "r", "data": {}}

    def understand(state: AgentState) -> dict[str, Any]:
        return {
            "intent": "CHECK_ORDER_STATUS",
            "invalid_slots": {},
            "missing_slots": [],
            "pending_tool_calls": [call],
            "protocol": [dict(note), dict(note), dict(note)],
            "slots": Overwrite({"order_id": "OD-1"}),
            "step_count": Overwrite(2),
            "task_id": "t",
            "tool_results": Overwrite([]),
        }

    def act(state: AgentState) -> dict[str, Any]:
        users = [m for m in state["messages"] if isinstance(m, HumanMessage)]
        old = [RemoveMessage(id=str(m.id)) for m in users[:-3]]
        answer = AIMessage(content="您的订单正在配送", id=f"a-{len(users)}")
        return {
            "messages": [*old, answer],
            "protocol": [dict(note), dict(note)],
            "step_count": 2,
            "tool_results": [result],
        }

    builder = StateGraph(AgentState, context_schema=Context)
    builder.add_node("intent", understand)
    builder.add_node("tool", act)
    builder.add_edge(START, "intent")
    builder.add_conditional_edges("intent", lambda s: "tool", ["tool", END])
    builder.add_conditional_edges("tool", lambda s: END, [END])
    saver = InMemorySaver()
    if masking:
        saver.serde = protect(saver.serde, compress=False)
    return builder.compile(checkpointer=saver)


def untraced(settings: Settings, db: Database, transcript: Any) -> Any:
    """Our graph on InMemorySaver without the trace callbacks, to show what they cost."""
    services = Services(scenarios=SCENARIOS, settings=settings, database_factory=lambda: db)
    saver = InMemorySaver()
    saver.serde = protect(saver.serde, compress=False)
    return make_builder(services, transcript).compile(checkpointer=saver, name="agent")


def turn_ms(app: Any, thread: str, text: str = MESSAGE) -> float:
    """Run one turn; return its wall time in milliseconds."""
    started = time.perf_counter()
    app.invoke(
        {"messages": [("user", text)]}, {"configurable": {"thread_id": thread}}, context=ALICE
    )
    return (time.perf_counter() - started) * 1000


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


# ---- executor, savers, growth -------------------------------------------------------------


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


def concurrent_section(app: Any, threads: int, turns: int) -> dict[str, Any]:
    """``threads`` conversations at once through ``ainvoke``, each ``turns`` turns in order."""
    latencies: list[float] = []

    async def conversation(i: int) -> None:
        config = {"configurable": {"thread_id": f"conc-{i}"}}
        for _ in range(turns):
            started = time.perf_counter()
            await app.ainvoke({"messages": [("user", MESSAGE)]}, config, context=ALICE)
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


# ---- report ------------------------------------------------------------------------------------


def fmt(row: dict[str, float], digits: int = 2) -> str:
    """``median (min–max)``."""
    return f"{row['median']:.{digits}f} ({row['min']:.{digits}f}–{row['max']:.{digits}f})"


def print_table(results: dict[str, Any]) -> None:
    """Print the tables a reader of the README wants."""
    print("\n== turn: bare LangGraph vs ours (median of rounds, (min–max)) ==")
    print(
        f"{'variant':<30} {'turn ms':>22} {'× bare':>18} {'CPU × bare':>18} "
        f"{'× ours in-mem thrpt':>20} {'steps':>6} {'req/step':>8} {'RT/step':>8} "
        f"{'sys ms':>7} {'sleeps':>7}"
    )
    for name, row in results["turn"].items():
        rt = row.get("redis_round_trips_per_superstep")
        req = row.get("redis_requests_per_superstep")
        print(
            f"{name:<30} {fmt(row['turn_ms']):>22} {fmt(row['vs_bare']):>18} "
            f"{fmt(row['cpu_vs_bare']):>18} "
            f"{fmt(row['throughput_vs_ours_in_memory']):>20} {row['supersteps_per_turn']:>6.1f} "
            f"{(f'{req:.2f}' if req is not None else '-'):>8} "
            f"{(f'{rt:.2f}' if rt is not None else '-'):>8} "
            f"{row['kernel_cpu_ms_per_turn']:>7.2f} {row['voluntary_switches_per_turn']:>7.1f}"
        )
    print(
        "(req/step: Redis requests per superstep; RT/step: those the caller waited for, the"
        " writes' replies being read later;\n sys ms: the kernel's CPU per turn; sleeps: the"
        " threads' voluntary context switches)"
    )
    print("\n== async turn (ainvoke), same message: ms, × ours in-memory async ==")
    for name, row in results["async"].items():
        ratio = fmt(row["throughput_vs_ours_in_memory"])
        print(f"{name:<34} {fmt(row['turn_ms']):>22} {ratio:>20}")
    ex = results["executor"]
    print("\n== executor per call (µs) ==")
    print(
        f"direct handler {fmt(ex['direct_us'], 1)}; executor {fmt(ex['executor_us'], 1)}; "
        f"overhead {fmt(ex['overhead_us'], 1)}"
    )
    print("\n== history read, 50 checkpoints (ms) ==")
    for name, row in results["history"].items():
        print(f"{name:<30} {fmt(row['history_50_ms'])}")
    growth = results["growth"]
    print(f"\n== growth: one thread of {growth['turns']} turns on SQLite ==")
    print(f"{'turn':>5} {'ckpt bytes':>11} {'uncompressed':>13} {'turn ms':>9}")
    for turn, row in growth["points"].items():
        print(
            f"{turn:>5} {row['checkpoint_bytes']:>11} {row['uncompressed_bytes']:>13} "
            f"{row['turn_ms_median']:>9.1f}"
        )
    print(
        f"thread storage {growth['storage_bytes'] / 1e6:.2f} MB; turn ms late/early "
        f"{growth['late_vs_early']:.2f}×"
    )
    par = results["parallel"]
    print(
        f"\n== parallel tools: {par['calls']} × {par['call_ms']:.0f} ms → wall "
        f"{fmt(par['wall_ms'], 0)} ms (serial {par['serial_ms']:.0f} ms) =="
    )
    conc = results["concurrent"]
    print(
        f"\n== concurrent: {conc['threads']} threads × {conc['turns_each']} turns, async, "
        f"Redis: {conc['turns_per_s']:.1f} turns/s, p50 {conc['p50_ms']:.0f} ms, "
        f"p99 {conc['p99_ms']:.0f} ms =="
    )


def _bar_colour(name: str) -> str:
    """One colour per kind of variant: bare, skeletons, ours by saver."""
    for part, colour in (
        ("bare", "#888"),
        ("skeleton", "#7c7"),
        ("unix", "#e88"),
        ("Redis", "#c33"),
        ("SQLite", "#e92"),
        ("no trace", "#8bd"),
    ):
        if part in name:
            return colour
    return "#27a"


def draw(results: dict[str, Any], path: Path) -> None:
    """Two panels: turn time per variant with spread, and the growth of one thread."""
    import matplotlib  # noqa: PLC0415 - only the chart needs it

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    names = list(results["turn"])
    medians = [results["turn"][n]["turn_ms"]["median"] for n in names]
    lows = [m - results["turn"][n]["turn_ms"]["min"] for n, m in zip(names, medians, strict=True)]
    highs = [results["turn"][n]["turn_ms"]["max"] - m for n, m in zip(names, medians, strict=True)]
    bars = left.bar(
        names,
        medians,
        yerr=[lows, highs],
        capsize=4,
        color=[_bar_colour(name) for name in names],
    )
    for bar, name in zip(bars, names, strict=True):
        ratio = results["turn"][name]["vs_bare"]["median"]
        left.annotate(
            f"{ratio:.2f}×",
            (bar.get_x() + bar.get_width() / 2, bar.get_height()),
            ha="center",
            va="bottom",
            fontsize=9,
            xytext=(0, 8),
            textcoords="offset points",
        )
    left.set_ylabel("median turn (ms), bars: min–max of rounds")
    left.set_title("one turn, same message; × bare LangGraph")
    left.tick_params(axis="x", labelsize=8)
    left.set_xticks(range(len(names)), names, rotation=25, ha="right")  # long names overlap
    growth = results["growth"]["points"]
    turns = [int(t) for t in growth]
    right.plot(
        turns,
        [growth[str(t)]["checkpoint_bytes"] / 1024 for t in turns],
        "o-",
        label="checkpoint KB (stored)",
    )
    right.plot(
        turns,
        [growth[str(t)]["uncompressed_bytes"] / 1024 for t in turns],
        "s--",
        label="checkpoint KB (uncompressed)",
    )
    right.set_xlabel("turn of one thread (SQLite)")
    right.set_ylabel("KB")
    twin = right.twinx()
    twin.plot(
        turns,
        [growth[str(t)]["turn_ms_median"] for t in turns],
        "^-",
        color="#a42",
        label="turn ms",
    )
    twin.set_ylabel("turn ms (median of 12 turns around)")
    twin.set_ylim(bottom=0)
    right.set_ylim(bottom=0)
    right.legend(loc="upper left", fontsize=8)
    twin.legend(loc="lower right", fontsize=8)
    right.set_title("bounded state along one thread")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


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
        print("understanding section: model calls per turn, prompt tokens", flush=True)
        results["understanding"] = understanding_section(os.environ.get("REACH_BENCH_MODEL_URL"))
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
