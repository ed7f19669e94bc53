"""The Redis variants of the job store, the lifecycle store and the plan cache."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import pytest
from redis import Redis

from config.settings import Settings
from jobs.runner import JobRunner
from jobs.store import Job, ManualClock, RedisJobStore, job_store
from planning.plans import PlanCache, plan_cache
from scenarios.delivery.jobs import bulk_notification_job, delivery_job_tools
from scenarios.sales.jobs import sales_job_tools
from storage.db import Database
from storage.kv import RedisKV
from tests.helpers import default_registry
from tools.registry.lifecycle import ToolLifecycle, lifecycle_store

pytestmark = pytest.mark.integration


@pytest.fixture
def client(redis_url: str) -> Redis:
    c = Redis.from_url(redis_url)
    yield c
    c.close()


def test_settings_pick_redis_when_configured(redis_url: str, tmp_path: Path) -> None:
    settings = Settings(REDIS_URL=redis_url, REACH_DATA_DIR=tmp_path)
    assert isinstance(job_store(settings), RedisJobStore)
    assert isinstance(lifecycle_store(settings), RedisKV)
    assert isinstance(plan_cache(settings).store, RedisKV)
    forced = Settings(REDIS_URL=redis_url, REACH_DATA_DIR=tmp_path, REACH_JOBS_STORE="sqlite")
    assert not isinstance(job_store(forced), RedisJobStore)


def test_redis_job_runs_and_a_dead_runners_job_is_resumed(client: Redis, db: Database, data_dir):
    store = RedisJobStore(client)
    runner = JobRunner(store, resources=db)
    sales_job_tools(runner, data_dir)
    delivery_job_tools(runner)
    seen: list[Job] = []
    job = runner.submit("export_sales", {"month": "2024-06"}, on_done=seen.append)
    final = runner.wait(job.job_id, 20)
    assert final.state == "succeeded" and Path(final.result["path"]).exists()
    assert seen[0].job_id == job.job_id
    failed = runner.wait(runner.submit("export_sales", {"month": "2030-02"}).job_id, 20)
    assert failed.state == "failed" and failed.error["error_type"] == "user_fixable"
    assert [j.job_id for j in store.list()] == [job.job_id, failed.job_id]
    runner.close()

    clock = ManualClock(t=5000.0)
    store.create(
        Job(
            job_id="job-redis-left",
            kind="send_bulk_notification",
            params={"user_ids": ["u_10001", "u_10002"], "content": "r", "channel": "sms"},
            state="running",
            attempts=1,
            lease_owner="dead",
            lease_until=5010.0,
        )
    )
    second = JobRunner(store, resources=db, clock=clock)
    second.register("send_bulk_notification", bulk_notification_job())
    assert second.resume() == []
    clock.advance(11)
    assert second.resume() == ["job-redis-left"]
    resumed = second.wait("job-redis-left", 20)
    assert resumed.state == "succeeded" and resumed.attempts == 2
    assert resumed.result["sent"] == 2
    second.close()


def test_redis_item_records_and_concurrent_mutations(client: Redis) -> None:
    store = RedisJobStore(client)
    store.create(Job(job_id="job-x", kind="k", params={}))
    assert store.mark_item("job-x", "u_1") is True
    assert store.mark_item("job-x", "u_1") is False
    assert store.items("job-x") == {"u_1"}
    again, created = store.create(Job(job_id="job-x", kind="other", params={}))
    assert not created and again.kind == "k"

    def bump() -> None:
        for _ in range(50):
            store.mutate("job-x", lambda job: replace(job, done=job.done + 1))

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.get("job-x").done == 200  # WATCH/MULTI lost no update


def test_redis_lifecycle_is_shared_by_workers_and_plans_persist(client: Redis) -> None:
    ops, worker = default_registry(), default_registry()
    ops.lifecycle = ToolLifecycle(RedisKV(client, "tools"))
    worker.lifecycle = ToolLifecycle(RedisKV(client, "tools"))
    ops.disable("urge_delivery")
    assert worker.get("urge_delivery") is None
    ops.enable("urge_delivery")
    assert worker.get("urge_delivery") is not None
    ops.lifecycle.pin("task:t1", "urge_delivery", "1")
    assert worker.lifecycle.pinned("task:t1", "urge_delivery") == "1"

    ok = {"status": "success", "data": {}}
    seq = [
        {"name": "query_order_status", "parameters": {"order_id": "202506001"}, "result": ok},
        {"name": "urge_delivery", "parameters": {"order_id": "202506001"}, "result": ok},
    ]
    slots = {"order_id": "202506001"}
    PlanCache(RedisKV(client, "plans")).record("delivery", "URGE", slots, seq)
    found = PlanCache(RedisKV(client, "plans")).lookup("delivery", "URGE", {"order_id": "x"})
    assert found is not None and "202506001" not in str(found)


def test_redis_pin_operations_take_one_round_trip_each(client: Redis) -> None:
    store = RedisKV(client, "pins-test")
    assert store.put_if_absent("pin:a", {"version": "1"}) == {"version": "1"}
    assert store.put_if_absent("pin:a", {"version": "2"}) == {"version": "1"}
    store.put("pin:b", {"version": "1"})
    assert store.delete_many(["pin:a", "pin:b", "pin:c"]) == 2
    assert store.items("pin:") == {}
