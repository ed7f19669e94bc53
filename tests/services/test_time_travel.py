"""History, replay, rollback and fork, through the helpers and the CLI, on every saver."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graph import time_travel
from graph.builder import build_graph
from tests.conftest import ALICE, fast_executor, say

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["memory", "redis"])
def saver(request):
    if request.param == "memory":
        return InMemorySaver()
    return request.getfixturevalue("redis_saver")


@pytest.fixture
def tt_app(saver, db):
    return build_graph(
        checkpointer=saver, database_factory=lambda: db, executor_factory=fast_executor
    )


def two_turns(app, thread="tt"):
    say(app, "我的订单怎么还没到？", thread=thread)
    return say(app, "OD-20240618-001", thread=thread)


def test_history_lists_every_checkpoint_with_node_intent_and_slots(tt_app):
    two_turns(tt_app)
    entries = time_travel.history(tt_app, "tt")
    assert [e.step for e in entries] == list(range(-1, len(entries) - 1))
    nodes = [e.node for e in entries]
    assert nodes.count("input") == 2
    # the order number answers the waiting question at the first look (a value the waiting
    # task takes), so no second look (reflect_refine) is taken
    for name in ("intent", "slot_filling", "clarify", "tool", "reply"):
        assert name in nodes
    last = entries[-1]
    assert last.intent == "CHECK_ORDER_STATUS"
    assert last.slots == {"order_id": "OD-20240618-001"}
    assert last.last_protocol.startswith("assistant: ")
    assert all(e.on_head_branch for e in entries)


def test_rollback_continues_from_n_steps_back_and_keeps_the_abandoned_branch(tt_app):
    two_turns(tt_app)
    before = time_travel.history(tt_app, "tt")
    config = time_travel.rollback(tt_app, "tt", 2)
    head = tt_app.get_state({"configurable": {"thread_id": "tt"}})
    assert head.config["configurable"]["checkpoint_id"] == config["configurable"]["checkpoint_id"]
    assert head.next == ("tool",)  # two steps back from the reply
    after = time_travel.history(tt_app, "tt")
    assert len(after) == len(before) + 1
    assert {e.checkpoint_id for e in before} <= {e.checkpoint_id for e in after}
    abandoned = [e for e in after if not e.on_head_branch]
    assert [e.node for e in abandoned] == ["tool", "reply"]
    out = tt_app.invoke(None, config, context=ALICE)
    assert "配送中" in out["messages"][-1].content


def test_rollback_past_the_beginning_goes_to_the_first_checkpoint(tt_app):
    two_turns(tt_app)
    first = time_travel.history(tt_app, "tt")[0]
    time_travel.rollback(tt_app, "tt", 1000)
    head = tt_app.get_state({"configurable": {"thread_id": "tt"}})
    assert head.parent_config["configurable"]["checkpoint_id"] == first.checkpoint_id
    assert not head.values.get("protocol")


def test_fork_edits_a_slot_and_runs_on_a_new_branch(tt_app):
    two_turns(tt_app)
    entries = time_travel.history(tt_app, "tt")
    before_tool = next(e for e in reversed(entries) if e.next == ("tool",))
    out = time_travel.fork(
        tt_app, "tt", before_tool.checkpoint_id, {"slots": {"order_id": "OD-20240618-002"}}, ALICE
    )
    assert "已送达" in out["messages"][-1].content
    assert out["slots"] == {"order_id": "OD-20240618-002"}
    original = tt_app.get_state(
        {"configurable": {"thread_id": "tt", "checkpoint_id": entries[-1].checkpoint_id}}
    )
    assert "配送中" in original.values["messages"][-1].content  # the first branch is intact


def test_replay_reruns_the_nodes_after_the_checkpoint(tt_app):
    two_turns(tt_app)
    entries = time_travel.history(tt_app, "tt")
    before_tool = next(e for e in reversed(entries) if e.next == ("tool",))
    out = time_travel.replay(tt_app, "tt", before_tool.checkpoint_id, ALICE)
    assert "配送中" in out["messages"][-1].content
    after = time_travel.history(tt_app, "tt")
    new = [e for e in after if e.checkpoint_id not in {x.checkpoint_id for x in entries}]
    assert [e.node for e in new][-2:] == ["tool", "reply"]  # tool and reply ran again
    assert all(e.on_head_branch for e in new)


def test_unknown_checkpoint_is_a_clear_error(tt_app):
    two_turns(tt_app)
    with pytest.raises(time_travel.CheckpointNotFoundError):
        time_travel.replay(tt_app, "tt", "1f000000-0000-6000-8000-000000000000", ALICE)


def test_replaying_past_a_side_effect_does_not_repeat_it(tt_app, db):
    """Replay re-runs the tool node; the executor answers from its idempotency record."""
    say(tt_app, "帮我催一下 OD-20240618-001", thread="urge")
    assert db.query("SELECT COUNT(*) AS n FROM delivery_urges")[0]["n"] == 1
    entries = time_travel.history(tt_app, "urge")
    before_tool = next(e for e in reversed(entries) if e.next == ("tool",))
    out = time_travel.replay(tt_app, "urge", before_tool.checkpoint_id, ALICE)
    assert db.query("SELECT COUNT(*) AS n FROM delivery_urges")[0]["n"] == 1
    assert out["tool_results"][-1]["duplicated"] is True
    assert "已帮您催促" in out["messages"][-1].content  # the same answer as the first time


def test_parse_assignments():
    assert time_travel.parse_assignments(["slots.order_id=OD-1", "intent=URGE_DELIVERY"]) == {
        "slots": {"order_id": "OD-1"},
        "intent": "URGE_DELIVERY",
    }
    with pytest.raises(ValueError, match="key=value"):
        time_travel.parse_assignments(["slots.order_id"])


def test_cli_history_rollback_fork_replay(tmp_path):
    reach = str(Path(sys.executable).parent / "reach")
    env = {**os.environ, "REACH_DATA_DIR": str(tmp_path), "COLUMNS": "250"}
    env.pop("REDIS_URL", None)

    def run(*args, stdin=None):
        done = subprocess.run(
            [reach, *args],
            input=stdin,
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    run("chat", "--thread", "c1", stdin="我的订单怎么还没到？\nOD-20240618-001\n")
    table = run("history", "c1")
    rows = [line for line in table.splitlines() if "│" in line and "checkpoint" not in line]
    assert len(rows) == 11  # two turns: input, start, and each node
    before_tool = next(line for line in rows if line.split("│")[5].strip() == "tool")
    checkpoint = before_tool.split("│")[2].strip()
    forked = run(
        "fork", "c1", "--checkpoint", checkpoint, "--set", "slots.order_id=OD-20240618-002"
    )
    assert "已送达" in forked
    rolled = run("rollback", "c1", "--steps", "2", "--run")
    assert "rolled back 2 step(s)" in rolled
    replayed = run("replay", "c1", "--checkpoint", checkpoint)
    assert "配送中" in replayed
    missing = subprocess.run(
        [reach, "replay", "c1", "--checkpoint", "nope"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert missing.returncode == 1 and "no checkpoint" in missing.stdout
