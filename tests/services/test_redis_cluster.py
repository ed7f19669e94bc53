"""PlainRedisSaver on a real local 3-node Redis Cluster."""

from __future__ import annotations

import pytest
from redis.cluster import RedisCluster

from graph import time_travel
from graph.builder import build_graph
from graph.checkpoint.plain_redis import PlainRedisSaver
from tests.conftest import ALICE, fast_executor, say
from tests.services import RedisClusterSet

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    nodes = RedisClusterSet(tmp_path_factory.mktemp("cluster")).start()
    yield nodes
    nodes.stop()


@pytest.fixture
def cluster_saver(cluster):
    saver = PlainRedisSaver.from_url(cluster.url, cluster=True, prefix="cl")
    yield saver
    saver.client.close()


def test_a_thread_lives_in_one_slot(cluster_saver):
    client: RedisCluster = cluster_saver.client
    slots = {client.keyslot(key) for key in cluster_saver.keys_for("t-42").all()}
    assert len(slots) == 1
    spread = {client.keyslot(cluster_saver.keys_for(f"t-{i}").idx) for i in range(30)}
    assert len({client.get_node_from_key(f"{{t-{i}}}").port for i in range(30)}) == 3
    assert len(spread) > 20  # threads spread over the cluster; no shared hot key


def test_multi_turn_thread_with_forks_on_a_cluster(cluster_saver, db):
    app = build_graph(
        checkpointer=cluster_saver, database_factory=lambda: db, executor_factory=fast_executor
    )
    threads = [f"cluster-{i}" for i in range(6)]  # land on different nodes
    for thread in threads:
        first = say(app, "我的订单怎么还没到？", thread=thread)
        assert first["missing_slots"] == ["order_id"]
        second = say(app, "OD-20240618-001", thread=thread)
        assert "配送中" in second["messages"][-1].content
    thread = threads[0]
    entries = time_travel.history(app, thread)
    before_tool = next(e for e in reversed(entries) if e.next == ("tool",))
    forked = time_travel.fork(
        app, thread, before_tool.checkpoint_id, {"slots": {"order_id": "OD-20240618-002"}}, ALICE
    )
    assert "已送达" in forked["messages"][-1].content
    time_travel.rollback(app, thread, 3)
    after = time_travel.history(app, thread)
    assert {e.checkpoint_id for e in entries} <= {e.checkpoint_id for e in after}
    original = app.get_state(
        {"configurable": {"thread_id": thread, "checkpoint_id": entries[-1].checkpoint_id}}
    )
    assert "配送中" in original.values["messages"][-1].content
    cluster_saver.copy_thread(thread, "cluster-copy")
    copied = app.get_state({"configurable": {"thread_id": "cluster-copy"}})
    assert copied.values == app.get_state({"configurable": {"thread_id": thread}}).values
    cluster_saver.prune([thread], keep_last=4)
    assert len(time_travel.history(app, thread)) == 4
    cluster_saver.delete_thread(thread)
    assert time_travel.history(app, thread) == []


async def test_async_graph_on_a_cluster(cluster_saver, db):
    app = build_graph(
        checkpointer=cluster_saver, database_factory=lambda: db, executor_factory=fast_executor
    )
    config = {"configurable": {"thread_id": "cluster-async"}}
    await app.ainvoke({"messages": [("user", "where is order 202506001")]}, config, context=ALICE)
    state = await app.aget_state(config)
    assert "shipped" in state.values["messages"][-1].content
