"""Every tool of every shipped scenario × every failure class, told truthfully.

The rows and their checks live in ``tests/failure_matrix.py`` (the attack corpus runs the
same rows); each row is one conversation on the compiled graph, in memory, on its own
seeded database. A new tool, or a new fault, adds its rows here without a line changed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from typer.testing import CliRunner

from cli.tools_cmd import tools_app
from eval.backends import start_weather_server
from graph.builder import build_graph
from state import Context
from tests.conftest import fast_executor, say
from tests.failure_matrix import CARDS, FAULTS, checked_rows, missing_routes, rows, run_row
from tests.failure_matrix.faults import FAULT_BY_NAME
from tests.fakes.openai_server import Scripted
from tests.helpers import default_registry, set_env
from tests.properties import QUICK
from tools.executor.failures import MEANINGS, said


@pytest.fixture(scope="module")
def weather_url() -> Iterator[str]:
    server, url = start_weather_server()  # a free loopback port of its own
    yield url
    server.shutdown()


def test_every_tool_of_every_scenario_has_a_conversation_that_reaches_it():
    assert missing_routes() == [], "add an eval case (or an EXTRA_ROUTES entry) that calls it"


def test_make_checks_rows_still_reach_every_tool_and_every_class_in_both_languages():
    def proven(chosen):
        return {(FAULT_BY_NAME[n].expected(CARDS[t]), lang) for t, n, lang in chosen}

    assert {t for t, _, _ in checked_rows()} == set(CARDS)
    assert proven(checked_rows()) == proven(rows())
    assert len(checked_rows()) < len(rows())


def test_the_matrix_proves_every_class_in_both_languages():
    proven = {
        (fault.expected(CARDS[tool]), language)
        for tool, name, language in rows()
        for fault in FAULTS
        if fault.name == name
    }
    # a pause for a yes is not an outcome; ``not_requested`` comes from understanding's
    # commands, not a backend seam (tests/graph/test_model_in_the_loop.py and
    # test_plan_cache.py prove it)
    for outcome in set(MEANINGS) - {"awaiting", "not_requested"}:
        assert (outcome, "zh") in proven, outcome
        assert (outcome, "en") in proven, outcome


# make check runs the rows that prove each tool and each (class, language), and a third of the
# rest (tests/properties.py's QUICK); make test and .ci/run run every row
@pytest.mark.parametrize(
    ("tool", "fault", "language"), checked_rows() if QUICK else rows(), ids=lambda v: str(v)
)
def test_a_failure_is_told_truthfully_and_the_next_turn_works(
    tool: str, fault: str, language: str, tmp_path: Path, weather_url: str
) -> None:
    verdict = run_row(tool, fault, tmp_path, weather_url, language)
    assert verdict.problems == [], (verdict.reply, verdict.next_reply)


OWNED = [name for name, card in CARDS.items() if card.owner_of is not None]


@pytest.mark.parametrize("tool", OWNED)
def test_someone_elses_record_reads_exactly_like_a_missing_one(
    tool: str, tmp_path: Path, weather_url: str
) -> None:
    theirs = run_row(tool, "not_yours", tmp_path / "theirs", weather_url)
    missing = run_row(tool, "not_found", tmp_path / "missing", weather_url)
    assert theirs.reply == missing.reply
    assert said(theirs.reply) == said(missing.reply) == {"not_found"}


@pytest.mark.parametrize(
    ("tool", "text"),
    [
        ("query_order_status", "OD-20240618-001 到哪了"),
        ("request_refund", "我要退款 OD-20240618-002"),
        ("query_weather", "北京今天天气怎么样"),
    ],
)
def test_a_tool_switched_off_with_reach_tools_is_not_a_missing_record(
    tool, text, db, data_dir, monkeypatch, weather_url
):
    """Issue 28: a switched-off tool answered "没有找到订单" and "未找到该城市：北京"."""
    set_env(monkeypatch, "REACH_TOOLS_STATE_TTL_S", "0")
    set_env(monkeypatch, "REACH_WEATHER_URL", weather_url)
    assert CliRunner().invoke(tools_app, ["disable", tool]).exit_code == 0
    app = build_graph(
        checkpointer=InMemorySaver(), database_factory=lambda: db, executor_factory=fast_executor
    )
    reply = say(app, text)["messages"][-1].content
    assert said(reply, "zh") == {"disabled"}, reply
    assert "没有找到" not in reply and "未找到" not in reply
    assert db.query("SELECT COUNT(*) AS n FROM refunds")[0]["n"] == 0
    assert CliRunner().invoke(tools_app, ["enable", tool]).exit_code == 0
    again = say(app, text, thread="t2", context=Context(user_id="u_10001", user_role="customer"))
    assert not said(again["messages"][-1].content, "zh") - {"awaiting"}


def test_a_model_phrasing_that_changes_the_failure_named_is_not_said(
    make_app, db, monkeypatch, openai_server
):
    """With a reply model, "这项功能已停用" must not come out as "未找到该城市"."""
    set_env(monkeypatch, "REACH_REPLY_MODEL", "fake-model")
    set_env(monkeypatch, "REACH_BASE_URL", openai_server.base_url)
    set_env(monkeypatch, "REACH_MODEL_MAX_RETRIES", "0")
    registry = default_registry()
    registry.disable("query_weather")  # answered by the reply node: no hand-off for weather
    openai_server.push(Scripted(content="抱歉，未找到该城市：北京，请确认城市名称。"))
    out = say(make_app(registry=registry), "北京今天天气怎么样")
    reply = out["messages"][-1].content
    assert said(reply, "zh") == {"disabled"} and "未找到" not in reply
    assert openai_server.requests  # the model was asked, and its phrasing refused
    note = next(p for p in reversed(out["protocol"]) if p.get("role") == "assistant")
    assert "another failure" in str(note.get("error"))
