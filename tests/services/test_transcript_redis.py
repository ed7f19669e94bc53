"""The transcript store on a real Redis: append-only, once per key, in order."""

from __future__ import annotations

import pytest
from redis import Redis

from tools.transcript import RedisTranscriptStore, make_entry

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
