"""The per-thread run lock on a real Redis: one holder, renewal, release only by the holder."""

from __future__ import annotations

import pytest
from redis import Redis

from graph.run_lock import RunLock

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
