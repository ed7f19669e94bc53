"""The transcript store on a real Redis: append-only, once per key, in order."""

from __future__ import annotations

import pytest
from redis import Redis

from storage.transcript import RedisTranscriptStore, make_entry

pytestmark = pytest.mark.integration


def test_redis_transcript_appends_once_in_order(redis_url):
    store = RedisTranscriptStore(Redis.from_url(redis_url))
    first = make_entry("message", {"data": {"id": "m1", "content": "你好"}, "type": "human"})
    second = make_entry("protocol", {"role": "user", "content": "你好"})
    assert store.append("t", [first, second]) == 2
    assert store.append("t", [second, first]) == 0  # a re-run node writes nothing new
    assert store.read("t") == [first, second]
    assert store.read("t", "protocol") == [second]
    assert store.read("other") == []


def test_redis_transcript_appends_after_the_script_cache_is_flushed_and_a_socket_dies(redis_url):
    # appends take a kept connection; a missing script or a dead socket takes redis-py's path
    client = Redis.from_url(redis_url)
    store = RedisTranscriptStore(client)
    entries = [make_entry("protocol", {"role": "user", "content": f"第{i}条"}) for i in range(8)]
    assert store.append("flush", entries[:2]) == 2
    client.script_flush()
    assert store.append("flush", entries[2:4]) == 2
    assert store.append("flush", entries[4:6]) == 2
    kept = list(store._direct._idle)  # noqa: SLF001 - the short path's own sockets
    assert kept
    for connection in kept:
        connection.disconnect()
    assert store.append("flush", entries[6:]) == 2
    assert store.read("flush") == entries
