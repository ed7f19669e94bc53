"""Finding 3 of issue 12: a replay never repeats a side effect.

Replaying a turn from any of its checkpoints (the input ``__start__`` one included, which
re-adds the user message with a new id), forking before the turn with the same text, and
replaying after the idempotency record has expired (a fresh executor) all leave exactly one
business write. A fork that edits the text is a new task.
"""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from storage.db import Database
from tests.conftest import ALICE, say

pytestmark = pytest.mark.integration

THREAD = {"configurable": {"thread_id": "t1"}}


def count(db: Database, table: str) -> int:
    return int(db.query(f"SELECT COUNT(*) AS n FROM {table}")[0]["n"])  # noqa: S608 - fixed names


def turn_checkpoints(app: Any, since: int) -> list[Any]:
    """Every checkpoint written after the first ``since`` of the thread, oldest first."""
    history = list(app.get_state_history(THREAD))[::-1]
    return history[since:]


def replay_everywhere(app: Any, checkpoints: list[Any], approve: bool = True) -> None:
    """Replay from each checkpoint, approving any confirmation it asks for again."""
    for snapshot in checkpoints:
        app.invoke(None, snapshot.config, context=ALICE)
        state = app.get_state(THREAD)
        if approve and state.tasks and any(t.interrupts for t in state.tasks):
            app.invoke(Command(resume="确认"), THREAD, context=ALICE)


def test_replay_of_an_urge_from_every_checkpoint_urges_once(make_app, db):
    app = make_app(checkpointer=InMemorySaver())
    say(app, "帮我催一下 OD-20240618-001")
    assert count(db, "delivery_urges") == 1
    checkpoints = turn_checkpoints(app, 0)
    assert any(s.metadata.get("source") == "input" for s in checkpoints)
    replay_everywhere(app, checkpoints)
    assert count(db, "delivery_urges") == 1
    assert count(db, "business_writes") == 1


def test_fork_before_the_turn_with_the_same_text_is_the_same_task(make_app, db):
    app = make_app(checkpointer=InMemorySaver())
    say(app, "OD-20240618-001 到哪了")
    before_turn = len(list(app.get_state_history(THREAD)))
    fork_point = list(app.get_state_history(THREAD))[0].config
    say(app, "帮我催一下 OD-20240618-001")
    first_task = app.get_state(THREAD).values["task_id"]
    app.invoke({"messages": [("user", "帮我催一下 OD-20240618-001")]}, fork_point, context=ALICE)
    assert app.get_state(THREAD).values["task_id"] == first_task
    assert count(db, "delivery_urges") == 1
    assert before_turn > 0
    # an edited fork is a new task, and does urge
    app.invoke({"messages": [("user", "请帮我催一下 OD-20240618-001")]}, fork_point, context=ALICE)
    assert app.get_state(THREAD).values["task_id"] != first_task
    assert count(db, "delivery_urges") == 2


def test_the_same_text_later_in_the_thread_is_a_new_task(make_app, db):
    app = make_app(checkpointer=InMemorySaver())
    say(app, "帮我催一下 OD-20240618-001")
    first = app.get_state(THREAD).values["task_id"]
    say(app, "帮我催一下 OD-20240618-001")
    assert app.get_state(THREAD).values["task_id"] != first
    assert count(db, "delivery_urges") == 2


def test_the_same_text_after_compaction_is_still_a_new_task(make_app, db):
    # compaction keeps the state at its last three turns: the place of a message in the
    # conversation must count the turns moved out too, or every later urge is the third
    app = make_app(checkpointer=InMemorySaver())
    tasks = []
    for _ in range(7):
        say(app, "帮我催一下 OD-20240618-001")
        values = app.get_state(THREAD).values
        tasks.append(values["task_id"])
        assert values["tool_results"][-1].get("duplicated") is not True
    assert app.get_state(THREAD).values["summary"]["turns"] >= 3
    assert len(set(tasks)) == 7
    assert count(db, "delivery_urges") == 7


def balances(db: Database) -> dict[str, int]:
    rows = db.query("SELECT account_id, balance_cents FROM accounts")
    return {r["account_id"]: r["balance_cents"] for r in rows}


def test_transfer_replayed_after_the_idempotency_record_expired_moves_money_once(make_app, db):
    saver = InMemorySaver()
    app = make_app(checkpointer=saver)
    before = balances(db)
    say(app, "帮我转500元给ACC-2001，密码123456")
    app.invoke(Command(resume="确认"), THREAD, context=ALICE)
    assert balances(db)["ACC-1001"] == before["ACC-1001"] - 50_000
    checkpoints = turn_checkpoints(app, 0)
    # A new app on the same checkpoints and database: a fresh executor has no idempotency
    # records, exactly as after they expired.
    later = make_app(checkpointer=saver)
    replay_everywhere(later, checkpoints)
    assert balances(db)["ACC-1001"] == before["ACC-1001"] - 50_000
    assert count(db, "transfers") == 1


@pytest.mark.parametrize(
    ("text", "table"),
    [
        ("订单 OD-20240618-002 送到了但是洒了，我要退款", "refunds"),
        ("帮我取消订单 OD-20240618-001", "business_writes"),
    ],
)
def test_confirmed_writes_replayed_with_fresh_records_happen_once(make_app, db, text, table):
    saver = InMemorySaver()
    app = make_app(checkpointer=saver)
    say(app, text)
    app.invoke(Command(resume="确认"), THREAD, context=ALICE)
    written = count(db, table)
    assert written == 1
    checkpoints = turn_checkpoints(app, 0)
    replay_everywhere(make_app(checkpointer=saver), checkpoints)
    assert count(db, table) == written
