"""The audit and trace records in a real Redis stream: capped, and read back per thread."""

from __future__ import annotations

import pytest
from langgraph.types import Command
from redis import Redis

from observability.audit import AuditLog, RedisStreamSink, read_stream
from tests.conftest import ALICE, fast_executor

pytestmark = pytest.mark.integration

VALID_ID = "110101199001011237"


def test_stream_is_capped_and_read_back_per_thread(redis_url):
    client = Redis.from_url(redis_url)
    audit = AuditLog(sinks=[RedisStreamSink(client, "test:audit", maxlen=1000)])
    for index in range(3000):
        audit.write({"session_id": f"s{index % 3}", "tool": "t", "status": "success",
                     "attempts": 1, "latency_ms": 1.0, "arguments": {"id": VALID_ID}})  # fmt: skip
    audit.flush()
    length = client.xlen("test:audit")
    assert 1000 <= length < 1300  # MAXLEN ~ trims whole macro-nodes, never below the cap
    records = read_stream(client, "test:audit", session_id="s1")
    assert records and all(r["session_id"] == "s1" for r in records)
    assert len(records) == pytest.approx(length / 3, abs=2)
    raw = client.xrange("test:audit", count=5)
    assert all(VALID_ID.encode() not in fields[b"record"] for _, fields in raw)
    audit.close()
    client.close()


def test_graph_trace_goes_to_the_stream(redis_url, make_app):
    client = Redis.from_url(redis_url)
    audit = AuditLog(sinks=[RedisStreamSink(client, "reach:audit")])
    # build_graph's own recorder writes into the executor's log, so into the stream
    app = make_app(executor_factory=lambda registry: fast_executor(registry, audit=audit))
    config = {"configurable": {"thread_id": "s-redis"}}
    app.invoke({"messages": [("user", "我要退款 OD-20240618-002")]}, config, context=ALICE)
    app.invoke(Command(resume="确认"), config, context=ALICE)
    audit.flush()
    kinds = [r["kind"] for r in read_stream(client, "reach:audit", session_id="s-redis")]
    for kind in ("intent", "arguments", "tool_call", "execution", "answer"):
        assert kind in kinds
    assert kinds.count("intent") == 1  # one recorder
    audit.close()
    client.close()
