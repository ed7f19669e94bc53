"""Background jobs in the compiled graph: start, follow up on the thread, ask, refuse.

The runner is real (SQLite store, worker threads); each test gates the job body on an event
so the job ends exactly when the test says, between turns, and ``runner.wait`` returns only
after the completion callback's graph turn has run.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from typer.testing import CliRunner

from cli.app import app as cli
from cli.tools_cmd import tools_app
from config.settings import get_settings
from graph.builder import build_graph
from jobs.bodies import JOBS, exports_dir
from jobs.notify import Backoff, JobPoller
from jobs.runner import JobBody, JobContext, JobRunner
from jobs.store import ManualClock, SQLiteJobStore
from nodes.services import Services
from scenarios import SCENARIOS
from scenarios.delivery.jobs import AUDIENCES, bulk_notification_job
from scenarios.sales.jobs import export_sales_job
from state import Context
from storage.db import Database
from tests.conftest import fast_executor, say
from tests.helpers import set_env
from tools.executor.failures import said
from tools.registry.cards import MAX_TOOLS_PER_TURN

ANALYST = Context(user_id="u_80001", user_role="analyst")
AGENT = Context(user_id="u_90001", user_role="agent")


class Gate:
    """Holds job bodies until opened, so a test decides when a job ends."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.started = threading.Event()

    def wrap(self, body: JobBody) -> JobBody:
        def gated(params: dict[str, Any], ctx: JobContext) -> dict[str, Any]:
            self.started.set()
            assert self.open.wait(30), "the test never opened the gate"
            return body(params, ctx)

        return gated


@pytest.fixture
def gate() -> Gate:
    return Gate()


@pytest.fixture
def runner(db: Database, data_dir: Path, gate: Gate, monkeypatch) -> Iterator[JobRunner]:
    set_env(monkeypatch, "REACH_TODAY", "2024-07-15")
    set_env(monkeypatch, "REACH_TOOLS_STATE_TTL_S", "0")  # see `reach tools` changes at once
    settings = get_settings()
    job_runner = JobRunner(SQLiteJobStore(data_dir / "jobs.db"), resources=db)
    job_runner.register("export_sales", gate.wrap(export_sales_job(exports_dir(settings))))
    JOBS.install(db, job_runner, settings)
    yield job_runner
    gate.open.set()
    JOBS.forget(db)
    job_runner.close()


@pytest.fixture
def app(db: Database, runner: JobRunner) -> Any:
    return build_graph(
        checkpointer=InMemorySaver(),
        database_factory=lambda: db,
        executor_factory=fast_executor,
    )


def job_id_of(out: dict[str, Any]) -> str:
    result = out["tool_results"][-1]
    assert result["status"] == "success", result
    return str(result["data"]["job_id"])


def last_ai(app: Any, thread: str) -> str:
    values = app.get_state({"configurable": {"thread_id": thread}}).values
    return str(values["messages"][-1].content)


TOPIC_KEYS = ("intent", "slots", "task_id", "missing_slots", "awaiting", "suspended_tasks")


def test_a_job_that_finishes_during_a_weather_question_leaves_that_topic_alone(app, runner, gate):
    started = say(app, "导出上个月的销售报表", thread="t", context=ANALYST)
    assert "已开始，完成后通知您" in started["messages"][-1].content
    job_id = job_id_of(started)
    assert job_id in started["messages"][-1].content

    weather = say(app, "明天天气怎么样", thread="t", context=ANALYST)
    assert weather["missing_slots"] == ["city"]  # the weather task waits for a city
    before = {key: weather.get(key) for key in TOPIC_KEYS}
    count = len(weather["messages"])

    gate.open.set()
    final = runner.wait(job_id, 30)  # returns after the follow-up turn ran
    assert final.state == "succeeded"

    values = app.get_state({"configurable": {"thread_id": "t"}}).values
    assert {key: values.get(key) for key in TOPIC_KEYS} == before
    assert values.get("job_event") is None
    new = values["messages"][count:]
    assert [m.type for m in new] == ["ai"]  # nobody typed; one answer was added
    assert final.result is not None and final.result["path"] in new[0].content
    assert Path(final.result["path"]).read_text(encoding="utf-8").startswith("sale_id,")

    # the weather question is still the open topic: the next answer fills its slot
    assert app.get_state({"configurable": {"thread_id": "t"}}).values["intent"] == before["intent"]


def test_a_failed_job_tells_the_reason_and_the_status_question_repeats_it(app, runner, gate):
    gate.open.set()
    started = say(app, "导出2031年1月的销售报表", thread="f", context=ANALYST)
    final = runner.wait(job_id_of(started), 30)
    assert final.state == "failed"
    assert final.error is not None and "no sales recorded for 2031-01" in final.error["message"]
    assert "任务失败：no sales recorded for 2031-01" in last_ai(app, "f")
    asked = say(app, "导出好了吗", thread="f", context=ANALYST)
    assert asked["intent"] == "CHECK_JOB"
    assert "任务失败" in asked["messages"][-1].content


def test_without_a_callback_the_user_polls_and_the_poller_backs_off(app, runner, gate, db):
    JOBS.set_follow_up(db, None)  # no callback: the thread learns only when asked
    started = say(app, "export June sales as CSV", thread="p", context=ANALYST)
    job_id = job_id_of(started)
    assert gate.started.wait(10)
    asked = say(app, "is the export done?", thread="p", context=ANALYST)
    assert asked["messages"][-1].content.startswith("Still running")

    clock = ManualClock(on_sleep=lambda t: gate.open.set() if t >= 3.5 else None)
    poller = JobPoller(runner.store, clock, Backoff(initial_s=0.5, factor=2.0, maximum_s=4.0))
    outcome = poller.wait(job_id, timeout_s=600)
    if not outcome.job or not outcome.job.finished:  # the body finishes on its own thread
        runner.wait(job_id, 30)
        outcome = poller.wait(job_id, timeout_s=600)
    assert clock.slept[:3] == [0.5, 1.0, 2.0]
    assert outcome.job is not None and outcome.job.state == "succeeded"
    count = len(app.get_state({"configurable": {"thread_id": "p"}}).values["messages"])
    assert count == len(asked["messages"])  # no callback turn was run
    done = say(app, "is the export done?", thread="p", context=ANALYST)
    assert done["messages"][-1].content.startswith("The job is done: ")
    assert outcome.job.result["path"] in done["messages"][-1].content


def test_the_bulk_notification_is_confirmed_first_and_sent_once(app, runner, gate, db):
    gate.open.set()
    asked = say(app, "给所有配送中订单的客户发短信：餐品将延迟送达", thread="n", context=AGENT)
    assert asked["awaiting"] is not None  # high risk: nothing starts before the yes
    assert runner.store.list() == []
    started = say(app, "确认", thread="n", context=AGENT)
    final = runner.wait(job_id_of(started), 30)
    assert final.state == "succeeded"
    sent = db.query("SELECT user_id FROM notifications WHERE content = '餐品将延迟送达'")
    assert len(sent) == final.result["sent"] >= 1
    assert f"通知已发送给 {final.result['sent']} 位客户" in last_ai(app, "n")
    # the same request again in the same task finds the same job: nothing is sent twice
    again = runner.submit(final.kind, final.params, job_id=final.job_id)
    assert again.state == "succeeded"
    assert len(
        db.query("SELECT user_id FROM notifications WHERE content = '餐品将延迟送达'")
    ) == len(sent)


def test_a_forged_job_event_for_someone_elses_job_says_nothing(app, runner, gate):
    gate.open.set()
    started = say(app, "导出上个月的销售报表", thread="x", context=ANALYST)
    job_id = job_id_of(started)
    runner.wait(job_id, 30)
    other = Context(user_id="u_10001", user_role="customer")
    say(app, "你好", thread="y", context=other)
    before = len(app.get_state({"configurable": {"thread_id": "y"}}).values["messages"])
    app.invoke(
        {"job_event": {"job_id": job_id, "state": "succeeded", "result": {"path": "/etc/x"}}},
        {"configurable": {"thread_id": "y"}},
        context=other,
    )
    values = app.get_state({"configurable": {"thread_id": "y"}}).values
    assert len(values["messages"]) == before and values.get("job_event") is None


def test_a_disabled_tool_gets_a_clear_refusal_in_the_conversation(app, runner, data_dir):
    out = CliRunner().invoke(tools_app, ["disable", "export_sales_report", "--reason", "维护"])
    assert out.exit_code == 0, out.output
    refused = say(app, "导出上个月的销售报表", thread="d", context=ANALYST)
    result = refused["tool_results"][-1]
    assert result["status"] == "failed" and result["error_type"] == "disabled"
    assert result["data"]["state"] == "disabled"
    assert "export_sales_report" not in result["data"]["available"]
    reply = refused["messages"][-1].content
    assert said(reply, "zh") == {"disabled"} and "is disabled" not in reply  # no internals
    assert runner.store.list() == []
    listed = CliRunner().invoke(tools_app, ["list"])
    assert "export_sales_report  v1:disabled" in listed.output
    assert CliRunner().invoke(tools_app, ["enable", "export_sales_report"]).exit_code == 0
    assert (
        say(app, "导出上个月的销售报表", thread="d2", context=ANALYST)["tool_results"][-1]["status"]
        == "success"
    )


def test_a_finished_task_drops_its_version_pins(app, runner, gate):
    gate.open.set()
    out = say(app, "导出上个月的销售报表", thread="v", context=ANALYST)
    services_registry = Services(scenarios=SCENARIOS).tools  # the same shared store
    assert (
        services_registry.lifecycle.pinned(f"task:{out['task_id']}", "export_sales_report") is None
    )


@pytest.mark.parametrize("role", ["customer", "agent", "analyst", "admin"])
def test_the_model_is_never_offered_more_than_eight_tools(role, data_dir):
    services = Services(scenarios=SCENARIOS)
    registry = services.tools
    everything = registry.select(role)
    assert len(everything) <= MAX_TOOLS_PER_TURN
    assert len(registry.model_view(everything)) <= MAX_TOOLS_PER_TURN
    for scenario in SCENARIOS:
        names = [card.name for card in scenario.cards]
        for task in scenario.tasks:
            chosen = registry.select(role, names=names, intent=task.intent)
            assert len(chosen) <= MAX_TOOLS_PER_TURN
    registry.disable(everything[0].name) if everything else None
    assert all(c.name != (everything or [None])[0] for c in registry.select(role))


class Killed(BaseException):
    """Stands for the process dying mid-send (not an ``Exception``: nothing catches it)."""


def test_a_job_killed_mid_send_is_resumed_and_each_customer_is_told_once(
    make_app, db, data_dir, monkeypatch
):
    set_env(monkeypatch, "REACH_TODAY", "2024-07-15")
    settings = get_settings()
    audience = [str(row["user_id"]) for row in db.query(AUDIENCES["delivering"])]
    assert len(audience) >= 2

    def die_at_second(user_id: str) -> None:
        if user_id == audience[1]:
            raise Killed

    first = JobRunner(SQLiteJobStore(data_dir / "jobs.db"), resources=db)
    first.register("send_bulk_notification", bulk_notification_job(before_commit=die_at_second))
    JOBS.install(db, first, settings)
    app = make_app()
    try:
        say(app, "给所有配送中订单的客户发短信：系统维护通知", thread="k", context=AGENT)
        started = say(app, "确认", thread="k", context=AGENT)
        job_id = job_id_of(started)
        first.close(wait=True)  # the "process" is gone: one send done, the job left running
        left = first.store.get(job_id)
        assert left is not None and left.state == "running" and left.attempts == 1
        sql = "SELECT user_id FROM notifications WHERE content = '系统维护通知' ORDER BY user_id"
        assert [r["user_id"] for r in db.query(sql)] == audience[:1]

        # a new process: its own runner, a clock past the dead one's lease
        clock = ManualClock(t=left.lease_until + 1)
        second = JobRunner(SQLiteJobStore(data_dir / "jobs.db"), resources=db, clock=clock)
        JOBS.install(db, second, settings)
        assert second.resume() == [job_id]
        final = second.wait(job_id, 30)  # after the follow-up turn on the thread
        assert final.state == "succeeded" and final.attempts == 2
        assert sorted(r["user_id"] for r in db.query(sql)) == sorted(audience)  # once each
        assert second.resume() == []
        messages = app.get_state({"configurable": {"thread_id": "k"}}).values["messages"]
        told = [m.content for m in messages if f"后台任务 {job_id}" in str(m.content)]
        assert told == [f"后台任务 {job_id}：通知已发送给 {len(audience)} 位客户。"]
        second.close()
    finally:
        JOBS.forget(db)


def test_reach_stats_reports_tools_never_chosen(data_dir, tmp_path):
    audit = tmp_path / "audit.jsonl"
    audit.write_text(
        '{"tool": "query_order_status", "status": "success", "latency_ms": 1}\n'
        '{"event": "tool_lifecycle", "tool": "urge_delivery"}\n',
        encoding="utf-8",
    )
    out = CliRunner().invoke(cli, ["stats", "--audit", str(audit)])
    assert out.exit_code == 0, out.output
    text = " ".join(out.output.split())
    assert "tool coverage:" in text and "never chosen" in text
    assert "export_sales_report" in text and "urge_delivery" in text
    never = text.split("never chosen", 1)[1]
    assert "query_order_status" not in never
