"""One embedded worker process: the agent graph on Redis, driven by JSON lines on stdin.

Usage: python -m tests.services.graph_worker

Environment: ``REDIS_URL`` (checkpoints, idempotency, run locks), ``REACH_DATA_DIR`` (the
shared business database), ``REACH_RUN_LOCK_WAIT_S`` / ``REACH_RUN_LOCK_TTL_S``.

Each stdin line is a command; each answer is one JSON line on stdout:
- ``{"op": "say", "thread": T, "text": X, "user": U}`` → ``{"reply", "busy", "interrupted"}``
- ``{"op": "resume", "thread": T, "value": "确认", "user": U}`` → the same
- ``{"op": "bench", "prefix": P, "threads": N, "turns": K}`` → ``{"turns", "elapsed_s"}``

Options on say/resume: ``"lock": false`` runs without the run lock, as a server that does
not serialize runs would (to exercise the executor's own in-flight wait);
``"clearing_delay": S`` holds a transfer inside its handler for S seconds after the money
moved. A message containing ``HANG_MARKER`` blocks its turn forever after printing
``{"event": "in_turn"}``, so a test can SIGKILL the worker there. Options are per command
because starting a worker costs tens of seconds on a loaded machine.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.types import Command
from redis import Redis

from config.settings import get_settings
from graph.builder import build_graph
from graph.checkpoint import make_checkpointer
from graph.run_lock import LockedGraph
from nodes.services import Services
from scenarios import SCENARIOS
from scenarios.transfer.tools import FinanceBackends
from state import Context
from understanding.generator import CommandGenerator

HANG_MARKER = "HANG-HERE"


class HangOn:
    """A command generator that stops dead on one marker text (where to kill the worker)."""

    def __init__(self, inner: CommandGenerator, marker: str) -> None:
        self.inner = inner
        self.marker = marker

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def generate(self, text: str, view: Any) -> Any:
        if self.marker in text:
            print(json.dumps({"event": "in_turn"}), flush=True)
            threading.Event().wait()
        return self.inner.generate(text, view)


def answer(out: Any) -> dict[str, Any]:
    """Reduce a run's result to what the test checks."""
    if isinstance(out, dict) and "busy" in out:
        return {"reply": out["messages"][-1].content, "busy": True, "interrupted": False}
    messages = [m for m in out.get("messages", []) if isinstance(m, AIMessage)]
    return {
        "reply": messages[-1].content if messages else "",
        "busy": False,
        "interrupted": bool(out.get("__interrupt__")),
        "tools": [(r.get("tool"), r.get("status")) for r in out.get("tool_results") or []],
    }


def set_clearing_delay(delay: float) -> None:
    """Make the clearing step (after the money moved, inside the handler) take ``delay`` s."""

    def clearing(_record: Any) -> None:
        if delay:
            time.sleep(delay)  # the money has moved; the handler has not returned yet

    FinanceBackends.clearing = staticmethod(clearing)  # type: ignore[assignment]


def main() -> None:
    settings = get_settings()
    assert settings.redis_url, "REDIS_URL must be set"
    services = Services(scenarios=tuple(SCENARIOS), settings=settings)
    services.commands = HangOn(services.commands_for(None), HANG_MARKER)
    app = build_graph(make_checkpointer("redis", settings=settings), services=services)
    locked = LockedGraph(app, Redis.from_url(settings.redis_url), settings=settings)
    print(json.dumps({"event": "ready"}), flush=True)
    for line in sys.stdin:
        command = json.loads(line)
        op = command["op"]
        graph: Any = locked if command.get("lock", True) else app
        set_clearing_delay(float(command.get("clearing_delay", 0)))
        context = Context(user_id=command.get("user", "u_10001"), user_role="customer")
        if op == "bench":
            started = time.perf_counter()
            turns = 0
            for i in range(command["threads"]):
                config = {"configurable": {"thread_id": f"{command['prefix']}-{i}"}}
                for _ in range(command["turns"]):
                    graph.invoke(
                        {"messages": [("user", "OD-20240618-001 到哪了")]}, config, context=context
                    )
                    turns += 1
            elapsed = time.perf_counter() - started
            print(json.dumps({"turns": turns, "elapsed_s": elapsed}), flush=True)
            continue
        config = {"configurable": {"thread_id": command["thread"]}}
        if op == "say":
            run_input: Any = {"messages": [("user", command["text"])]}
        else:
            run_input = Command(resume=command["value"])
        out = graph.invoke(run_input, config, context=context)
        print(json.dumps(answer(out), ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
