"""The agent with ``REDIS_URL`` on a unix socket: every shared store reaches the same server.

On the host that runs Redis a unix socket skips loopback TCP (``bench/README.md``: a turn
0.03–0.05 of the in-memory turn faster), so a deployment may give ``unix://`` URLs; this
checks nothing in the project assumes ``redis://``.
"""

from __future__ import annotations

import pytest
from redis import Redis

from config.settings import get_settings
from graph.builder import build_graph
from graph.checkpoint import PlainRedisSaver, make_checkpointer
from storage.transcript import RedisTranscriptStore
from tests.conftest import ALICE

pytestmark = pytest.mark.integration


def test_the_agent_runs_on_redis_over_a_unix_socket(redis_server, redis_url, data_dir, monkeypatch):
    monkeypatch.setenv("REDIS_URL", f"unix://{redis_server.unix_socket}")
    get_settings.cache_clear()
    saver = make_checkpointer()
    assert isinstance(saver, PlainRedisSaver)
    app = build_graph(checkpointer=saver)
    config = {"configurable": {"thread_id": "unix-thread"}}
    first = app.invoke({"messages": [("user", "我的订单怎么还没到？")]}, config, context=ALICE)
    assert "订单号" in first["messages"][-1].content
    second = app.invoke({"messages": [("user", "OD-20240618-001")]}, config, context=ALICE)
    assert "配送中" in second["messages"][-1].content

    tcp = Redis.from_url(redis_url)  # the same server, seen over TCP
    over_tcp = PlainRedisSaver(tcp, serde=saver.serde)  # compressed and masked as written
    latest = over_tcp.get_tuple(config)
    assert latest is not None
    said = [m.content for m in latest.checkpoint["channel_values"]["messages"] if m.type == "human"]
    assert said == ["我的订单怎么还没到？", "OD-20240618-001"]
    keys = {k.decode() for k in tcp.keys("*")}
    # the executor's cached read (a read keeps no idempotency record: only writes do)
    assert any(k.startswith("reach:cache:") for k in keys)
    assert "reach:audit" in keys  # the trace stream
    logged = RedisTranscriptStore(tcp).read("unix-thread", "protocol")
    assert [e["body"]["content"] for e in logged if e["body"]["role"] == "user"][:1] == [
        "我的订单怎么还没到？"
    ]
