"""Clients see status, safe data and a message; never internals, never who owns what."""

from __future__ import annotations

import json

from tests.helpers import default_registry
from tools.executor.client_view import INTERNAL_KEYS, client_view
from tools.executor.pipeline import ActionExecutor, envelope
from tools.registry.context import ToolContext

BOB = dict(user_id="u_10002", user_role="customer")


def lookup(db, order_id: str, **who: str) -> dict:
    executor = ActionExecutor(default_registry())
    ctx = ToolContext(resources=db, **(who or BOB))
    return executor.execute(
        {"name": "query_order_status", "parameters": {"order_id": order_id}}, ctx
    )


def test_someone_elses_order_looks_exactly_like_a_missing_one(db):
    theirs = lookup(db, "OD-20240618-001")  # u_10001's order
    missing = lookup(db, "OD-20991231-999")
    # The envelope (kept in state's tool_results) is the same too, but for the request id,
    # which hashes the arguments the caller sent, and the latency.
    varying = {"request_id", "latency_ms"}
    assert {k: v for k, v in theirs.items() if k not in varying} == {
        k: v for k, v in missing.items() if k not in varying
    }
    assert "owner_mismatch" not in json.dumps(theirs)
    seen_theirs, seen_missing = client_view(theirs), client_view(missing)
    assert json.dumps(seen_theirs, sort_keys=True) == json.dumps(seen_missing, sort_keys=True)
    assert seen_theirs["error"] == "not_found" and seen_theirs["data"] is None


def test_success_keeps_status_data_and_a_message_only(db):
    result = lookup(db, "OD-20240618-001", user_id="u_10001", user_role="customer")
    assert result["status"] == "success" and result["request_id"]
    seen = client_view(result)
    assert set(seen) == {"tool", "status", "data", "message"}
    assert seen["status"] == "success"
    assert seen["data"] == {k: v for k, v in result["data"].items() if k not in INTERNAL_KEYS}
    assert seen["message"] == result["summary"]
    text = json.dumps(seen, ensure_ascii=False)
    for internal in (result["request_id"], "latency_ms", "attempts", "flags", "retryable"):
        assert internal not in text


def test_internal_error_wording_never_reaches_the_client():
    failed = envelope(
        tool="request_refund",
        status="failed",
        error_type="circuit_open",
        message="request_refund is failing; calls are paused while it recovers",
        request_id="req_abc",
        attempts=3,
        latency_ms=12.5,
        flags=["breaker_open"],
        data={"detail": "stack"},
    )
    seen = client_view(failed, language="en")
    assert seen == {
        "tool": "request_refund",
        "status": "failed",
        "data": None,
        "message": "The service is unavailable right now; nothing was done. Please try later.",
        "error": "try_later",
        "cause": "unavailable",
    }


def test_internal_keys_are_removed_inside_data_too():
    nested = envelope(
        tool="book_flight_ticket",
        status="success",
        request_id="req_1",
        data={"booking": {"request_id": "req_1", "flight_no": "CA1501"}, "flags": ["x"]},
        summary="已预订 CA1501",
    )
    assert client_view(nested)["data"] == {"booking": {"flight_no": "CA1501"}}


def test_a_replay_says_it_was_already_done():
    replay = envelope(
        tool="request_refund",
        status="success",
        request_id="req_1",
        duplicated=True,
        summary="已提交",
    )
    seen = client_view(replay)
    assert seen["already_done"] is True and "此前已提交" in seen["message"]


def test_pending_rejected_and_unknown_have_user_messages():
    pending = client_view(envelope(tool="t_x", status="pending", request_id="r"))
    rejected = client_view(envelope(tool="t_x", status="rejected", request_id="r"))
    unknown = client_view(
        envelope(tool="t_x", status="unknown", request_id="r", error_type="system")
    )
    assert "确认" in pending["message"] and "error" not in pending
    assert "取消" in rejected["message"] and "error" not in rejected
    assert unknown["error"] == "try_later" and "勿重复" in unknown["message"]
