from __future__ import annotations

import dataclasses
import time

import pytest

from tests.conftest import registry_with
from tools.catalog import default_registry
from tools.errors import PermanentToolError, TransientToolError
from tools.executor import ActionExecutor, request_id_for
from tools.registry import ToolContext


@pytest.fixture
def ctx(db):
    return ToolContext(
        user_id="u_10001", user_role="customer", session_id="s", task_id="t", resources=db
    )


def run(call, ctx, registry=None):
    return ActionExecutor(registry or default_registry()).execute(call, ctx)


def test_success_envelope(ctx):
    result = run({"name": "query_order_status", "parameters": {"order_id": "OD-20240618-001"}}, ctx)
    assert result["status"] == "success"
    assert result["error_type"] is None
    assert result["data"]["status"] == "delivering"
    assert result["data"]["eta_minutes"] == 15
    assert result["summary"] == "order OD-20240618-001: delivering, eta 15"
    assert set(result) >= {
        "status",
        "error_type",
        "data",
        "summary",
        "request_id",
        "duplicated",
        "attempts",
        "latency_ms",
    }


def test_unknown_tool_names_the_available_ones(ctx):
    result = run({"name": "query_order", "parameters": {}}, ctx)
    assert result["error_type"] == "not_found"
    assert "query_order_status" in result["data"]["available"]
    assert result["data"]["closest"] == "query_order_status"


@pytest.mark.parametrize(
    ("parameters", "field"),
    [
        ({}, "order_id"),
        ({"order_id": "12345"}, "order_id"),
        ({"order_id": 202506001}, "order_id"),
        ({"order_id": "202506001", "user_id": "u_10002"}, "user_id"),
        ("not json at all", "order_id"),
    ],
)
def test_invalid_arguments_never_reach_the_handler(ctx, parameters, field):
    calls = []
    registry = registry_with("query_order_status", handler=lambda a, c: calls.append(a) or {})
    result = run({"name": "query_order_status", "parameters": parameters}, ctx, registry)
    assert result["status"] == "failed"
    assert result["error_type"] == "validation"
    assert field in result["message"]
    assert calls == []


def test_removed_tool_answers_not_found_with_its_replacement(ctx):
    registry = default_registry()
    registry.remove("urge_delivery", replaced_by="query_order_status")
    result = run({"name": "urge_delivery", "parameters": {"order_id": "202506001"}}, ctx, registry)
    assert result["error_type"] == "not_found"
    assert "removed" in result["message"]
    assert result["data"]["closest"] == "query_order_status"


def test_json_string_arguments_are_parsed(ctx):
    result = run({"name": "query_order_status", "parameters": '{"order_id": "202506001"}'}, ctx)
    assert result["status"] == "success"


def test_role_without_permission_is_refused(ctx):
    staff = dataclasses.replace(ctx, user_role="agent")
    result = run({"name": "request_refund", "parameters": {"order_id": "OD-20240618-002"}}, staff)
    assert result["status"] == "rejected"
    assert result["error_type"] == "permission_denied"


def test_another_users_order_looks_exactly_like_a_missing_one(ctx):
    theirs = run({"name": "query_order_status", "parameters": {"order_id": "OD-20240619-003"}}, ctx)
    missing = run(
        {"name": "query_order_status", "parameters": {"order_id": "OD-20991231-999"}}, ctx
    )
    for key in ("status", "error_type", "message", "data"):
        assert theirs[key] == missing[key]
    assert "delivering" not in str(theirs)


def test_staff_with_order_any_may_read_any_order(ctx):
    staff = dataclasses.replace(ctx, user_id="u_90001", user_role="agent")
    result = run(
        {"name": "query_order_status", "parameters": {"order_id": "OD-20240619-003"}}, staff
    )
    assert result["status"] == "success"


def test_transient_failure_is_retryable_only_for_idempotent_tools(ctx):
    def flaky(args, c):
        raise TransientToolError("upstream 503")

    read = run(
        {"name": "query_order_status", "parameters": {"order_id": "202506001"}},
        ctx,
        registry_with("query_order_status", handler=flaky),
    )
    write = run(
        {"name": "urge_delivery", "parameters": {"order_id": "202506001"}},
        ctx,
        registry_with("urge_delivery", handler=flaky),
    )
    assert read["error_type"] == write["error_type"] == "system"
    assert read["retryable"] is True
    assert write["retryable"] is False


def test_permanent_and_unexpected_failures_are_system_and_not_retryable(ctx):
    def broken(args, c):
        raise PermanentToolError("schema mismatch")

    def buggy(args, c):
        raise KeyError("oops")

    for handler in (broken, buggy):
        result = run(
            {"name": "query_order_status", "parameters": {"order_id": "202506001"}},
            ctx,
            registry_with("query_order_status", handler=handler),
        )
        assert result["status"] == "failed"
        assert result["error_type"] == "system"
        assert result["retryable"] is False


def test_timeout_of_a_side_effecting_tool_reports_unknown(ctx):
    def slow(args, c):
        time.sleep(0.5)
        return {}

    read = run(
        {"name": "query_order_status", "parameters": {"order_id": "202506001"}},
        ctx,
        registry_with("query_order_status", handler=slow, timeout_s=0.05),
    )
    write = run(
        {"name": "urge_delivery", "parameters": {"order_id": "202506001"}},
        ctx,
        registry_with("urge_delivery", handler=slow, timeout_s=0.05),
    )
    assert read["status"] == "timeout" and read["retryable"] is True
    assert write["status"] == "unknown" and write["retryable"] is False


def test_user_fixable_failure_carries_the_reason(ctx):
    result = run({"name": "urge_delivery", "parameters": {"order_id": "OD-20240618-002"}}, ctx)
    assert result["error_type"] == "user_fixable"
    assert result["data"]["reason"] == "delivered"


def test_output_is_masked(ctx):
    registry = registry_with(
        "query_order_status",
        handler=lambda a, c: {"rider_phone": "13800138000", "order_id": "x"},
        summarize=None,
    )
    result = run(
        {"name": "query_order_status", "parameters": {"order_id": "202506001"}}, ctx, registry
    )
    assert result["data"]["rider_phone"] == "138****8000"


def test_async_handlers_are_supported(ctx):
    async def handler(args, c):
        return {
            "order_id": args.order_id,
            "status": "delivering",
            "eta_minutes": 1,
            "eta_date": None,
        }

    result = run(
        {"name": "query_order_status", "parameters": {"order_id": "202506001"}},
        ctx,
        registry_with("query_order_status", handler=handler),
    )
    assert result["status"] == "success"


def test_request_id_is_deterministic_and_argument_sensitive():
    a = request_id_for("s", "t", "request_refund", {"order_id": "1", "reason": "x"})
    b = request_id_for("s", "t", "request_refund", {"reason": "x", "order_id": "1"})
    c = request_id_for("s", "t", "request_refund", {"order_id": "2", "reason": "x"})
    assert a == b != c


def test_every_call_is_audited(ctx, caplog):
    caplog.set_level("INFO", logger="reach.audit")
    run({"name": "query_order_status", "parameters": {"order_id": "202506001"}}, ctx)
    record = caplog.records[-1].audit
    assert record["tool"] == "query_order_status"
    assert record["user_id"] == "u_10001"
    assert record["status"] == "success"


def test_refund_is_recorded_once_per_order(ctx, db):
    call = {"name": "request_refund", "parameters": {"order_id": "OD-20240618-002"}}
    first = run(call, ctx)
    second = run(call, ctx)
    assert first["data"]["already_requested"] is False
    assert second["data"]["already_requested"] is True
    assert db.query("SELECT COUNT(*) AS n FROM refunds")[0]["n"] == 1
