"""The business_writes ledger: a second line of exactly-once that never expires."""

from __future__ import annotations

import pytest

from scenarios.delivery.tools import OrderRef, urge_delivery
from storage.db import AlreadyWritten, Database
from tests.helpers import default_registry, finance_registry, open_database
from tools.executor.pipeline import ActionExecutor, Decision, ExecutorSettings
from tools.registry.context import TaskHistory, ToolContext

FAST = ExecutorSettings(backoff_initial_s=0.001, backoff_max_s=0.005, backoff_jitter_s=0.001)


@pytest.fixture
def memdb() -> Database:
    database = open_database(":memory:")
    yield database
    database.close()


def ctx(db: Database, **changes: object) -> ToolContext:
    fields = {"user_id": "u_10001", "user_role": "customer", "session_id": "s", "task_id": "t"}
    return ToolContext(resources=db, **{**fields, **changes})  # type: ignore[arg-type]


def urges(db: Database) -> int:
    return int(db.query("SELECT COUNT(*) AS n FROM delivery_urges")[0]["n"])


def test_same_request_id_writes_once(memdb):
    call = ctx(memdb, request_id="req_1")
    first = urge_delivery(OrderRef(order_id="OD-20240618-001"), call)
    with pytest.raises(AlreadyWritten) as again:
        urge_delivery(OrderRef(order_id="OD-20240618-001"), call)
    assert again.value.result == first
    assert urges(memdb) == 1
    assert memdb.earlier_write("req_1") == ("urge_delivery", first)


def test_without_a_request_id_the_ledger_is_a_no_op(memdb):
    urge_delivery(OrderRef(order_id="OD-20240618-001"), ctx(memdb))
    urge_delivery(OrderRef(order_id="OD-20240618-001"), ctx(memdb))
    assert urges(memdb) == 2
    assert memdb.query("SELECT COUNT(*) AS n FROM business_writes")[0]["n"] == 0


def test_expired_idempotency_record_is_answered_from_the_ledger(memdb):
    call = {"name": "urge_delivery", "parameters": {"order_id": "OD-20240618-001"}}
    first = ActionExecutor(default_registry(), settings=FAST).execute(call, ctx(memdb))
    # a new executor has no idempotency records: as after they expired
    second = ActionExecutor(default_registry(), settings=FAST).execute(call, ctx(memdb))
    assert first["status"] == second["status"] == "success"
    assert second["duplicated"] is True and "answered_from_ledger" in second["flags"]
    assert second["data"] == first["data"]
    assert urges(memdb) == 1


def test_transfer_request_id_ignores_the_risk_ticket(memdb):
    history = TaskHistory(succeeded_tools=frozenset({"assess_transfer_risk"}))
    base = {"account_id": "ACC-1001", "to_account": "ACC-2001", "amount_cents": 50_000}
    a = ActionExecutor(finance_registry(), settings=FAST)
    first = a.execute(
        {"name": "execute_transfer", "parameters": {**base, "risk_ticket": "RISK-AAAAAAAAAAAA"}},
        ctx(memdb, history=history),
        decision=Decision("approve"),
    )
    b = ActionExecutor(finance_registry(), settings=FAST)
    prepared = b.prepare(
        {"name": "execute_transfer", "parameters": {**base, "risk_ticket": "RISK-BBBBBBBBBBBB"}},
        ctx(memdb, history=history),
    )
    assert first["status"] == "success"
    assert isinstance(prepared, dict) and prepared["duplicated"] is True  # not asked again
    assert prepared["request_id"] == first["request_id"]
    rows = memdb.query("SELECT COUNT(*) AS n FROM transfers")
    assert rows[0]["n"] == 1
