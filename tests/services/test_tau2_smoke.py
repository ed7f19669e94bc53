"""τ²-bench smoke run with the real local model: three retail tasks through Agent-Reach.

τ²'s own orchestrator, user simulator (the same local model) and evaluator run the compiled
graph; what is checked is that it runs end to end on the default 4,096-token server (τ²'s
own agent's prompt does not fit there: ~4.8K tokens), that no write reached τ² without the
simulated user's yes, and that a second run resumes from the results file instead of
running again. Scores are not asserted: a 1.5B model on both sides passes few of τ²'s tasks
(``bench/README.md`` has the measured figures). ``make test-model`` syncs the ``tau2``
group; without it the test is skipped, saying so.
"""

from __future__ import annotations

import json
import time

import pytest

from cli import model as local
from tests.services.test_local_model import server

pytestmark = [pytest.mark.model, pytest.mark.slow]
pytest.importorskip("tau2", reason="τ²-bench is the optional group: uv sync --group tau2")

from bench.tau2.runner import Endpoint, RunPlan, run  # noqa: E402 - after the skip

__all__ = ["server"]
TASKS = 3
MAX_STEPS = 8
"""Messages per simulation: enough for a few turns each way, short enough for CI."""


def test_three_retail_tasks_run_through_tau2_with_agent_reach(server, tmp_path):
    info, settings = server
    endpoint = Endpoint(local.LOCAL_MODEL_NAME, info.base_url)
    plan = RunPlan(
        domain="retail",
        split="test",
        tasks=TASKS,
        trials=1,
        agent=endpoint,
        user=endpoint,
        out_dir=tmp_path,
        agents=("agent_reach",),
        max_steps=MAX_STEPS,
    )
    lines: list[str] = []
    summary = run(plan, say=lines.append)
    row = summary["agents"]["agent_reach"]
    assert row["simulations"] == TASKS, lines
    assert any("[3/3]" in line for line in lines)  # progress on the terminal
    assert row["unconfirmed_writes"] == 0
    figures = json.loads((tmp_path / "retail-test-agent_reach.figures.json").read_text())
    assert all(f["termination"] != "agent_error" for f in figures), figures
    assert all(f["agent_model_calls"] >= 1 for f in figures)
    # the graph's prompts fit the server it was given (4,096 tokens by default)
    assert max(f["extra"]["largest_prompt_tokens"] for f in figures) <= settings.local_model_ctx
    results = json.loads((tmp_path / "retail-test-agent_reach.json").read_text())
    assert len(results["simulations"]) == TASKS
    assert all(s["messages"] for s in results["simulations"])
    started = time.monotonic()
    again = run(plan, say=lines.append)  # resumed: nothing left to run
    assert again["agents"]["agent_reach"]["simulations"] == TASKS
    assert time.monotonic() - started < 60
