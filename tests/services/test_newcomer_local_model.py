"""A newcomer's pack on the real local model: the membership desk's fifteen conversations.

The same desk and conversations as ``tests/graph/test_newcomer_pack.py``, served the same
way (``build_graph(scenarios=[pack.scenario])``), with ``REACH_MODEL=local``: the rules and
typed values first, Qwen2.5-Coder-1.5B on llama-server for what they leave unsure. At least
12 of 15 must pass; every run prints what each conversation fell short of. Run with
``make test-model`` or ``uv run pytest -m model tests/services/test_newcomer_local_model.py``.
"""

from __future__ import annotations

import time

import pytest

from tests.graph.membership_desk import CONVERSATIONS, TODAY, Desk, run, serve
from tests.helpers import set_env
from tests.services.test_local_model import server  # noqa: F401 - the session's llama-server

pytestmark = [pytest.mark.model, pytest.mark.slow]

MIN_PASSED = 12


def test_the_desk_on_the_local_model(server, db, monkeypatch):  # noqa: F811
    info, settings = server
    set_env(monkeypatch, "REACH_MODEL", "local")
    set_env(monkeypatch, "REACH_BASE_URL", info.base_url)
    set_env(monkeypatch, "REACH_MODEL_TIMEOUT_S", str(max(settings.model_timeout_s, 120.0)))
    set_env(monkeypatch, "REACH_TODAY", TODAY)
    results: dict[str, list[str]] = {}
    started = time.perf_counter()
    for conversation in CONVERSATIONS:
        desk = Desk()
        results[conversation.name] = run(serve(desk, db), desk, conversation)
    passed = [name for name, problems in results.items() if not problems]
    report = "\n".join(
        f"{'PASS' if not problems else 'FAIL'} {name}" + "".join(f"\n    {p}" for p in problems)
        for name, problems in results.items()
    )
    print(  # noqa: T201 - the run's figure, read by whoever runs the tier
        f"\nnewcomer desk on the local model: {len(passed)}/{len(results)} passed "
        f"in {time.perf_counter() - started:.0f} s\n{report}"
    )
    assert len(passed) >= MIN_PASSED, report
