"""Nodes that share a superstep (``graph.builder.SAME_STEP``) answer exactly as separate ones.

The same conversations run on two graphs, each on its own business database: one where slot
filling runs in the intent node's superstep and the reply in the tool node's, one where every
node is a superstep of its own. Replies, the end state, the protocol log and the side effects
must be the same; only the supersteps differ.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from graph.builder import SAME_STEP, build_graph
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


def _run(tmp_path: Path, same_step: frozenset[str], script: list[Any]) -> dict[str, Any]:
    db = open_database(tmp_path / f"business-{len(same_step)}.db")
    app = build_graph(
        checkpointer=InMemorySaver(),
        same_step=same_step,
        database_factory=lambda: db,
        executor_factory=fast_executor,
    )
    replies = []
    for turn in script:
        payload = turn if isinstance(turn, Command) else {"messages": [("user", turn)]}
        out = app.invoke(payload, CONFIG, context=ALICE)
        replies.append(_text(out["messages"][-1]))
    values = app.get_state(CONFIG).values
    steps = sum(1 for s in app.get_state_history(CONFIG) if s.metadata["step"] >= 0)
    tables = ("refunds", "transfers", "delivery_urges", "business_writes", "appointments")
    effects = {}
    for table in tables:
        try:
            effects[table] = db.query(f"SELECT COUNT(*) AS n FROM {table}")[0]["n"]  # noqa: S608
        except Exception:  # noqa: BLE001 - a scenario's table may not exist
            effects[table] = None
    db.close()
    return {
        "replies": replies,
        "messages": [(m.type, _text(m)) for m in values["messages"]],
        "protocol": [(p["role"], _stage(p)) for p in values["protocol"]],
        "results": [(r.get("tool"), r.get("status")) for r in values.get("tool_results", [])],
        "slots": values.get("slots"),
        "task": (values.get("intent"), values.get("task_id"), values.get("step_count")),
        "summary": values.get("summary"),
        "effects": effects,
        "supersteps": steps,
    }


def _text(message: BaseMessage) -> str:
    return message.content if isinstance(message.content, str) else str(message.content)


def _stage(note: dict[str, Any]) -> Any:
    content = note.get("content")
    return content.get("stage") if isinstance(content, dict) else content


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_shared_supersteps_change_nothing_but_their_number(tmp_path, name):
    fused = _run(tmp_path, SAME_STEP, SCRIPTS[name])
    apart = _run(tmp_path, frozenset(), SCRIPTS[name])
    assert fused.pop("supersteps") < apart.pop("supersteps")
    assert fused == apart


def test_a_pause_asked_for_between_a_pair_keeps_it_apart(tmp_path):
    db = open_database(tmp_path / "business.db")
    for option, stops_before in (
        ({"interrupt_before": ["reply"]}, ("reply",)),
        ({"interrupt_after": ["intent"]}, ("slot_filling",)),
        ({"interrupt_before": ["slot_filling"]}, ("slot_filling",)),
    ):
        app = build_graph(
            checkpointer=InMemorySaver(),
            database_factory=lambda: db,
            executor_factory=fast_executor,
            **option,
        )
        config = {"configurable": {"thread_id": f"t{option}"}}
        app.invoke({"messages": [("user", "OD-20240618-001 到哪了")]}, config, context=ALICE)
        assert app.get_state(config).next == stops_before, option
    db.close()
