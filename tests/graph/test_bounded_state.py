"""Bounded state: a long thread keeps small checkpoints, loses nothing, can still time travel."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.types import Command

from graph import time_travel
from graph.checkpoint import sqlite_checkpointer
from nodes.compact import full_transcript
from storage.transcript import MemoryTranscriptStore, SQLiteTranscriptStore
from tests.conftest import ALICE, say
from tests.helpers import set_env

SCRIPT = ["OD-20240618-001 到哪了", "我的订单怎么还没到？", "OD-20240618-001", "北京明天天气怎么样"]
CONFIG = {"configurable": {"thread_id": "t1"}}


def storage_bytes(path: Path) -> int:
    """Bytes the thread's checkpoints and pending writes occupy in the SQLite saver."""
    conn = sqlite3.connect(str(path))
    try:
        checkpoints = conn.execute(
            "SELECT COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0) FROM checkpoints"
        ).fetchone()[0]
        writes = conn.execute("SELECT COALESCE(SUM(LENGTH(value)), 0) FROM writes").fetchone()[0]
    finally:
        conn.close()
    return int(checkpoints + writes)


@pytest.mark.slow
def test_a_200_turn_thread_stays_small_on_sqlite(make_app, tmp_path):
    saver = sqlite_checkpointer(tmp_path / "checkpoints.db")
    store = SQLiteTranscriptStore(tmp_path / "transcript.db")
    app = make_app(checkpointer=saver, transcript=store)
    for turn in range(200):
        say(app, SCRIPT[turn % len(SCRIPT)])
    latest = saver.get_tuple(CONFIG)
    assert latest is not None
    stored_kind, stored = saver.serde.dumps_typed(latest.checkpoint)
    plain_kind, plain = saver.serde.inner.dumps_typed(latest.checkpoint)
    assert stored_kind.endswith("+zstd")
    # under 32 KB even uncompressed; the whole thread under 10 MB
    assert len(plain) < 32 * 1024, len(plain)
    assert storage_bytes(tmp_path / "checkpoints.db") < 10 * 1024 * 1024
    values = app.get_state(CONFIG).values
    assert sum(isinstance(m, HumanMessage) for m in values["messages"]) == 3
    assert len(values["protocol"]) == 8
    assert values["summary"]["turns"] == 197
    # nothing is lost: the transcript store plus the state hold every turn, once
    messages, protocol = full_transcript(store, "t1", values)
    users = [m.content for m in messages if isinstance(m, HumanMessage)]
    assert users == [SCRIPT[turn % len(SCRIPT)] for turn in range(200)]
    assert len({m.id for m in messages}) == len(messages)
    assert sum(p["role"] == "user" for p in protocol) == 200


def test_trimming_removes_old_turns_into_the_store(make_app, monkeypatch):
    set_env(monkeypatch, "REACH_STATE_KEEP_TURNS", "2")
    set_env(monkeypatch, "REACH_STATE_KEEP_PROTOCOL", "4")
    store = MemoryTranscriptStore()
    app = make_app(transcript=store)
    for turn in range(6):
        say(app, SCRIPT[turn % len(SCRIPT)])
    values = app.get_state(CONFIG).values
    humans = [m.content for m in values["messages"] if isinstance(m, HumanMessage)]
    assert humans == [SCRIPT[0], SCRIPT[1]]  # turns 5 and 6
    assert len(values["protocol"]) == 4
    assert values["summary"]["turns"] == 4
    assert SCRIPT[3][:10] in values["summary"]["text"]
    stored = [e["body"]["data"]["content"] for e in store.read("t1", "message")]
    assert [text for text in stored if text in SCRIPT] == SCRIPT[:4]


def test_time_travel_restores_the_trimmed_state_of_that_point(make_app, monkeypatch):
    set_env(monkeypatch, "REACH_STATE_KEEP_TURNS", "2")
    store = MemoryTranscriptStore()
    app = make_app(transcript=store)
    for turn in range(5):
        say(app, f"OD-20240618-001 到哪了 #{turn}")
    # the checkpoints that ended each turn, newest first; [2] ended turn 3
    ends = [e for e in reversed(time_travel.history(app, "t1")) if e.node == "reply" and not e.next]
    third = time_travel.get_checkpoint(app, "t1", ends[2].checkpoint_id)
    at_third = [m.content for m in third.values["messages"] if isinstance(m, HumanMessage)]
    assert at_third == ["OD-20240618-001 到哪了 #1", "OD-20240618-001 到哪了 #2"]
    # roll back to it and continue: the state is that point's, plus the new turn
    config = app.update_state(third.config, None)
    out = app.invoke({"messages": [("user", "北京明天天气怎么样")]}, config, context=ALICE)
    humans = [m.content for m in out["messages"] if isinstance(m, HumanMessage)]
    assert humans == ["OD-20240618-001 到哪了 #2", "北京明天天气怎么样"]
    assert out["summary"]["turns"] == 2
    # older turns are in the transcript; the abandoned branch stays in history
    stored = {e["body"]["data"]["content"] for e in store.read("t1", "message")}
    assert "OD-20240618-001 到哪了 #0" in stored
    abandoned = time_travel.get_checkpoint(app, "t1", ends[0].checkpoint_id)
    last = [m.content for m in abandoned.values["messages"] if isinstance(m, HumanMessage)]
    assert last == ["OD-20240618-001 到哪了 #3", "OD-20240618-001 到哪了 #4"]


def test_a_pending_confirmation_survives_trimming(make_app, db, monkeypatch):
    set_env(monkeypatch, "REACH_STATE_KEEP_TURNS", "1")
    app = make_app(transcript=MemoryTranscriptStore())
    say(app, "北京明天天气怎么样")
    say(app, "帮我取消订单 OD-20240618-001")
    assert app.get_state(CONFIG).interrupts
    out = app.invoke(Command(resume={"decision": "approve"}), CONFIG, context=ALICE)
    assert "已取消" in out["messages"][-1].content
    messages = out["messages"]
    # the call and its answer stay together; nothing answers a call that is gone
    calls = {c["id"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls}
    answers = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    assert answers <= calls
    out = say(app, "OD-20240618-002 到哪了")
    calls = {c["id"] for m in out["messages"] if isinstance(m, AIMessage) for c in m.tool_calls}
    answers = {m.tool_call_id for m in out["messages"] if isinstance(m, ToolMessage)}
    assert answers <= calls
    assert sum(isinstance(m, HumanMessage) for m in out["messages"]) == 1


def test_sqlite_transcript_appends_once(tmp_path):
    store = SQLiteTranscriptStore(tmp_path / "t.db")
    entries = [
        {"kind": "message", "key": "m1", "body": {"data": {"id": "m1", "content": "你好"}}},
        {"kind": "protocol", "key": "p1", "body": {"role": "user", "content": "你好"}},
    ]
    assert store.append("t", entries) == 2
    assert store.append("t", entries) == 0  # a re-run node writes nothing new
    assert store.append("other", entries[:1]) == 1
    assert [e["key"] for e in store.read("t")] == ["m1", "p1"]
    assert [e["key"] for e in store.read("t", "protocol")] == ["p1"]
    reopened = SQLiteTranscriptStore(tmp_path / "t.db")
    assert reopened.read("t") == store.read("t")
