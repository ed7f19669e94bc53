"""What a client can read of a run: the client view of tool results, nothing that tells owners.

Compiled graph, in-memory checkpointer. The served equivalents (through ``langgraph dev``,
with stream events) are in ``tests/services/test_frontend_contract.py``.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.types import Command

from graph import time_travel
from tests.conftest import ALICE, BOB, say
from tools.executor.client_view import INTERNAL_KEYS

CONFIG = {"configurable": {"thread_id": "t1"}}
REFUND = "订单 OD-20240618-002 送到了但是洒了，我要退款"


def refunds(db, order_id: str = "OD-20240618-002") -> int:
    return db.query_one("SELECT COUNT(*) AS n FROM refunds WHERE order_id = ?", (order_id,))["n"]


def test_tool_messages_and_protocol_hold_the_client_view_only(app, db):
    say(app, REFUND)
    out = app.invoke(Command(resume={"decisions": [{"type": "approve"}]}), CONFIG, context=ALICE)
    tool_messages = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert tool_messages
    for message in tool_messages:
        seen = json.loads(message.content)
        assert set(seen) <= {"tool", "status", "data", "message", "error", "already_done"}
        assert not INTERNAL_KEYS & set(seen)
    tool_notes = [n for n in out["protocol"] if n["role"] == "tool"]
    assert tool_notes and all("request_id" not in json.dumps(n["content"]) for n in tool_notes)
    # the full envelope is still in state for the graph
    assert out["tool_results"][-1]["request_id"] and "latency_ms" in out["tool_results"][-1]
    assert refunds(db) == 1


def _client_readable(state: dict[str, Any]) -> str:
    """Everything in the state a client can fetch, minus ids and timings.

    Ids (message, call, task, request ids) are random or hash the arguments the caller sent
    (the order id), so they differ between any two orders, owned or not.
    """
    varying = {"latency_ms", "timestamp", "created_at", "ts"}

    def scrub(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: scrub(v)
                for k, v in value.items()
                if k not in varying and k != "id" and not k.endswith("_id")
            }
        if isinstance(value, list):
            return [scrub(v) for v in value]
        if hasattr(value, "model_dump"):
            return scrub(value.model_dump())
        return value

    return json.dumps(scrub(state), ensure_ascii=False, sort_keys=True, default=str)


def test_someone_elses_order_and_a_missing_one_leave_the_same_state(make_app):
    app = make_app()
    # OD-20240618-001 is Alice's; OD-20240618-009 does not exist. Same length, same shape.
    theirs = say(app, "OD-20240618-001 到哪了？", thread="a", context=BOB)
    missing = say(app, "OD-20240618-009 到哪了？", thread="b", context=BOB)
    assert "owner_mismatch" not in json.dumps(theirs, ensure_ascii=False, default=str)
    left = _client_readable(theirs).replace("OD-20240618-001", "OD-X")
    right = _client_readable(missing).replace("OD-20240618-009", "OD-X")
    assert left == right


def test_a_replayed_confirmation_says_it_was_already_submitted(app, db):
    say(app, REFUND)
    first = app.invoke(Command(resume={"decision": "approve"}), CONFIG, context=ALICE)
    first_reply = first["messages"][-1].content
    before_tool = next(e for e in reversed(time_travel.history(app, "t1")) if e.next == ("tool",))
    replayed = time_travel.replay(app, "t1", before_tool.checkpoint_id, ALICE)
    assert replayed["tool_results"][-1]["duplicated"] is True
    again = replayed["messages"][-1].content
    assert again != first_reply and again.startswith("此前已提交")
    assert first_reply in again  # what happened then, said once more after the notice
    assert refunds(db) == 1


def test_goto_end_in_process_changes_nothing_and_the_question_stays(app, db):
    """LangGraph drops a ``goto: "__end__"`` write and asks the interrupted node again.

    In-process callers who mean "no" resume with a rejection; the served API turns
    agent-chat-ui's "Mark as resolved" into one (``graph/auth.py``), tested in services.
    """
    say(app, REFUND)
    out = app.invoke(Command(goto="__end__"), CONFIG, context=ALICE)
    assert out["__interrupt__"] and refunds(db) == 0
    assert app.get_state(CONFIG).values["awaiting"]["node"] == "tool"
