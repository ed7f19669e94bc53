"""Understanding's cost a turn: model calls, prompt tokens, and the local model's latency.

Common conversations (a status question, a refund and its yes, a correction at a
confirmation, two requests, two cities, an answer to a slot question, a greeting, the
transfer chain) run three ways on the same graph:

- ``rules``: no model; the count of model requests must be 0;
- ``model``: every turn may ask the model; the endpoint is a loopback OpenAI-compatible
  server that answers each request with the rules' own reading of the message (so the
  conversation takes the path the rules would), counted per turn;
- ``mixed``: the model only where the rules are unsure.

Prompt tokens per request are what the endpoint reports in ``usage`` (the loopback server
estimates 4 characters a token; a real server counts). With ``--model-url`` pointing at a
running local model (``reach model serve``), the same conversations run on it and each
turn's latency is timed: p50 / p95.

    uv run python bench/understanding.py [--model-url http://127.0.0.1:8181/v1]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.types import Command  # noqa: E402

from config.settings import Settings  # noqa: E402
from graph.builder import build_graph  # noqa: E402
from scenarios import SCENARIOS  # noqa: E402
from scenarios.weather.demo_server import start_demo_weather_server  # noqa: E402
from state import Context  # noqa: E402
from tests.fakes.openai_server import FakeOpenAIServer, Scripted  # noqa: E402
from tests.helpers import open_database  # noqa: E402

CONVERSATIONS: dict[str, list[str]] = {
    "status question": ["OD-20240618-001 到哪了"],
    "refund and its yes": ["我要退款 OD-20240618-002", "确认"],
    "a slot question answered": ["我要退款", "OD-20240618-002", "确认"],
    "correction at a confirmation": ["给ACC-2001转账，密码123456", "500", "不对，改成50", "确认"],
    "two requests": ["查一下 OD-20240618-001 到哪了，再帮我看看北京天气"],
    "two cities": ["北京和上海今天天气怎么样"],
    "greeting": ["你好"],
    "english question": ["what's the weather in Shanghai?"],
    "appointment": ["帮我预约6月20号的内科", "确认"],
}
ALICE = Context(user_id="u_10001", user_role="customer")


def echo_rules(body: dict[str, Any]) -> Scripted | None:
    """Answer a command request with what the rules read (the path the rules would take)."""
    schema = (body.get("response_format") or {}).get("json_schema") or {}
    if schema.get("name") != "commands":
        return Scripted(status=500, content="not an understanding request")
    text = str(body["messages"][-1]["content"]).rsplit("Message: ", 1)[-1]
    return Scripted(content=json.dumps({"commands": _rules_reading(text)}, ensure_ascii=False))


def _rules_reading(text: str) -> list[dict[str, Any]]:
    from datetime import date  # noqa: PLC0415

    from nodes.services import Services  # noqa: PLC0415
    from understanding.view import DialogueView  # noqa: PLC0415

    today = date(2024, 6, 18)
    services = Services(scenarios=SCENARIOS)
    services.settings = services.settings.model_copy(update={"today": today})
    rules = services.rule_commands
    out = []
    for command in rules.generate(text, DialogueView()).commands:
        intent = getattr(command, "intent", None) or "none"
        slots = getattr(command, "slots", {}) or {}
        pairs = [{"name": k, "value": str(v)} for k, v in slots.items() if v is not None]
        out.append({"kind": command.kind, "task": intent, "slots": pairs})
    return out or [{"kind": "cannot_tell", "task": "none", "slots": []}]


@contextmanager
def environment(**values: str) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run(mode: str, base_url: str | None, requests: list[dict[str, Any]]) -> dict[str, Any]:
    """Run every conversation in ``mode``; count requests and time turns."""
    work = Path(tempfile.mkdtemp(prefix="reach-bench-und-"))
    weather, weather_url = start_demo_weather_server()
    env = {
        "REACH_DATA_DIR": str(work),
        "REACH_TODAY": "2024-06-18",
        "REACH_WEATHER_URL": weather_url,
    }
    if mode != "rules":
        env.update(REACH_MODEL="mixed:bench" if mode == "mixed" else "bench")
        env.update(REACH_BASE_URL=str(base_url), REACH_MODEL_MAX_RETRIES="0")
        env.update(REACH_MODEL_TIMEOUT_S="60")
    calls_per_turn: list[int] = []
    latencies: list[float] = []
    per_conversation: dict[str, list[int]] = {}
    try:
        with environment(**env):
            from config.settings import get_settings  # noqa: PLC0415

            get_settings.cache_clear()
            db = open_database(work / "business.db")
            app = build_graph(
                checkpointer=InMemorySaver(), settings=Settings(), database_factory=lambda: db
            )
            for name, turns in CONVERSATIONS.items():
                config = {"configurable": {"thread_id": f"{mode}-{name}"}}
                counts = []
                for text in turns:
                    before = len(requests)
                    started = time.perf_counter()
                    if app.get_state(config).interrupts and text in ("确认",):
                        app.invoke(Command(resume=text), config, context=ALICE)
                    else:
                        app.invoke({"messages": [("user", text)]}, config, context=ALICE)
                    latencies.append(time.perf_counter() - started)
                    counts.append(len(requests) - before)
                per_conversation[name] = counts
                calls_per_turn.extend(counts)
            get_settings.cache_clear()
    finally:
        weather.shutdown()
    return {
        "turns": len(calls_per_turn),
        "model_calls_per_turn": {
            "max": max(calls_per_turn),
            "mean": round(statistics.fmean(calls_per_turn), 3),
        },
        "per_conversation": per_conversation,
        "latency_s": {
            "p50": round(statistics.median(latencies), 3),
            "p95": round(sorted(latencies)[int(0.95 * (len(latencies) - 1))], 3),
        },
    }


def prompt_tokens(reported: list[int]) -> dict[str, Any]:
    """Median and largest prompt, in tokens estimated at 4 characters each."""
    if not reported:
        return {}
    return {
        "requests": len(reported),
        "median": int(statistics.median(reported)),
        "max": max(reported),
        "source": "characters / 4 (the prompt as sent)",
    }


def understanding_section(model_url: str | None = None) -> dict[str, Any]:
    """Model calls per turn and prompt tokens in every mode; the local model's latency."""
    results: dict[str, Any] = {"load_avg_at_start": [round(x, 2) for x in os.getloadavg()]}
    server = FakeOpenAIServer(model_ids=("bench",)).start()
    seen: list[dict[str, Any]] = []

    def matcher(body: dict[str, Any]) -> Scripted | None:
        seen.append(body)
        return echo_rules(body)

    server.match(matcher)
    try:
        for mode in ("rules", "model", "mixed"):
            seen.clear()
            results[mode] = run(mode, server.base_url, seen)
            sizes = [
                sum(len(str(m.get("content") or "")) for m in body["messages"]) // 4
                for body in seen
            ]
            results[mode]["prompt_tokens"] = prompt_tokens(sizes)
    finally:
        server.stop()
    if model_url:  # latency on the real model (its requests are not counted here)
        local = run("model", model_url, [])
        results["local"] = {"turns": local["turns"], "latency_s": local["latency_s"]}
    else:
        results["local"] = {"not measured": "no --model-url (reach model serve) given"}
    results["load_avg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model-url", default=None, help="a running local model's /v1 URL")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    results = understanding_section(args.model_url)
    print(json.dumps(results, indent=2, ensure_ascii=False))
    if args.out:
        args.out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
