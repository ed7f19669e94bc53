"""The per-thread run lock on a real Redis: one holder, renewal, release only by the holder."""

from __future__ import annotations

import pytest
from redis import Redis
from typer.testing import CliRunner

from cli.app import app
from graph.run_lock import RunLock
from tests.helpers import set_env

pytestmark = pytest.mark.integration


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def client(redis_url):
    redis = Redis.from_url(redis_url)
    yield redis
    redis.close()


def test_one_holder_at_a_time_and_the_waiter_gets_it_after_release(client):
    clock = FakeTime()
    lock = RunLock(client, ttl_s=30, clock=clock, sleep=clock.sleep)
    held = lock.acquire("t1", wait_s=0)
    assert held is not None
    assert lock.acquire("t1", wait_s=2) is None
    assert clock.now == pytest.approx(2)  # waited exactly the bound, polling with backoff
    assert lock.acquire("t2", wait_s=0) is not None  # other threads are independent
    assert held.release() is True
    assert lock.acquire("t1", wait_s=0) is not None


def test_a_stale_holder_cannot_release_or_renew_someone_elses_lease(client):
    lock = RunLock(client, ttl_s=30)
    stale = lock.acquire("t1", wait_s=0)
    assert stale is not None
    client.delete(lock.key("t1"))  # its lease lapsed (a stalled worker) ...
    fresh = lock.acquire("t1", wait_s=0)  # ... and another run took the thread
    assert fresh is not None
    assert stale.renew() is False and stale.lost
    assert stale.release() is False
    assert client.get(lock.key("t1")) == fresh.token.encode()  # still the new holder's
    assert fresh.release() is True and client.get(lock.key("t1")) is None


def test_renewal_pushes_the_expiry_back(client):
    lock = RunLock(client, ttl_s=20)
    lease = lock.acquire("t1", wait_s=0)
    assert lease is not None
    client.pexpire(lock.key("t1"), 100)  # about to lapse
    assert lease.renew() is True
    assert client.pttl(lock.key("t1")) > 19_000
    assert lock.key("t1") == "reach:runlock:{t1}"  # one hash slot per thread on a Cluster


def test_reach_chat_answers_busy_while_another_worker_holds_the_thread(
    redis_url, client, tmp_path, monkeypatch
):
    set_env(monkeypatch, "REDIS_URL", redis_url)
    set_env(monkeypatch, "REACH_RUN_LOCK_WAIT_S", "0.2")
    set_env(monkeypatch, "REACH_CHECKPOINTER", "sqlite")
    held = RunLock(client, ttl_s=30).acquire("busy-thread", wait_s=0)
    assert held is not None
    try:
        busy = CliRunner().invoke(
            app,
            ["chat", "--thread", "busy-thread", "--data-dir", str(tmp_path)],
            input="OD-20240618-001 到哪了\n/quit\n",
        )
    finally:
        held.release()
    assert busy.exit_code == 0, busy.output
    assert "处理" in busy.output  # the busy answer, not a second run of the thread
    free = CliRunner().invoke(
        app,
        ["chat", "--thread", "busy-thread", "--data-dir", str(tmp_path)],
        input="OD-20240618-001 到哪了\n/quit\n",
    )
    assert free.exit_code == 0, free.output
    assert "配送" in free.output or "送" in free.output
