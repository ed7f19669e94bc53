"""Every node that runs is a superstep of its own: the stream and the history show what ran.

For the same conversations as the scenarios' common paths, each ``stream_mode="updates"``
chunk holds one node's update, and the checkpoints the turn wrote are one per node streamed,
in the same order: what Studio highlights is what ran. A person who sees a wrong intent can
fork at the checkpoint after ``intent`` with a corrected one, and slot filling runs on it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from graph import time_travel
from graph.builder import build_graph
from tests.conftest import ALICE, fast_executor
from tests.helpers import open_database

CONFIG = {"configurable": {"thread_id": "t1"}}
SCRIPTS = {
    "status": ["OD-20240618-001 到哪了", "我的订单怎么还没到？", "OD-20240618-001"],
    "refund": ["订单 OD-20240618-002 送到了但是洒了，我要退款", Command(resume="确认")],
    "typo": ["I want a refnd for order OD-20240618-002", Command(resume="yes")],
    "weather": ["北京明天天气怎么样", "阿特兰蒂斯的天气"],
    "transfer": [
        "帮我转500元给ACC-2001，密码123456",
        Command(resume="确认"),
        "OD-20240618-001 到哪了",
    ],
    "unknown": ["嗯……那个……", "帮我催一下 OD-20240618-001"],
    "appointment": ["想约明天上午的皮肤科", "好的"],
}


@pytest.fixture
def db(tmp_path: Path):
    database = open_database(tmp_path / "business.db")
    yield database
    database.close()


def _app(db: Any, **options: Any) -> Any:
    return build_graph(
        checkpointer=InMemorySaver(),
        database_factory=lambda: db,
        executor_factory=fast_executor,
        **options,
    )


def _streamed(app: Any, payload: Any, config: dict[str, Any]) -> list[str]:
    """The nodes a run streamed, one per chunk; a chunk of two nodes fails the test."""
    nodes = []
    for chunk in app.stream(payload, config, context=ALICE, stream_mode="updates"):
        assert len(chunk) == 1, f"one chunk, several nodes: {sorted(chunk)}"
        nodes.extend(name for name in chunk if name != "__interrupt__")
    return nodes


def _written(app: Any, config: dict[str, Any], seen: set[str]) -> list[str]:
    """The nodes whose output the checkpoints not in ``seen`` hold, oldest first."""
    entries = [e for e in time_travel.history(app, "t1") if e.checkpoint_id not in seen]
    seen.update(e.checkpoint_id for e in entries)
    return [e.node for e in entries if e.source == "loop" and e.node != "__start__"]


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_each_node_that_runs_is_its_own_step_and_checkpoint(db, name):
    app = _app(db)
    seen: set[str] = set()
    ran: list[str] = []
    for turn in SCRIPTS[name]:
        payload = turn if isinstance(turn, Command) else {"messages": [("user", turn)]}
        streamed = _streamed(app, payload, CONFIG)
        assert streamed, "a turn runs at least one node"
        assert _written(app, CONFIG, seen) == streamed
        ran.extend(streamed)
    if name == "status":  # the common turn: understood, filled, run, answered
        assert ran[:4] == ["intent", "slot_filling", "tool", "reply"]


def test_a_corrected_intent_forked_after_intent_runs_slot_filling_on_it(db):
    app = _app(db)
    assert _streamed(app, {"messages": [("user", "OD-20240618-001 到哪了")]}, CONFIG) == [
        "intent",
        "slot_filling",
        "tool",
        "reply",
    ]
    after_intent = next(s for s in app.get_state_history(CONFIG) if s.next == ("slot_filling",))
    assert after_intent.values["intent"] == "CHECK_ORDER_STATUS"
    assert after_intent.values["pending_tool_calls"] == []  # planned by slot filling, later

    forked = app.update_state(after_intent.config, {"intent": "URGE_DELIVERY"}, as_node="intent")
    assert app.get_state(forked).next == ("slot_filling",)
    updates: dict[str, Any] = {}
    for chunk in app.stream(None, forked, context=ALICE, stream_mode="updates"):
        updates.update(chunk)
    assert list(updates) == ["slot_filling", "tool", "reply"]
    (call,) = updates["slot_filling"]["pending_tool_calls"]
    assert call["name"] == "urge_delivery"
    assert call["parameters"] == {"order_id": "OD-20240618-001"}
    assert db.query("SELECT order_id FROM delivery_urges") == [{"order_id": "OD-20240618-001"}]
    head = app.get_state(CONFIG).values
    assert head["intent"] == "URGE_DELIVERY" and "催" in head["messages"][-1].content
    # the first answer stays in history, on the branch the fork left
    entries = time_travel.history(app, "t1")
    assert any(e.node == "reply" and not e.on_head_branch for e in entries)


@pytest.mark.parametrize(
    ("option", "stops_before"),
    [
        ({"interrupt_before": ["reply"]}, ("reply",)),
        ({"interrupt_after": ["intent"]}, ("slot_filling",)),
        ({"interrupt_before": ["slot_filling"]}, ("slot_filling",)),
        ({"interrupt_after": ["tool"]}, ("reply",)),
    ],
)
def test_a_pause_between_two_nodes_stops_between_them(db, option, stops_before):
    app = _app(db, **option)
    app.invoke({"messages": [("user", "OD-20240618-001 到哪了")]}, CONFIG, context=ALICE)
    assert app.get_state(CONFIG).next == stops_before
    app.invoke(None, CONFIG, context=ALICE)
    assert "配送中" in app.get_state(CONFIG).values["messages"][-1].content
