"""Learned action plans with a real model: model calls and latency per task, cache off and on.

    uv run python bench/plans.py [--reps 3] [--understanding rules|local] [--json out.json]

Each task is a short conversation (order status with a text message, urge, refund, a refund
handed to finance, urge over two turns, flight booking, appointment, transfer; confirmations
are answered "确认"). For each task the script
runs, interleaved, ``reps`` times with the plan cache off and ``reps`` times with it on and warm
(the same kind of request ran once before, on another thread, with the cache on: that warm-up
run is reported as "cold"). Every run starts from a fresh business database, so each
conversation does the same work.

The model is reached through a counting proxy on loopback, so "model calls" are the HTTP
requests the project sent (planning, and with ``--understanding local`` also intent and slot
recognition), not an estimate. Latency is the wall time of the task's turns (the graph is
built before the clock starts). ``--understanding rules`` (the default) uses the model for the
``tool`` step only (``REACH_TOOL_MODEL``), which isolates what the cache can save; ``local``
uses it for every step (``REACH_MODEL``). The upstream defaults to the local llama-server
(``http://127.0.0.1:8181/v1``, ``qwen2.5-coder-1.5b-instruct``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from config.settings import Settings, get_settings
from graph.builder import build_graph
from planning.plans import PlanCache
from scenarios import SCENARIOS
from state import Context
from storage.db import Database

ALICE = Context(user_id="u_10001", user_role="customer")
VALID_ID = "110101199001011237"
Step = tuple[str, str]
"""``("say", text)`` or ``("resume", answer)``."""


@dataclass(frozen=True)
class Task:
    """One measured conversation and the same-kind conversation that warms the cache."""

    name: str
    steps: tuple[Step, ...]
    warm: tuple[Step, ...] | None = None
    """``None``: the task itself warms the cache."""


SMALL_REFUND = (("say", "我要退款 OD-20240618-002"), ("resume", "确认"))
TASKS = (
    Task("status + sms", (("say", "OD-20240618-001 到哪了？到了发短信告诉我"),)),
    Task("urge", (("say", "帮我催一下 OD-20240618-001 的外卖"),)),
    Task("refund", SMALL_REFUND),
    Task(
        "refund → finance",
        (("say", "我要退款 202506001"), ("resume", "确认")),
        warm=SMALL_REFUND,
    ),
    Task(
        "urge, two turns",
        (("say", "帮我催一下外卖"), ("say", "OD-20240618-001")),
    ),
    Task(
        "flight booking",
        (
            ("say", "帮我订一张2024-06-20从上海去北京的机票"),
            ("say", f"乘客张三，身份证号{VALID_ID}"),
            ("resume", "确认"),
        ),
    ),
    Task("appointment", (("say", "我想挂号"), ("say", "皮肤科，6月20号"), ("resume", "确认"))),
    Task("transfer", (("say", "帮我转500元给ACC-2001，密码123456"), ("resume", "确认"))),
)


class CountingProxy:
    """Forward chat-completion requests to ``upstream`` on loopback and count them."""

    def __init__(self, upstream: str) -> None:
        """Start listening on a free loopback port."""
        self.upstream = upstream.rstrip("/")
        self.count = 0
        self.last_body = b""
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with proxy._lock:
                    proxy.count += 1
                    proxy.last_body = body
                upstream_url = proxy.upstream + self.path.removeprefix("/v1")
                headers = {"Content-Type": "application/json"}
                try:
                    answer = httpx.post(upstream_url, content=body, headers=headers, timeout=300)
                    status, payload = answer.status_code, answer.content
                    kind = answer.headers.get("content-type", "application/json")
                except httpx.HTTPError as error:
                    status, kind = 502, "application/json"
                    payload = json.dumps({"error": {"message": str(error)}}).encode()
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        """Return the proxy's OpenAI-compatible base URL."""
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()


@dataclass
class Run:
    """One conversation's figures."""

    calls: int
    seconds: float
    sources: list[str]
    """Where each planned set of calls came from (model, rules, cache)."""
    ok: bool


@dataclass
class Figures:
    """All runs of one task."""

    cold: list[Run] = field(default_factory=list)
    off: list[Run] = field(default_factory=list)
    on: list[Run] = field(default_factory=list)


def run_conversation(
    steps: tuple[Step, ...], settings: Settings, cache: PlanCache, proxy: CountingProxy, seq: int
) -> Run:
    """Run ``steps`` on a fresh graph and database; return calls, wall time, planner sources."""
    work = Path(tempfile.mkdtemp(prefix="plans-bench-"))
    seeds = [s.seed for s in SCENARIOS if s.seed is not None]
    database = Database(work / "business.db", seeds=seeds)
    app = build_graph(
        checkpointer=InMemorySaver(),
        settings=settings,
        database_factory=lambda: database,
        plan_cache=cache,
    )
    config = {"configurable": {"thread_id": f"bench-{seq}"}}
    before = proxy.count
    start = time.perf_counter()
    out: dict[str, Any] = {}
    for kind, text in steps:
        payload: Any = Command(resume=text) if kind == "resume" else {"messages": [("user", text)]}
        if kind == "resume" and not app.get_state(config).interrupts:
            continue  # nothing to confirm (a plan that stopped early): the run says so below
        out = app.invoke(payload, config, context=ALICE)
    seconds = time.perf_counter() - start
    calls = proxy.count - before
    sources = [
        str(p["content"]["planner"]["source"])
        for p in out.get("protocol") or []
        if isinstance(p.get("content"), dict) and isinstance(p["content"].get("planner"), dict)
    ]
    results = out.get("tool_results") or []
    ok = bool(results) and results[-1].get("status") == "success"
    database.close()
    return Run(calls=calls, seconds=seconds, sources=sources, ok=ok)


def spread(values: list[float], digits: int = 1) -> str:
    """Return ``median (min–max)``."""
    if not values:
        return "–"
    med = statistics.median(values)
    return f"{med:.{digits}f} ({min(values):.{digits}f}–{max(values):.{digits}f})"


@contextmanager
def environment(values: dict[str, str]) -> Iterator[None]:
    """Set the bench's settings for its own process (settings are read from the environment)."""
    old = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    get_settings.cache_clear()
    try:
        yield
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        get_settings.cache_clear()


def main() -> None:
    """Measure every task with the cache off and on (warm), interleaved; print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--understanding", choices=("rules", "local"), default="rules")
    parser.add_argument("--upstream", default="http://127.0.0.1:8181/v1")
    parser.add_argument("--model", default="local", help="a model name, or local")
    parser.add_argument("--tasks", default="", help="comma-separated task names (default: all)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    proxy = CountingProxy(args.upstream)
    node = "REACH_MODEL" if args.understanding == "local" else "REACH_TOOL_MODEL"
    env = {
        node: args.model,
        "REACH_BASE_URL": proxy.base_url,
        "REACH_TODAY": "2024-06-18",
        "REACH_MODEL_TIMEOUT_S": "240",
        "REACH_MODEL_MAX_RETRIES": "0",
        "REACH_DATA_DIR": tempfile.mkdtemp(prefix="plans-bench-data-"),
    }
    chosen = [t for t in TASKS if not args.tasks or t.name in args.tasks.split(",")]
    figures: dict[str, Figures] = {task.name: Figures() for task in chosen}
    load = os.getloadavg()
    seq = 0
    started = time.perf_counter()
    with environment(env):
        base = get_settings()
        off_settings = base.model_copy(update={"plan_cache": False})
        for task in chosen:
            warm_cache = PlanCache()
            seq += 1
            cold = run_conversation(task.warm or task.steps, base, warm_cache, proxy, seq)
            figures[task.name].cold.append(cold)
            for _ in range(args.reps):
                seq += 1
                off = run_conversation(
                    task.steps, off_settings, PlanCache(enabled=False), proxy, seq
                )
                figures[task.name].off.append(off)
                seq += 1
                on = run_conversation(task.steps, base, warm_cache, proxy, seq)
                figures[task.name].on.append(on)
            f = figures[task.name]
            print(
                f"{task.name}: cold {cold.calls} calls {cold.sources}; "
                f"off {[r.calls for r in f.off]} {[r.sources for r in f.off]}; "
                f"on {[r.calls for r in f.on]} {[r.sources for r in f.on]}",
                flush=True,
            )
    proxy.close()
    elapsed = time.perf_counter() - started

    print()
    print(
        f"model: {args.model} via {args.upstream}; model for: "
        f"{'every step' if args.understanding == 'local' else 'tool planning only'}; "
        f"reps {args.reps}; load at start {load[0]:.2f}, at end {os.getloadavg()[0]:.2f}; "
        f"{elapsed:.0f} s"
    )
    header = (
        "| task | model calls off | model calls on (warm) | latency off, s | "
        "latency on (warm), s | on: planned from | all ok |"
    )
    print(header)
    print("|---|---|---|---|---|---|---|")
    all_off: list[Run] = []
    all_on: list[Run] = []
    for name, f in figures.items():
        all_off += f.off
        all_on += f.on
        sources = sorted({s for r in f.on for s in r.sources}) or ["–"]
        ok = all(r.ok for r in [*f.off, *f.on])
        print(
            f"| {name} | {spread([r.calls for r in f.off], 0)} | "
            f"{spread([r.calls for r in f.on], 0)} | {spread([r.seconds for r in f.off])} | "
            f"{spread([r.seconds for r in f.on])} | {', '.join(sources)} | "
            f"{'yes' if ok else 'no'} |"
        )
    print(
        f"| **all tasks** | {statistics.mean(r.calls for r in all_off):.2f} per task | "
        f"{statistics.mean(r.calls for r in all_on):.2f} per task | "
        f"{spread([r.seconds for r in all_off])} | {spread([r.seconds for r in all_on])} | | |"
    )
    if args.json is not None:
        args.json.write_text(
            json.dumps(
                {
                    "model": args.model,
                    "understanding": args.understanding,
                    "reps": args.reps,
                    "load": [load[0], os.getloadavg()[0]],
                    "elapsed_s": elapsed,
                    "tasks": {
                        name: {
                            arm: [vars(r) for r in getattr(f, arm)] for arm in ("cold", "off", "on")
                        }
                        for name, f in figures.items()
                    },
                },
                ensure_ascii=False,
                indent=1,
            )
        )


if __name__ == "__main__":
    main()
