"""Result shapes and write retries: the executor's checks after a handler answers or fails."""

from __future__ import annotations

import pytest

from tests.conftest import fast_executor, registry_with
from tests.helpers import default_registry
from tools.executor.errors import TransientToolError
from tools.executor.pipeline import Decision
from tools.registry.context import ToolContext

STATUS = {"name": "query_order_status", "parameters": {"order_id": "OD-20240618-001"}}
REFUND = {"name": "request_refund", "parameters": {"order_id": "OD-20240618-002"}}
URGE = {"name": "urge_delivery", "parameters": {"order_id": "OD-20240618-001"}}
APPROVE = Decision("approve")


@pytest.fixture
def ctx(db):
    return ToolContext(
        user_id="u_10001", user_role="customer", session_id="s", task_id="t", resources=db
    )


def refunds(db) -> int:
    return db.query_one("SELECT COUNT(*) AS n FROM refunds WHERE order_id = 'OD-20240618-002'")["n"]


def test_a_renamed_result_field_is_a_schema_drift_failure(ctx):
    real = default_registry().get("query_order_status")
    assert real is not None and real.result_model is not None

    def drifted(args, c):
        data = real.handler(args, c)
        data["status_v2"] = data.pop("status")
        return data

    executor = fast_executor(registry_with("query_order_status", handler=drifted))
    result = executor.execute(STATUS, ctx)
    assert result["status"] == "failed" and result["error_type"] == "system"
    assert result["data"] == {"reason": "schema_drift", "fields": ["status"]}
    assert result["retryable"] is False
    executor.audit.flush()
    assert executor.audit.records[-1]["status"] == "failed"


def test_extra_result_fields_are_tolerated(ctx):
    real = default_registry().get("query_order_status")
    assert real is not None

    def richer(args, c):
        return {**real.handler(args, c), "rider": "Li"}

    result = fast_executor(registry_with("query_order_status", handler=richer)).execute(STATUS, ctx)
    assert result["status"] == "success" and result["data"]["rider"] == "Li"


def test_a_write_refused_with_a_503_is_retried_once_the_lookup_shows_nothing_happened(ctx, db):
    real = default_registry().get("request_refund")
    assert real is not None
    calls: list[int] = []

    def busy_once(args, c):
        calls.append(1)
        if len(calls) == 1:
            raise TransientToolError("upstream answered 503")
        return real.handler(args, c)

    executor = fast_executor(registry_with("request_refund", handler=busy_once))
    result = executor.execute(REFUND, ctx, decision=APPROVE)
    assert result["status"] == "success" and result["attempts"] == 2
    assert refunds(db) == 1


def test_a_write_whose_effect_the_lookup_finds_is_not_repeated(ctx, db):
    real = default_registry().get("request_refund")
    assert real is not None
    calls: list[int] = []

    def done_then_503(args, c):
        calls.append(1)
        real.handler(args, c)
        raise TransientToolError("upstream answered 503 after committing")

    executor = fast_executor(registry_with("request_refund", handler=done_then_503))
    result = executor.execute(REFUND, ctx, decision=APPROVE)
    assert len(calls) == 1 and refunds(db) == 1
    assert result["status"] == "failed"  # the lookup said "happened": no second attempt


def test_a_dropped_connection_after_a_write_is_settled_by_the_lookup(ctx, db):
    real = default_registry().get("request_refund")
    assert real is not None
    calls: list[int] = []

    def done_then_drop(args, c):
        calls.append(1)
        real.handler(args, c)
        raise ConnectionError("connection reset by peer")

    executor = fast_executor(registry_with("request_refund", handler=done_then_drop))
    result = executor.execute(REFUND, ctx, decision=APPROVE)
    assert result["status"] == "success" and "confirmed_by_status_lookup" in result["flags"]
    assert len(calls) == 1 and refunds(db) == 1


def test_a_write_without_a_lookup_is_never_retried(ctx, db):
    calls: list[int] = []

    def busy(args, c):
        calls.append(1)
        raise TransientToolError("upstream answered 503")

    result = fast_executor(registry_with("urge_delivery", handler=busy)).execute(URGE, ctx)
    assert result["status"] == "failed" and len(calls) == 1


def test_a_precondition_refuses_a_call_before_it_is_confirmed_and_a_replay_answers_from_record(
    ctx, db
):
    from tools.executor.errors import UserFixableError  # noqa: PLC0415

    allowed = {"yes": True}

    def once_only(args, c):
        if not allowed["yes"]:
            raise UserFixableError("already refunded", details={"reason": {"en": "done"}})

    executor = fast_executor(registry_with("request_refund", precondition=once_only))
    prepared = executor.prepare(REFUND, ctx)
    assert not isinstance(prepared, dict) and prepared.needs_confirmation  # the check passed
    assert executor.run(prepared, ctx, decision=APPROVE)["status"] == "success"
    allowed["yes"] = False  # the effect now fails the check: a replay answers from the record
    replayed = executor.prepare(REFUND, ctx)
    assert isinstance(replayed, dict) and replayed["duplicated"] is True
    other = ToolContext(
        user_id="u_10001", user_role="customer", session_id="s2", task_id="t2", resources=db
    )
    refused = executor.prepare(REFUND, other)  # a new request: refused before any question
    assert isinstance(refused, dict)
    assert (refused["status"], refused["error_type"]) == ("failed", "user_fixable")
    assert refused["data"] == {"reason": {"en": "done"}, "stage": "precondition"}
    assert refunds(db) == 1


def test_a_precondition_that_breaks_is_a_failure_not_a_refusal(ctx, db):
    def broken(args, c):
        raise RuntimeError("backend down")

    executor = fast_executor(registry_with("request_refund", precondition=broken))
    result = executor.prepare(REFUND, ctx)
    assert isinstance(result, dict)
    assert (result["status"], result["error_type"]) == ("failed", "system")
    assert "backend down" not in result["message"] and refunds(db) == 0
