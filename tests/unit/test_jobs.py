from __future__ import annotations

import csv
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from jobs.bodies import STARTED_MESSAGE, describe_job
from jobs.notify import Backoff, JobPoller, LangGraphRunNotifier
from jobs.runner import JobRunner
from jobs.store import Job, ManualClock, SQLiteJobStore
from scenarios.delivery import SCENARIO
from scenarios.delivery.jobs import (
    bulk_notification_job,
    delivery_job_tools,
    send_bulk_notification,
)
from scenarios.delivery.tools import ORDER_TOOLS
from scenarios.jobs.tools import job_status_card
from scenarios.sales.jobs import export_sales_job, sales_job_tools
from security.permissions import Permissions
from storage.db import Database
from tools.executor.errors import TransientToolError
from tools.executor.pipeline import ActionExecutor, Decision
from tools.registry.cards import ToolRegistry
from tools.registry.context import ToolContext


@pytest.fixture
def store(tmp_path: Path) -> SQLiteJobStore:
    s = SQLiteJobStore(tmp_path / "jobs.db")
    yield s
    s.close()


@pytest.fixture
def runner(store: SQLiteJobStore, db: Database, data_dir: Path) -> JobRunner:
    r = JobRunner(store, resources=db)
    sales_job_tools(r, data_dir)
    delivery_job_tools(r)
    yield r
    r.close()


def test_export_finishes_while_other_work_continues(runner, db, data_dir):
    gate = threading.Event()
    export = export_sales_job(data_dir / "exports")

    def gated(params, ctx):
        gate.wait(10)
        return export(params, ctx)

    runner.register("export_sales", gated)
    done: list[Job] = []
    job = runner.submit("export_sales", {"month": "2024-06"}, owner="u_80001", on_done=done.append)
    assert job.state == "queued"  # returned at once, before the body ran
    # Meanwhile the conversation goes on: an unrelated tool call completes.
    executor = ActionExecutor(_registry_with_orders())
    ctx = ToolContext(user_id="u_10001", user_role="customer", resources=db)
    other = executor.execute(
        {"name": "query_order_status", "parameters": {"order_id": "OD-20240618-001"}}, ctx
    )
    assert other["status"] == "success"
    assert runner.status(job.job_id).state in ("queued", "running")
    assert done == []
    gate.set()
    final = runner.wait(job.job_id, 10)
    assert final.state == "succeeded" and final.attempts == 1
    assert [j.job_id for j in done] == [job.job_id]  # the callback path
    path = Path(final.result["path"])
    with path.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 30 * 5 == final.result["rows"] == final.done == final.total
    assert "cost_cents" not in rows[0]
    expected = db.query_one("SELECT SUM(amount_cents) AS s FROM sales WHERE month = '2024-06'")
    assert sum(int(r["amount_cents"]) for r in rows) == expected["s"]


def _registry_with_orders() -> ToolRegistry:
    registry = ToolRegistry(permissions=Permissions.merged(SCENARIO.grants))
    for card in ORDER_TOOLS:
        registry.register(card)
    return registry


def test_a_job_that_fails_keeps_a_structured_reason(runner):
    seen: list[Job] = []
    job = runner.submit("export_sales", {"month": "2031-01"}, on_done=seen.append)
    final = runner.wait(job.job_id, 10)
    assert final.state == "failed" and final.result is None
    assert final.error["error_type"] == "user_fixable"
    assert "2031-01" in final.error["message"]
    assert seen and seen[0].state == "failed"


def test_transient_failures_are_retried_then_give_up(store, db):
    runner = JobRunner(store, resources=db, max_attempts=3)
    calls = []

    def flaky(params, ctx):
        calls.append(ctx.attempt)
        if len(calls) < params["fail_times"] + 1:
            raise TransientToolError("backend busy")
        return {"ok": True}

    runner.register("flaky", flaky)
    ok = runner.wait(runner.submit("flaky", {"fail_times": 2}).job_id, 10)
    assert ok.state == "succeeded" and ok.attempts == 3
    calls.clear()
    bad = runner.wait(runner.submit("flaky", {"fail_times": 5}).job_id, 10)
    assert bad.state == "failed" and bad.attempts == 3 and len(calls) == 3
    assert bad.error["error_type"] == "system"
    runner.close()


def test_a_bug_in_a_body_fails_the_job_not_the_runner(store):
    runner = JobRunner(store)
    runner.register("broken", lambda params, ctx: 1 / 0)
    runner.register("fine", lambda params, ctx: {"ok": 1})
    assert (
        runner.wait(runner.submit("broken", {}).job_id, 10)
        .error["message"]
        .startswith("ZeroDivisionError")
    )
    assert runner.wait(runner.submit("fine", {}).job_id, 10).state == "succeeded"
    runner.close()


def test_resubmitting_the_same_id_returns_the_existing_job(runner):
    first = runner.submit("export_sales", {"month": "2024-05"}, job_id="job-0000000000000001")
    runner.wait(first.job_id, 10)
    again = runner.submit("export_sales", {"month": "2024-05"}, job_id="job-0000000000000001")
    assert again.state == "succeeded" and again.attempts == 1


def test_resume_takes_over_only_after_the_dead_runners_lease(store, db):
    clock = ManualClock(t=1000.0)
    # A runner that "died" mid-job: its record says running, lease until t=1030.
    store.create(
        Job(
            job_id="job-00000000000000aa",
            kind="send_bulk_notification",
            params={"user_ids": ["u_10001", "u_10002"], "content": "hi", "channel": "sms"},
            state="running",
            attempts=1,
            lease_owner="dead-runner",
            lease_until=1030.0,
            created_at=990.0,
        )
    )
    runner = JobRunner(store, resources=db, clock=clock, lease_s=30)
    runner.register("send_bulk_notification", bulk_notification_job())
    assert runner.resume() == []
    clock.advance(31)
    assert runner.resume() == ["job-00000000000000aa"]
    final = runner.wait("job-00000000000000aa", 10)
    assert final.state == "succeeded" and final.attempts == 2
    assert final.result["sent"] == 2
    runner.close()


def test_bulk_notification_sends_each_message_once_across_attempts(db):
    users = ["u_10001", "u_10002", "u_90001", "u_99999", "u_10001"]
    first = send_bulk_notification(db, job_id="j1", user_ids=users, content="延误", channel="sms")
    assert first["recipients"] == 4 and first["sent"] == 2
    assert sorted(first["skipped"]) == ["u_90001", "u_99999"]  # staff and unknown ids
    again = send_bulk_notification(db, job_id="j1", user_ids=users, content="延误", channel="sms")
    assert again["sent_this_attempt"] == 0 and again["already_done"] == 4 and again["sent"] == 2
    rows = db.query("SELECT user_id FROM notifications WHERE content = '延误' ORDER BY user_id")
    assert [r["user_id"] for r in rows] == ["u_10001", "u_10002"]


def test_a_crash_inside_a_send_leaves_no_trace_of_it(db):
    class Crash(Exception):
        pass

    def crash_on(user_id):
        if user_id == "u_10002":
            raise Crash

    with pytest.raises(Crash):
        send_bulk_notification(
            db,
            job_id="j2",
            user_ids=["u_10001", "u_10002"],
            content="x",
            channel="sms",
            before_commit=crash_on,
        )
    sent = "SELECT user_id FROM notifications WHERE content = 'x' ORDER BY user_id"
    assert [r["user_id"] for r in db.query(sent)] == ["u_10001"]
    result = send_bulk_notification(
        db, job_id="j2", user_ids=["u_10001", "u_10002"], content="x", channel="sms"
    )
    assert result["sent"] == 2 and result["sent_this_attempt"] == 1
    assert [r["user_id"] for r in db.query(sent)] == ["u_10001", "u_10002"]


def test_polling_backs_off_exponentially_on_the_injected_clock(store):
    clock = ManualClock(t=0.0)
    store.create(Job(job_id="job-p", kind="k", params={}, state="running"))

    def finish_at_seven(now: float) -> None:
        if now >= 7:
            store.mutate("job-p", lambda job: replace(job, state="succeeded", result={"n": 1}))

    clock.on_sleep = finish_at_seven
    poller = JobPoller(store, clock, Backoff(initial_s=0.5, factor=2, maximum_s=30))
    outcome = poller.wait("job-p", timeout_s=60)
    assert clock.slept == [0.5, 1.0, 2.0, 4.0] == outcome.intervals
    assert clock.t == 7.5 and outcome.polls == 5 and not outcome.timed_out
    assert outcome.job.state == "succeeded"


def test_polling_caps_intervals_and_stops_at_the_deadline(store):
    clock = ManualClock(t=100.0)
    store.create(Job(job_id="job-q", kind="k", params={}, state="running"))
    poller = JobPoller(store, clock, Backoff(initial_s=1, factor=3, maximum_s=5))
    outcome = poller.wait("job-q", timeout_s=20)
    assert outcome.timed_out and outcome.job.state == "running"
    assert clock.slept == [1, 3, 5, 5, 5, 1]  # capped at 5, the last one cut to the deadline
    assert clock.t == 120.0
    assert poller.next_poll_at(100.0, 3) == 100.0 + 1 + 3 + 5


class FakeRuns:
    def __init__(self) -> None:
        self.created: list[tuple] = []

    def create(self, thread_id, assistant_id, **kwargs):
        self.created.append((thread_id, assistant_id, kwargs))
        return {"run_id": f"run-{len(self.created)}"}


def test_langgraph_notifier_starts_a_queued_run_on_the_jobs_thread(store, db, data_dir):
    runs = FakeRuns()
    runner = JobRunner(
        store, resources=db, notifiers=(LangGraphRunNotifier(runs=runs, assistant_id="agent"),)
    )
    sales_job_tools(runner, data_dir)
    with_thread = runner.submit("export_sales", {"month": "2024-07"}, thread_id="thread-9")
    without = runner.submit("export_sales", {"month": "2024-05"})
    runner.wait(with_thread.job_id, 10)
    runner.wait(without.job_id, 10)
    assert len(runs.created) == 1
    thread_id, assistant, kwargs = runs.created[0]
    assert (thread_id, assistant) == ("thread-9", "agent")
    assert kwargs["multitask_strategy"] == "enqueue"
    event = kwargs["input"]["job_event"]
    assert event["state"] == "succeeded" and event["result"]["month"] == "2024-07"
    assert event["job_id"] == with_thread.job_id == kwargs["metadata"]["job_id"]
    runner.close()


def test_job_tools_start_at_once_and_report_to_their_owner_only(runner, db, data_dir):
    registry = ToolRegistry()
    cards = [*sales_job_tools(runner, data_dir), *delivery_job_tools(runner)]
    for card in [*cards, job_status_card(runner)]:
        registry.register(card)
    executor = ActionExecutor(registry)
    analyst = ToolContext(
        user_id="u_80001", user_role="admin", session_id="s1", task_id="t1", resources=db
    )
    started = executor.execute(
        {"name": "export_sales_report", "parameters": {"month": "2024-06"}}, analyst
    )
    assert started["status"] == "success", started
    assert started["data"]["message"] == STARTED_MESSAGE
    job_id = started["data"]["job_id"]
    runner.wait(job_id, 10)
    status = executor.execute(
        {"name": "query_job_status", "parameters": {"job_id": job_id}}, analyst
    )
    assert status["data"]["state"] == "succeeded"
    assert status["data"]["result"]["path"].endswith(".csv")
    other = ToolContext(user_id="u_10001", user_role="customer", resources=db)
    denied = executor.execute({"name": "query_job_status", "parameters": {"job_id": job_id}}, other)
    assert denied["status"] != "success" and "path" not in str(denied)
    bulk = executor.execute(
        {
            "name": "send_bulk_notification",
            "parameters": {"user_ids": ["u_10001"], "content": "停电通知"},
        },
        analyst,
    )
    assert bulk["status"] != "success"  # high risk: waits for the user's confirmation
    assert db.query("SELECT * FROM notifications WHERE content = '停电通知'") == []
    approved = executor.execute(
        {
            "name": "send_bulk_notification",
            "parameters": {"user_ids": ["u_10001"], "content": "停电通知"},
        },
        analyst,
        decision=Decision(kind="approve"),
    )
    assert approved["status"] == "success", approved
    runner.wait(approved["data"]["job_id"], 10)
    assert len(db.query("SELECT * FROM notifications WHERE content = '停电通知'")) == 1


def test_the_user_is_told_where_a_job_stands(runner):
    done = runner.wait(runner.submit("export_sales", {"month": "2024-06"}).job_id, 10)
    assert describe_job(done).startswith("2024-06 的销售数据已导出（150 行）：")
    assert done.result["path"] in describe_job(done)
    failed = runner.wait(runner.submit("export_sales", {"month": "2031-01"}).job_id, 10)
    assert describe_job(failed) == "任务失败：no sales recorded for 2031-01"
    running = replace(done, state="running", done=40, total=150)
    assert describe_job(running) == "还在处理中（40/150），完成后通知您。"


def test_a_sweeper_takes_over_a_job_whose_runner_died(store, db):
    clock = ManualClock(t=10.0)
    store.create(
        Job(
            job_id="job-00000000000000bb",
            kind="send_bulk_notification",
            params={"user_ids": ["u_10001"], "content": "sweep", "channel": "sms"},
            state="running",
            attempts=1,
            lease_owner="dead-runner",
            lease_until=5.0,  # already expired on this clock
        )
    )
    runner = JobRunner(store, resources=db, clock=clock, lease_s=30)
    runner.register("send_bulk_notification", bulk_notification_job())
    stop = runner.start_sweeper(interval_s=0.01)
    try:
        final = runner.wait("job-00000000000000bb", 10)
    finally:
        stop.set()
        runner.close()
    assert final.state == "succeeded" and final.attempts == 2
    assert len(db.query("SELECT * FROM notifications WHERE content = 'sweep'")) == 1


def test_a_sweep_racing_a_submit_runs_the_body_once(store, db):
    gate = threading.Event()
    runs = []

    def body(params, ctx):
        runs.append(ctx.attempt)
        gate.wait(10)
        return {"ok": True}

    runner = JobRunner(store, resources=db)
    runner.register("slow", body)
    job = runner.submit("slow", {})
    runner.resume()  # sees the job queued or running under its own fresh lease
    runner.resume()
    gate.set()
    final = runner.wait(job.job_id, 10)
    runner.close()
    assert final.state == "succeeded" and runs == [1] and final.attempts == 1
