"""What reading a message costs, in the default mode and against a bare agent on a model.

- ``reader_latency``: the default reader (``understanding.reader``) on messages it has not
  seen, each once, timed around ``generate``: p50 / p95 / max in ms (issue 37: p50 ≤ 25 ms
  on 2 cores). The messages are the labelled intent set's development rows (written before
  the recognizer existed) and the conversations of ``bench/understanding.py``.
- ``against_a_model_agent``: the same messages answered by our graph in the default mode
  (recognizer, executor, reply) and by a bare LangGraph ReAct agent whose every step is the
  local model with the same two read tools; interleaved rounds, median and spread per side.
- ``varied_concurrency``: 100 threads × 5 turns through the async graph on Redis, each turn a
  different phrasing (no reading is reused from another thread's).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.graphs import ALICE  # noqa: E402
from bench.sections import concurrent_section  # noqa: E402
from understanding.view import DialogueView  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MODEL_MESSAGES = (
    "OD-20240618-001 到哪了",
    "北京今天天气怎么样",
    "where is my order OD-20240618-002?",
    "what's the weather in Shanghai?",
    "帮我看看 202506001 发货没",
    "杭州冷不冷",
)
"""Reads both sides can answer with one tool call (no confirmation on either side)."""
PHRASINGS = (
    "OD-20240618-001 到哪了",
    "我的外卖怎么还没到",
    "OD-20240618-001 什么时候送到",
    "帮我查下订单 OD-20240618-001",
    "where is my order OD-20240618-001",
    "has OD-20240618-001 shipped yet",
    "北京今天天气怎么样",
    "上海下雨吗",
    "what's the weather in Beijing",
    "is it cold in Hangzhou today",
)


def reader_latency(reader: Any, messages: list[str]) -> dict[str, Any]:
    """Time ``reader.generate`` on each message once, nothing cached from before."""
    reader.recognizer.forget()
    reader.generate("预热", DialogueView())  # the model's first query maps its weights
    reader.recognizer.forget()
    times = []
    for text in messages:
        started = time.perf_counter()
        reader.generate(text, DialogueView())
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return {
        "messages": len(times),
        "p50_ms": round(statistics.median(times), 1),
        "p95_ms": round(times[int(0.95 * (len(times) - 1))], 1),
        "max_ms": round(times[-1], 1),
    }


def dev_messages() -> list[str]:
    """The labelled set's development rows, then the bench conversations' messages."""
    rows = (ROOT / "eval" / "intents_dev.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(row)["text"] for row in rows if row.strip()]


def _model_agent(model_url: str, database: Any) -> Any:
    """A bare ReAct agent on the model: two read tools over the same seeded data."""
    from langchain_core.tools import tool  # noqa: PLC0415
    from langchain_openai import ChatOpenAI  # noqa: PLC0415
    from langgraph.prebuilt import create_react_agent  # noqa: PLC0415

    @tool
    def order_status(order_id: str) -> str:
        """Look up an order's delivery status by its order number."""
        rows = database.query(
            "SELECT status, eta_minutes FROM orders WHERE order_id = ?", (order_id,)
        )
        return json.dumps(rows[0] if rows else {"error": "not found"})

    @tool
    def weather(city: str) -> str:
        """Current weather of a city."""
        return json.dumps({"city": city, "condition": "sunny", "temp_c": 26})

    model = ChatOpenAI(model="local", base_url=model_url, api_key="none", temperature=0)
    return create_react_agent(model, [order_status, weather])


def against_a_model_agent(ours: Any, model_url: str, database: Any, rounds: int) -> dict[str, Any]:
    """Our default-mode turn and a bare model agent's, same message, interleaved rounds."""
    agent = _model_agent(model_url, database)
    ours_s: list[float] = []
    bare_s: list[float] = []
    for n in range(rounds):
        for i, text in enumerate(MODEL_MESSAGES):
            config = {"configurable": {"thread_id": f"vs-{n}-{i}"}}
            started = time.perf_counter()
            ours.invoke({"messages": [("user", text)]}, config, context=ALICE)
            ours_s.append(time.perf_counter() - started)
            started = time.perf_counter()
            agent.invoke({"messages": [("user", text)]})
            bare_s.append(time.perf_counter() - started)
    return {
        "messages": len(MODEL_MESSAGES),
        "rounds": rounds,
        "ours_default_s": _spread(ours_s),
        "bare_model_agent_s": _spread(bare_s),
        "ratio_median": round(statistics.median(bare_s) / statistics.median(ours_s), 1),
    }


def varied_concurrency(app: Any, threads: int, turns: int) -> dict[str, Any]:
    """``threads`` conversations at once, each turn a different phrasing."""
    return concurrent_section(app, threads, turns, phrasings=PHRASINGS)


def _spread(values: list[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
    }


__all__ = ["against_a_model_agent", "dev_messages", "reader_latency", "varied_concurrency"]
