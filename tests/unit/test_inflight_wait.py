"""Waiting for a request id another run holds: its outcome, a take-over, or "still running"."""

from __future__ import annotations

from tools.executor.admission import LocalAdmission
from tools.executor.guards import RateLimiter
from tools.executor.stores import MemoryIdempotencyStore, MemoryResultCache


class FakeTime:
    """A clock that only moves when the code under test sleeps; runs a hook at each sleep."""

    def __init__(self, on_sleep=None) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []
        self.on_sleep = on_sleep

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        if self.on_sleep is not None:
            self.on_sleep(self.now)


def admission(store, clock: FakeTime) -> LocalAdmission:
    return LocalAdmission(
        store, MemoryResultCache(), RateLimiter(), monotonic=clock, sleep=clock.sleep
    )


def test_the_waiter_answers_with_the_holders_outcome():
    store = MemoryIdempotencyStore()
    assert store.claim("r1", "fp").acquired

    def holder_finishes(now: float) -> None:
        if now >= 0.1:
            store.complete("r1", "succeeded", {"status": "success", "data": {"moved": 500}})

    clock = FakeTime(holder_finishes)
    claim = admission(store, clock).await_claim("r1", "fp", timeout_s=5)
    assert not claim.acquired
    assert claim.record is not None and claim.record.state == "succeeded"
    assert claim.record.result == {"status": "success", "data": {"moved": 500}}
    assert clock.now < 1  # it stopped waiting as soon as the outcome was there


def test_a_released_id_is_taken_over_by_the_waiter():
    store = MemoryIdempotencyStore()
    assert store.claim("r1", "fp").acquired
    clock = FakeTime(lambda now: store.release("r1"))
    claim = admission(store, clock).await_claim("r1", "fp", timeout_s=5)
    assert claim.acquired  # the holder's call did not happen: this run makes it
    assert store.peek("r1") is not None and store.peek("r1").state == "pending"


def test_a_holder_that_never_settles_bounds_the_wait_and_stays_pending():
    store = MemoryIdempotencyStore()
    assert store.claim("r1", "fp").acquired
    clock = FakeTime()
    claim = admission(store, clock).await_claim("r1", "fp", timeout_s=3)
    assert not claim.acquired and claim.record is not None
    assert claim.record.state == "pending"
    assert clock.now == 3  # exactly the tool's timeout, no more
    assert max(clock.sleeps) <= 0.2  # polls back off but keep checking
