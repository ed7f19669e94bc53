"""PlainRedisSaver under the graph: fork safety, parity with InMemorySaver, TTL, durability,
concurrency and round trips, on a real redis-server."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import threading
import time
import uuid
import zlib
from pathlib import Path
from typing import Any

import ormsgpack
import pytest
import zstandard
from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Overwrite
from redis import Redis
from redis.asyncio import Redis as AsyncRedis
from redis.connection import AbstractConnection

from config.settings import Settings
from graph import time_travel
from graph.builder import build_graph
from graph.checkpoint import make_checkpointer
from graph.checkpoint.plain_redis import PlainRedisSaver, layout, lua
from graph.run_lock import LockedGraph
from state import Context
from storage.redis_direct import AsyncDirect
from tests.conftest import ALICE, BOB, fast_executor, say
from tests.services import RedisServer

pytestmark = pytest.mark.integration

VOLATILE = {"timestamp", "latency_ms", "id", "created_at", "run_id"}


def normalize(value: Any) -> Any:
    """Drop what legitimately differs between two runs: random ids, clocks, latencies."""
    if isinstance(value, BaseMessage):
        return normalize(value.model_dump())
    if isinstance(value, Overwrite):  # a reducer bypass (compaction) wraps its value
        return {"__overwrite__": normalize(value.value)}
    if isinstance(value, dict):
        return {k: normalize(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list | tuple):
        return [normalize(v) for v in value]
    if isinstance(value, str) and value.startswith("{"):
        try:
            return normalize(json.loads(value))
        except ValueError:
            return value
    return value


def full_history(app, thread: str) -> list[dict[str, Any]]:
    snapshots = list(app.get_state_history({"configurable": {"thread_id": thread}}))
    position = {s.config["configurable"]["checkpoint_id"]: i for i, s in enumerate(snapshots)}
    rows = []
    for s in snapshots:
        parent = s.parent_config["configurable"]["checkpoint_id"] if s.parent_config else None
        rows.append(
            {
                "values": normalize(s.values),
                "next": s.next,
                "metadata": normalize(s.metadata),
                "parent": position.get(parent),
                "tasks": [(t.name, normalize(t.result)) for t in s.tasks],
            }
        )
    return rows


def scenario(app) -> None:
    """Interrupt before the tool, resume, fork an old checkpoint, replay an older one."""
    config = {"configurable": {"thread_id": "parity"}}
    # fixed message ids: task ids derive from them, so both runs are comparable
    first = HumanMessage("我的订单怎么还没到？", id="m1")
    app.invoke({"messages": [first]}, config, context=ALICE)
    app.invoke({"messages": [HumanMessage("OD-20240618-001", id="m2")]}, config, context=ALICE)
    assert app.get_state(config).next == ("tool",)  # interrupted before the tool
    app.invoke(None, config, context=ALICE)  # resume
    entries = time_travel.history(app, "parity")
    before_tool = next(e for e in entries if e.next == ("tool",))
    time_travel.fork(
        app, "parity", before_tool.checkpoint_id, {"slots": {"order_id": "OD-20240618-002"}}, ALICE
    )
    older = next(e for e in entries if e.next == ("slot_filling",))
    time_travel.replay(app, "parity", older.checkpoint_id, ALICE)


def test_graph_level_parity_with_in_memory_saver(redis_saver, db):
    # each app has its own executor: a shared idempotency store would answer the second
    # run's tool calls from the first run's records
    memory_app = build_graph(
        checkpointer=InMemorySaver(),
        database_factory=lambda: db,
        interrupt_before=["tool"],
        executor_factory=fast_executor,
    )
    redis_app = build_graph(
        checkpointer=redis_saver,
        database_factory=lambda: db,
        interrupt_before=["tool"],
        executor_factory=fast_executor,
    )
    scenario(memory_app)
    scenario(redis_app)
    expected, got = full_history(memory_app, "parity"), full_history(redis_app, "parity")
    assert len(got) == len(expected) > 15
    for index, (want, have) in enumerate(zip(expected, got, strict=True)):
        assert have == want, f"checkpoint {index} differs"


def test_update_state_on_an_old_checkpoint_never_touches_the_original_branch(redis_saver, db):
    app = build_graph(
        checkpointer=redis_saver, database_factory=lambda: db, executor_factory=fast_executor
    )
    say(app, "我的订单怎么还没到？", thread="fork")
    say(app, "OD-20240618-001", thread="fork")
    config = {"configurable": {"thread_id": "fork"}}
    original = {
        s.config["configurable"]["checkpoint_id"]: normalize(s.values)
        for s in app.get_state_history(config)
    }
    # fork from several old checkpoints, each continuing with different values
    for entry in time_travel.history(app, "fork")[2:8]:
        snapshot = time_travel.get_checkpoint(app, "fork", entry.checkpoint_id)
        branch = app.update_state(
            snapshot.config, {"slots": {"order_id": "202506001"}, "intent": "URGE_DELIVERY"}
        )
        app.invoke(None, branch, context=ALICE)
    for checkpoint_id, values in original.items():
        again = app.get_state(
            {"configurable": {"thread_id": "fork", "checkpoint_id": checkpoint_id}}
        )
        assert normalize(again.values) == values


class RoundTrips:
    """Count client-side round trips: every packed send is one request to the server.

    Only the saver's own requests (its key prefix) on this server count: the server is
    shared by the session's tests, whose process-wide clients (an audit stream sink, say)
    may write to it during the measured turn.
    """

    def __init__(
        self, monkeypatch: pytest.MonkeyPatch, port: int, prefix: bytes = b"reach:cp:"
    ) -> None:
        self.count = 0
        original = AbstractConnection.send_packed_command

        def counting(conn, command, check_health=True):
            raw = b"".join(command) if isinstance(command, list | tuple) else command
            if getattr(conn, "port", None) == port and prefix in raw:
                self.count += 1
            return original(conn, command, check_health)

        monkeypatch.setattr(AbstractConnection, "send_packed_command", counting)

    def measure(self, fn) -> int:
        before = self.count
        fn()
        return self.count - before


def test_each_put_is_one_round_trip_and_history_reads_are_batched(redis_saver, db, monkeypatch):
    app = build_graph(
        checkpointer=redis_saver, database_factory=lambda: db, executor_factory=fast_executor
    )
    for i in range(5):
        say(app, f"OD-20240618-00{1 + i % 2} 到哪了", thread="rt")
    trips = RoundTrips(monkeypatch, redis_saver.client.connection_pool.connection_kwargs["port"])
    config = {"configurable": {"thread_id": "rt"}}
    checkpoints = len(list(app.get_state_history(config)))
    assert checkpoints >= 30
    assert trips.measure(lambda: list(app.get_state_history(config))) <= 3
    assert trips.measure(lambda: redis_saver.get_tuple(config)) == 1
    head = redis_saver.get_tuple(config)
    assert (
        trips.measure(
            lambda: redis_saver.put(
                head.config, head.checkpoint, {"source": "update", "step": 99}, {}
            )
        )
        == 1
    )
    assert (
        trips.measure(lambda: redis_saver.put_writes(head.config, [("a", 1), ("b", 2)], "task-1"))
        == 1
    )
    turn = trips.measure(lambda: say(app, "OD-20240618-001 到哪了", thread="rt"))
    supersteps = 6  # input, the start, intent, slot_filling, tool, reply
    assert turn <= 2 * supersteps + 2  # one put and one put_writes per step, two reads


TTL_S = 1.5
"""The TTL test's: the thread is read every TTL/3 for 3⅓ TTLs, then left for 7/6 of one (it
was 3 s, read every second for 10 s, then left 3.5 s: the same ratios, half the wait)."""


def test_ttl_keeps_an_active_thread_whole_and_removes_an_idle_one(redis_url, db):
    client = Redis.from_url(redis_url)
    saver = PlainRedisSaver.from_url(redis_url, ttl_s=TTL_S, prefix="ttl")
    app = build_graph(
        checkpointer=saver, database_factory=lambda: db, executor_factory=fast_executor
    )
    run = {"run_id": str(uuid.uuid4())}
    say(app, "我的订单怎么还没到？", thread="active")
    say(app, "OD-20240618-001", thread="active")
    app.invoke(
        {"messages": [("user", "OD-20240618-002 到哪了")]},
        {"configurable": {"thread_id": "idle"}, **run},
        context=ALICE,
    )
    config = {"configurable": {"thread_id": "active"}}
    expected = [normalize(s.values) for s in app.get_state_history(config)]
    assert client.pttl(saver.keys_for("active").blobs) <= TTL_S * 1000
    started = time.monotonic()
    while time.monotonic() - started < TTL_S * 10 / 3:  # touched every third of the TTL
        assert app.get_state(config).values["messages"]
        time.sleep(TTL_S / 3)  # Redis expires on its own clock: real time passes
    assert [normalize(s.values) for s in app.get_state_history(config)] == expected
    assert not list(client.scan_iter(match="ttl:{idle}*"))  # idle thread gone entirely
    assert not list(client.scan_iter(match="ttl:run:*"))  # and its run index
    time.sleep(TTL_S * 7 / 6)
    assert not list(client.scan_iter(match="ttl:*"))  # nothing left behind


def test_thread_survives_a_redis_crash_with_aof(tmp_path, db):
    server = RedisServer(tmp_path / "aof", aof=True).start()
    try:
        app = build_graph(
            checkpointer=PlainRedisSaver.from_url(server.url),
            database_factory=lambda: db,
            executor_factory=fast_executor,
        )
        first = say(app, "我的订单怎么还没到？", thread="durable")
        assert first["missing_slots"] == ["order_id"]
        server.proc.kill()  # a crash, not a clean shutdown
        server.proc.wait()
        server.start()
        fresh = build_graph(
            checkpointer=PlainRedisSaver.from_url(server.url),
            database_factory=lambda: db,
            executor_factory=fast_executor,
        )
        second = say(fresh, "OD-20240618-001", thread="durable")
        assert "配送中" in second["messages"][-1].content
        assert second["task_id"] == first["task_id"]
    finally:
        server.stop()


async def test_fifty_threads_concurrently_through_the_async_graph(redis_saver, db):
    app = build_graph(
        checkpointer=redis_saver, database_factory=lambda: db, executor_factory=fast_executor
    )
    orders = {
        "u_10001": ["OD-20240618-001", "OD-20240618-002", "202506001"],
        "u_10002": ["OD-20240619-003", "OD-20240619-004"],
    }

    def plan(i: int) -> tuple[Context, str]:
        user = ALICE if i % 2 == 0 else BOB
        mine = orders[user.user_id]
        return user, mine[i % len(mine)]

    async def converse(i: int) -> None:
        user, order = plan(i)
        config = {"configurable": {"thread_id": f"conc-{i}"}}
        await app.ainvoke(
            {"messages": [("user", f"第{i}号：我的订单怎么还没到？")]}, config, context=user
        )
        await app.ainvoke({"messages": [("user", order)]}, config, context=user)

    await asyncio.gather(*(converse(i) for i in range(50)))
    for i in range(50):
        user, order = plan(i)
        config = {"configurable": {"thread_id": f"conc-{i}"}}
        state = (await app.aget_state(config)).values
        humans = [m.content for m in state["messages"] if m.type == "human"]
        assert humans == [f"第{i}号：我的订单怎么还没到？", order]
        assert {p["session_id"] for p in state["protocol"]} == {f"conc-{i}"}
        assert order in state["messages"][-1].content
        history = [s async for s in app.aget_state_history(config)]
        # input + start + each node of both turns (the number answers the waiting question
        # at the first look: no reflect_refine)
        assert len(history) == 11
        assert all(s.config["configurable"]["thread_id"] == f"conc-{i}" for s in history)


def test_factory_prefers_plain_saver_when_modules_are_missing(redis_url, caplog):
    settings = Settings(redis_url=redis_url, redis_saver="langgraph")
    saver = make_checkpointer(settings=settings)
    assert isinstance(saver, PlainRedisSaver)
    assert "needs Redis modules" in caplog.text
    memory = settings.model_copy(update={"checkpointer": "memory"})
    assert isinstance(make_checkpointer(settings=memory), InMemorySaver)


VALID_ID = "110101199001011237"
"""An ID-card number with a valid check digit (the detectors check it)."""


def _every_stored_byte(client: Redis) -> bytes:
    """Return every value Redis holds, with each compressed blob inflated next to it."""
    found: list[bytes] = []

    def inflate(value: Any) -> None:
        if isinstance(value, bytes):
            found.append(value)
            with contextlib.suppress(zlib.error):
                found.append(zlib.decompress(value))
            with contextlib.suppress(zstandard.ZstdError):
                found.append(zstandard.ZstdDecompressor().decompress(value))
            with contextlib.suppress(Exception):
                inflate(ormsgpack.unpackb(value))
            with contextlib.suppress(Exception):  # a checkpoint record: refs, then msgpack
                inflate(layout.unpack_record(value))
        elif isinstance(value, list | tuple):
            for item in value:
                inflate(item)

    for key in client.scan_iter():
        kind = client.type(key)
        if kind == b"hash":
            inflate(list(client.hgetall(key).values()))
        elif kind == b"zset":
            inflate([member for member, _ in client.zrange(key, 0, -1, withscores=True)])
        elif kind == b"string":
            inflate(client.get(key))
        elif kind == b"list":
            inflate(client.lrange(key, 0, -1))
        elif kind == b"set":
            inflate(list(client.smembers(key)))
    return b"\n".join(found)


def test_no_id_number_is_stored_in_redis_in_clear_records_included(redis_url, db):
    # checkpoint records skip the serializer (they hold only names, versions, ids and
    # times): the user's ID number, sent as the turn's input, must still be masked everywhere
    client = Redis.from_url(redis_url)
    client.flushall()
    app = build_graph(
        checkpointer=PlainRedisSaver.from_url(redis_url),
        database_factory=lambda: db,
        executor_factory=fast_executor,
    )
    say(app, f"OD-20240618-001 到哪了？我的身份证号 {VALID_ID}", thread="idcheck")
    stored = _every_stored_byte(client)
    assert b"OD-20240618-001" in stored  # the scan does reach the stored text
    assert VALID_ID.encode() not in stored
    assert VALID_ID[6:14].encode() not in stored  # not even the birth date in the middle
    history = list(app.get_state_history({"configurable": {"thread_id": "idcheck"}}))
    assert history and all(state.metadata is not None for state in history)


def test_concurrent_script_calls_each_take_a_kept_connection_and_killed_ones_go_back(redis_url):
    # LangGraph writes a step's checkpoint and its tasks' writes from two threads at once:
    # both take the short path; a connection dropped on an error is returned to the pool
    # (each one used to stay counted against the pool's 100, and the client's path then
    # failed with "Too many connections")
    client = Redis.from_url(redis_url, max_connections=6)
    direct = lua.register(client).direct
    assert direct is not None
    probe = client.register_script("redis.call('INCR', KEYS[1]); return redis.call('GET', KEYS[1])")
    client.set("probe", 0)
    client.ping()  # loads nothing, but opens the client's own connection
    sent: list[Any] = []
    original = lua.Direct._send

    def slow_send(connection: Any, sha: str, keys: list[Any], args: list[Any]) -> Any:
        sent.append(connection)
        time.sleep(0.05)  # a real overlap between the two threads, not a timing check
        return original(connection, sha, keys, args)

    call = direct.bind(probe)
    probe(keys=["probe"], args=[])  # the script is loaded
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lua.Direct, "_send", staticmethod(slow_send))
        threads = [threading.Thread(target=call, args=(["probe"], [])) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert len({id(connection) for connection in sent}) == 2 and direct.connections == 2
    admin = Redis.from_url(redis_url)
    for _ in range(10):  # more kills than the pool has room for
        admin.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
        assert int(call(["probe"], [])) > 0
    assert int(client.get("probe")) == 1 + 2 + 10
    assert direct.connections <= direct.size


def test_script_calls_take_the_short_path_and_fall_back_when_it_fails(redis_url, db):
    # a fresh saver on a server whose scripts were flushed: the short path gets NOSCRIPT,
    # the client's path loads the script; then the short path's socket is killed under it
    Redis.from_url(redis_url).script_flush()
    saver = PlainRedisSaver.from_url(redis_url)
    app = build_graph(
        checkpointer=saver, database_factory=lambda: db, executor_factory=fast_executor
    )
    first = say(app, "OD-20240618-001 到哪了", thread="short")
    assert "正在配送中" in first["messages"][-1].content
    direct = saver._sync_scripts().direct
    assert direct is not None and direct.connections >= 1  # kept after first use
    admin = Redis.from_url(redis_url)
    killed = admin.execute_command("CLIENT", "KILL", "SKIPME", "yes", "TYPE", "normal")
    assert killed
    second = say(app, "OD-20240618-001 到哪了", thread="short")  # after the kill
    assert "正在配送中" in second["messages"][-1].content
    history = list(app.get_state_history({"configurable": {"thread_id": "short"}}))
    assert sum(1 for s in history if s.metadata["source"] == "input") == 2
    assert app.get_state({"configurable": {"thread_id": "short"}}).values["messages"]


BUSY = """
local t0 = redis.call('TIME')
local start = tonumber(t0[1]) * 1000000 + tonumber(t0[2])
while true do
  local t = redis.call('TIME')
  if tonumber(t[1]) * 1000000 + tonumber(t[2]) - start > tonumber(ARGV[1]) then break end
end
"""
"""Keep the server busy ``ARGV[1]`` µs (the start of a slow script)."""

SLOW = BUSY + "return ARGV[2]\n"
"""Answer ``ARGV[2]`` after keeping the server busy ``ARGV[1]`` µs: a call to cancel mid-way."""


async def test_async_script_calls_take_the_short_path_and_fall_back_when_it_fails(redis_url):
    client = AsyncRedis.from_url(redis_url)
    scripts = lua.register(client)
    direct = scripts.direct
    assert isinstance(direct, AsyncDirect)
    echo = client.register_script("return ARGV[1]")
    call = direct.bind(echo)
    Redis.from_url(redis_url).script_flush()
    assert await call(["k"], ["one"]) == b"one"  # NOSCRIPT on the short path: the client loads it
    assert await call(["k"], ["two"]) == b"two"
    assert direct.connections() >= 1
    admin = Redis.from_url(redis_url)
    for i in range(12):  # more kills than the short path keeps
        admin.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
        assert await call(["k"], [f"after kill {i}"]) == f"after kill {i}".encode()
    replies = await asyncio.gather(*(call(["k"], [str(i)]) for i in range(20)))
    assert replies == [str(i).encode() for i in range(20)]  # each call its own reply
    assert direct.connections() <= direct.size
    await client.aclose()


async def test_an_async_call_cancelled_half_way_leaves_no_reply_for_the_next(redis_url):
    client = AsyncRedis.from_url(redis_url)
    direct = AsyncDirect(client, size=1)  # one kept connection: the next call would get it
    slow = direct.bind(client.register_script(SLOW))
    await slow(["k"], [0, "loaded"])
    task = asyncio.create_task(slow(["k"], [200_000, "stale"]))
    await asyncio.sleep(0.05)  # sent, the server still busy with it
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert direct.connections() == 0  # the connection that owed a reply was closed
    assert await slow(["k"], [0, "fresh"]) == b"fresh"
    await client.aclose()


async def test_the_async_saver_takes_the_short_path_through_a_whole_thread(redis_url, db):
    saver = PlainRedisSaver.from_url(redis_url)
    app = build_graph(
        checkpointer=saver, database_factory=lambda: db, executor_factory=fast_executor
    )
    config = {"configurable": {"thread_id": "async-short"}}
    for _ in range(3):
        out = await app.ainvoke(
            {"messages": [("user", "OD-20240618-001 到哪了")]}, config, context=ALICE
        )
        assert "正在配送中" in out["messages"][-1].content
    direct = saver._async_scripts().direct
    assert isinstance(direct, AsyncDirect) and direct.connections() >= 1
    history = [s async for s in app.aget_state_history(config)]
    assert sum(1 for s in history if s.metadata["source"] == "input") == 3


def _head(thread: str) -> tuple[dict[str, Any], Any]:
    """A first checkpoint of ``thread``: its config and the checkpoint itself."""
    return {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}, empty_checkpoint()


def test_writes_return_once_sent_and_every_read_sees_them(redis_url):
    saver = PlainRedisSaver.from_url(redis_url)
    direct = saver._sync_scripts().direct
    assert isinstance(direct, lua.Direct)
    config, checkpoint = _head("later")
    stored = saver.put(config, checkpoint, {"source": "input", "step": -1}, {})
    saver.put_writes(stored, [("a", 1), ("b", 2)], "task-1")
    # both returned once sent; the second, on the same connection, read the first's reply
    assert direct.sent_later == 2 and direct.unread == 1
    found = saver.get_tuple(stored)  # the read takes the replies first
    assert found is not None and found.checkpoint["id"] == checkpoint["id"]
    assert [(t, c, v) for t, c, v in found.pending_writes] == [
        ("task-1", "a", 1),
        ("task-1", "b", 2),
    ]
    assert direct.unread == 0
    saver.put(config, {**checkpoint, "id": str(uuid.uuid4())}, {"source": "loop", "step": 0}, {})
    assert len(list(saver.list({"configurable": {"thread_id": "later"}}))) == 2


def test_a_refused_write_is_sent_again_and_one_refused_again_raises_at_the_next_call(redis_url):
    admin = Redis.from_url(redis_url)
    admin.script_flush()  # the short path's EVALSHA is refused with NOSCRIPT
    saver = PlainRedisSaver.from_url(redis_url)
    direct = saver._sync_scripts().direct
    assert isinstance(direct, lua.Direct)
    config, checkpoint = _head("refused")
    stored = saver.put(config, checkpoint, {"source": "input", "step": -1}, {})
    saver.flush()  # read NOSCRIPT, sent again through redis-py, which loads the script
    assert direct.unread == 0
    assert saver.get_tuple(stored) is not None
    # a write that fails through redis-py too: the call that reads its reply raises it
    admin.set(saver.keys_for("broken").writes, "not a hash")
    broken, _ = _head("broken")
    broken["configurable"]["checkpoint_id"] = checkpoint["id"]
    assert saver.put_writes(broken, [("a", 1)], "task-1") is None
    with pytest.raises(Exception, match="WRONGTYPE"):
        saver.flush()
    assert direct.unread == 0
    saver.put_writes(stored, [("a", 1)], "task-2")  # the connection is still good
    assert [w[:2] for w in saver.get_tuple(stored).pending_writes] == [("task-2", "a")]


def test_a_socket_killed_before_its_reply_is_read_sends_the_write_again(redis_url):
    saver = PlainRedisSaver.from_url(redis_url)
    direct = saver._sync_scripts().direct
    config, checkpoint = _head("killed")
    stored = saver.put(config, checkpoint, {"source": "input", "step": -1}, {})
    saver.put_writes(stored, [("a", 1)], "task-1")
    admin = Redis.from_url(redis_url)
    assert admin.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
    found = saver.get_tuple(stored)
    assert found is not None and [w[:2] for w in found.pending_writes] == [("task-1", "a")]
    assert len(list(saver.list({"configurable": {"thread_id": "killed"}}))) == 1  # once
    assert direct is not None and direct.unread == 0


def test_flush_reads_the_replies_of_writes_sent_from_every_thread(redis_url):
    # LangGraph writes a step's tasks from several threads; a read after them sees them all
    saver = PlainRedisSaver.from_url(redis_url)
    direct = saver._sync_scripts().direct
    config, checkpoint = _head("threads")
    stored = saver.put(config, checkpoint, {"source": "input", "step": -1}, {})
    threads = [
        threading.Thread(target=saver.put_writes, args=(stored, [("n", i)], f"task-{i:02}"))
        for i in range(16)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    saver.flush()
    assert direct is not None and direct.unread == 0 and direct.connections <= direct.size
    found = saver.get_tuple(stored)
    assert sorted(v for _, _, v in found.pending_writes) == list(range(16))


def test_a_locked_run_has_its_writes_answered_before_it_gives_the_thread_back(redis_url, db):
    saver = PlainRedisSaver.from_url(redis_url)
    app = build_graph(
        checkpointer=saver, database_factory=lambda: db, executor_factory=fast_executor
    )
    locked = LockedGraph(app, Redis.from_url(redis_url), settings=Settings())
    out = locked.invoke(
        {"messages": [HumanMessage(content="OD-20240618-001 到哪了")]},
        {"configurable": {"thread_id": "locked"}},
        context=ALICE,
    )
    assert "正在配送中" in out["messages"][-1].content
    direct = saver._sync_scripts().direct
    assert direct is not None and direct.sent_later > 0 and direct.unread == 0


async def test_async_writes_return_once_sent_and_every_read_sees_them(redis_url):
    saver = PlainRedisSaver.from_url(redis_url)
    direct = saver._async_scripts().direct
    assert isinstance(direct, AsyncDirect)
    config, checkpoint = _head("alater")
    stored = await saver.aput(config, checkpoint, {"source": "input", "step": -1}, {})
    await saver.aput_writes(stored, [("a", 1), ("b", 2)], "task-1")
    assert direct.sent_later == 2 and direct.unread() >= 1  # the second not answered yet
    found = await saver.aget_tuple(stored)
    assert found is not None and found.checkpoint["id"] == checkpoint["id"]
    assert [(t, c, v) for t, c, v in found.pending_writes] == [
        ("task-1", "a", 1),
        ("task-1", "b", 2),
    ]
    assert direct.unread() == 0
    await saver.aclient.aclose()


async def test_async_a_refused_write_is_sent_again_and_one_refused_again_raises(redis_url):
    admin = Redis.from_url(redis_url)
    admin.script_flush()
    saver = PlainRedisSaver.from_url(redis_url)
    direct = saver._async_scripts().direct
    assert isinstance(direct, AsyncDirect)
    config, checkpoint = _head("arefused")
    stored = await saver.aput(config, checkpoint, {"source": "input", "step": -1}, {})
    await saver.aflush()  # NOSCRIPT read, the write sent again through redis-py
    assert direct.unread() == 0 and await saver.aget_tuple(stored) is not None
    admin.set(saver.keys_for("abroken").writes, "not a hash")
    broken, _ = _head("abroken")
    broken["configurable"]["checkpoint_id"] = checkpoint["id"]
    assert await saver.aput_writes(broken, [("a", 1)], "task-1") is None
    with pytest.raises(Exception, match="WRONGTYPE"):
        await saver.aflush()
    assert direct.unread() == 0
    await saver.aput_writes(stored, [("a", 1)], "task-2")
    found = await saver.aget_tuple(stored)
    assert [w[:2] for w in found.pending_writes] == [("task-2", "a")]
    await saver.aclient.aclose()


SLOW_PUSH = BUSY + "return redis.call('RPUSH', KEYS[1], ARGV[2])\n"
"""Push ``ARGV[2]`` after keeping the server busy ``ARGV[1]`` µs: a write whose reply is slow."""


async def test_an_async_write_is_confirmed_by_a_task_of_the_loop_as_soon_as_it_is_answered(
    redis_url,
):
    client = AsyncRedis.from_url(redis_url)
    direct = AsyncDirect(client, size=1)
    push = direct.bind(client.register_script(SLOW_PUSH), reply="later")
    await client.script_load(SLOW_PUSH)
    assert await push(["log"], [100_000, "entry"]) is None  # returned once sent
    assert direct.unread() == 1  # the server is still busy with it
    for _ in range(100):  # no other call: the loop's reader takes the reply when it comes
        await asyncio.sleep(0.01)
        if direct.unread() == 0:
            break
    assert direct.unread() == 0 and direct.connections() == 1  # given back, still open
    assert await client.lrange("log", 0, -1) == [b"entry"]
    await client.aclose()


def test_a_loop_that_ends_before_a_writes_reply_does_not_lose_the_write(redis_url):
    # asyncio.run cancels the reader of a reply still to come and closes its connection;
    # with no reply unread the socket closes cleanly and the server still runs the write
    async def send_and_leave() -> None:
        client = AsyncRedis.from_url(redis_url)
        direct = AsyncDirect(client)
        push = direct.bind(client.register_script(SLOW_PUSH), reply="later")
        await client.script_load(SLOW_PUSH)
        await push(["left"], [150_000, "entry"])

    asyncio.run(send_and_leave())
    admin = Redis.from_url(redis_url)
    assert admin.lrange("left", 0, -1) == [b"entry"]  # served after the script's 150 ms


async def test_a_locked_async_run_has_its_writes_answered_before_it_gives_the_thread_back(
    redis_url, db
):
    saver = PlainRedisSaver.from_url(redis_url)
    app = build_graph(
        checkpointer=saver, database_factory=lambda: db, executor_factory=fast_executor
    )
    locked = LockedGraph(app, Redis.from_url(redis_url), settings=Settings())
    out = await locked.ainvoke(
        {"messages": [HumanMessage(content="OD-20240618-001 到哪了")]},
        {"configurable": {"thread_id": "alocked"}},
        context=ALICE,
    )
    assert "正在配送中" in out["messages"][-1].content
    direct = saver._async_scripts().direct
    assert isinstance(direct, AsyncDirect) and direct.sent_later > 0 and direct.unread() == 0


EXITING = """
import sys
from langgraph.checkpoint.base import empty_checkpoint
from graph.checkpoint.plain_redis import PlainRedisSaver
saver = PlainRedisSaver.from_url(sys.argv[1])
config = {"configurable": {"thread_id": "exiting", "checkpoint_ns": ""}}
saver.put(config, empty_checkpoint(), {"source": "input", "step": -1}, {})
"""
"""A script that makes one write and exits: the write's reply is owed at the exit."""


def test_a_process_that_exits_after_a_refused_write_sends_it_again_first(redis_url):
    admin = Redis.from_url(redis_url)
    admin.script_flush()  # the write's EVALSHA is refused with NOSCRIPT, read only at exit
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", EXITING, redis_url],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "could not be confirmed" not in done.stderr
    saver = PlainRedisSaver.from_url(redis_url)
    assert saver.get_tuple({"configurable": {"thread_id": "exiting", "checkpoint_ns": ""}})
