"""A user's own scenario, added without touching the project (the README's worked example)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from langgraph.checkpoint.memory import InMemorySaver

from graph.builder import build_graph
from scenarios import DELIVERY, SCENARIOS
from state import Context

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "store_hours.py"
spec = importlib.util.spec_from_file_location("store_hours", EXAMPLE)
assert spec is not None and spec.loader is not None
store_hours = importlib.util.module_from_spec(spec)
spec.loader.exec_module(store_hours)
STORE = store_hours.STORE


def run(app, text: str, thread: str = "s1") -> str:
    out = app.invoke(
        {"messages": [("user", text)]},
        {"configurable": {"thread_id": thread}},
        context=Context(user_id="u_10001", user_role="customer"),
    )
    return out["messages"][-1].content


def test_an_extra_scenario_is_served_next_to_the_shipped_ones(db):
    app = build_graph(
        checkpointer=InMemorySaver(), scenarios=[*SCENARIOS, STORE], database_factory=lambda: db
    )
    assert run(app, "北京门店几点开门？") == "北京门店营业时间：09:00–21:00。"
    assert run(app, "门店营业时间", "s2") == "请问是哪个城市的门店？"
    assert run(app, "上海", "s2") == "上海门店营业时间：10:00–22:00。"
    assert "配送中" in run(app, "OD-20240618-001 到哪了", "s3")


def test_a_subset_serves_only_what_it_was_given(db):
    app = build_graph(checkpointer=InMemorySaver(), scenarios=[DELIVERY, STORE],
                      database_factory=lambda: db)  # fmt: skip
    question = run(app, "今天天气怎么样")
    assert "查询天气" not in question and question.endswith("？")  # one question, no menu
    assert "配送中" in run(app, "OD-20240618-001 到哪了", "s4")
