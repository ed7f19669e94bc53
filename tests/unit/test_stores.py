from __future__ import annotations

import time

import pytest

from tools.stores import MemoryIdempotencyStore, MemoryResultCache, SQLiteIdempotencyStore


@pytest.fixture(params=["memory", "sqlite"])
def store(request, tmp_path):
    if request.param == "memory":
        return MemoryIdempotencyStore(retention_s=60)
    return SQLiteIdempotencyStore(tmp_path / "idem.db", retention_s=60)


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


def test_memory_cache_expires_per_entry():
    cache = MemoryResultCache()
    cache.put("a", {"v": 1}, 0.05)
    cache.put("b", {"v": 2}, 5)
    assert cache.get("a") == {"v": 1}
    time.sleep(0.08)
    assert cache.get("a") is None and cache.get("b") == {"v": 2}
