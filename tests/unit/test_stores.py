from __future__ import annotations

import pytest

from config.clock import FakeClock
from tools.executor.stores import MemoryIdempotencyStore, MemoryResultCache, SQLiteIdempotencyStore


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture(params=["memory", "sqlite"])
def store(request, tmp_path, clock):
    if request.param == "memory":
        return MemoryIdempotencyStore(retention_s=60, clock=clock)
    return SQLiteIdempotencyStore(tmp_path / "idem.db", retention_s=60, clock=clock)


def test_claim_once_then_see_the_record(store):
    assert store.claim("r1", "f1").acquired
    second = store.claim("r1", "f1")
    assert not second.acquired and second.record.state == "pending"
    store.complete("r1", "succeeded", {"status": "success"})
    assert store.peek("r1").result == {"status": "success"}
    assert store.claim("r1", "f1").record.state == "succeeded"


def test_release_lets_a_request_be_tried_again(store):
    store.claim("r1", "f1")
    store.release("r1")
    assert store.peek("r1") is None
    assert store.claim("r1", "f1").acquired


def test_records_expire_after_the_retention_and_not_before(store, clock):
    store.claim("r1", "f1")
    store.complete("r1", "succeeded", {"status": "success"})
    clock.advance(60)  # boundary: a record is live through its last second
    assert store.peek("r1").state == "succeeded"
    assert not store.claim("r1", "f1").acquired
    clock.advance(0.001)
    assert store.peek("r1") is None
    assert store.claim("r1", "f1").acquired


def test_memory_cache_expires_per_entry(clock):
    cache = MemoryResultCache(clock=clock)
    cache.put("a", {"v": 1}, 0.05)
    cache.put("b", {"v": 2}, 5)
    assert cache.get("a") == {"v": 1}
    clock.advance(0.08)
    assert cache.get("a") is None and cache.get("b") == {"v": 2}
    clock.advance(5)
    assert cache.get("b") is None


def test_the_result_cache_makes_room_by_dropping_the_oldest(clock):
    cache = MemoryResultCache(maxsize=3, clock=clock)
    for name in "abc":
        cache.put(name, {"v": name}, 10)
    cache.put("d", {"v": "d"}, 10)
    assert cache.get("a") is None and cache.get("d") == {"v": "d"}
    cache.put("b", {"v": "b2"}, 0.5)  # put again: newest, with its own TTL
    cache.put("e", {"v": "e"}, 10)  # the oldest put (c) makes room
    assert cache.get("c") is None and cache.get("b") == {"v": "b2"}
    clock.advance(1)
    assert cache.get("b") is None  # expired
    assert [cache.get(k) for k in "de"] == [{"v": "d"}, {"v": "e"}]
