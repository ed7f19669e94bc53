"""Reads are read again: never answered from the idempotency record (issue 38).

"此前已提交过，无需重复操作。以下是当时的结果：…" came back for an order status asked at a
pending confirmation, and for a status asked in a later run on the same data directory. A
read is never "already submitted"; only writes are deduplicated.
"""

from __future__ import annotations

from langgraph.checkpoint.memory import InMemorySaver

from graph.builder import build_graph
from tests.conftest import ALICE, fast_executor
from tests.graph.talk import Talk
from tools.executor.stores import SQLiteIdempotencyStore

ALREADY = ("此前已提交过", "already submitted")


def _app(db, store):
    return build_graph(
        checkpointer=InMemorySaver(),
        database_factory=lambda: db,
        executor_factory=lambda registry: fast_executor(registry, idempotency=store),
    )


def test_a_status_asked_again_in_a_later_run_on_the_same_data_is_read_again(db, tmp_path):
    store = SQLiteIdempotencyStore(tmp_path / "executor.db")
    first = Talk(_app(db, store), db, ALICE, "same-thread")("OD-20240618-001 到哪了")
    assert "配送中" in first.replies
    with db.transaction() as conn:
        conn.execute("UPDATE orders SET status = 'delivered' WHERE order_id = 'OD-20240618-001'")
    # a new process, the same data directory, the same thread and words: the same request id
    later = Talk(
        _app(db, SQLiteIdempotencyStore(tmp_path / "executor.db")), db, ALICE, "same-thread"
    )("OD-20240618-001 到哪了")
    assert not any(word in later.replies for word in ALREADY)
    assert "已送达" in later.replies  # what the order is now, not what it was
    assert not later.results("query_order_status")[0]["duplicated"]


def test_a_status_asked_at_a_pending_confirmation_is_read_not_already_submitted(talk, world):
    t = talk()
    t("OD-20240618-002 我要退款")
    assert t.pending
    t("OD-20240618-001 到哪了")
    assert "配送中" in t.replies
    assert not any(word in t.replies for word in ALREADY)
    t("OD-20240618-001 到哪了")  # asked once more: read once more
    assert "配送中" in t.replies
    assert not any(word in t.replies for word in ALREADY)


def test_a_confirmed_write_replayed_is_still_answered_from_its_record(talk, world):
    t = talk()
    t("OD-20240618-002 我要退款", "确认")
    assert len(t.rows("SELECT * FROM refunds WHERE order_id = 'OD-20240618-002'")) == 1
    t.app.invoke(None, t.config, context=t.context)  # a replay of the thread's last step
    assert len(t.rows("SELECT * FROM refunds WHERE order_id = 'OD-20240618-002'")) == 1
