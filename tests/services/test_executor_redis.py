"""The executor with its state in a real Redis: shared idempotency, cache and rate limits,
in two round trips per call."""

from __future__ import annotations

import dataclasses
import time

import pytest
from redis import Redis
from redis.connection import AbstractConnection

from scenarios.delivery.tools import query_order_status
from tests.conftest import fast_executor, registry_with
from tests.helpers import default_executor, default_registry, set_env
from tools.executor.admission import RedisAdmission
from tools.executor.pipeline import Decision
from tools.registry.context import ToolContext

pytestmark = pytest.mark.integration

STATUS = {"name": "query_order_status", "parameters": {"order_id": "OD-20240618-001"}}
REFUND = {"name": "request_refund", "parameters": {"order_id": "OD-20240618-002"}}


@pytest.fixture
def ctx(db):
    return ToolContext(
        user_id="u_10001", user_role="customer", session_id="s", task_id="t", resources=db
    )


@pytest.fixture
def admission(redis_url):
    return RedisAdmission(Redis.from_url(redis_url))


def counted(handler=query_order_status):
    calls = []

    def wrapped(args, c):
        calls.append(args)
        return handler(args, c)

    return wrapped, calls


def test_two_processes_share_one_idempotency_record(redis_url, ctx, db):
    handler, calls = counted(default_registry().get("request_refund").handler)
    registry = registry_with("request_refund", handler=handler)
    first = fast_executor(registry, admission=RedisAdmission(Redis.from_url(redis_url)))
    second = fast_executor(registry, admission=RedisAdmission(Redis.from_url(redis_url)))
    assert first.execute(REFUND, ctx, decision=Decision("approve"))["status"] == "success"
    again = second.execute(REFUND, ctx, decision=Decision("approve"))
    assert again["duplicated"] is True and len(calls) == 1
    assert db.query("SELECT COUNT(*) AS n FROM refunds")[0]["n"] == 1


def test_key_reuse_rate_limit_and_cache_in_redis(admission, ctx):
    handler, calls = counted()
    registry = registry_with(
        "query_order_status", handler=handler, rate_limit="3/minute", cache_ttl_s=5
    )
    executor = fast_executor(registry, admission=admission)
    assert executor.execute({**STATUS, "idempotency_key": "k"}, ctx)["status"] == "success"
    other = {
        "name": "query_order_status",
        "parameters": {"order_id": "202506001"},
        "idempotency_key": "k",
    }
    assert "reused with different arguments" in executor.execute(other, ctx)["message"]
    cached = executor.execute(STATUS, dict_task(ctx, "t2"))
    assert cached["flags"] == ["cached"] and len(calls) == 1
    assert executor.execute(STATUS, dict_task(ctx, "t3"))["error_type"] == "rate_limited"


def dict_task(ctx, task_id):
    return dataclasses.replace(ctx, task_id=task_id)


def test_a_call_costs_two_redis_round_trips(admission, ctx, monkeypatch, redis_server):
    registry = registry_with("query_order_status", rate_limit="1000/minute", cache_ttl_s=5)
    executor = fast_executor(registry, admission=admission)
    sends = []
    original = AbstractConnection.send_packed_command

    def counting(conn, command, check_health=True):
        if getattr(conn, "port", None) == redis_server.port:
            sends.append(command)
        return original(conn, command, check_health)

    admission.client.ping()  # open the connection first: its handshake is not a call's cost
    monkeypatch.setattr(AbstractConnection, "send_packed_command", counting)
    executor.execute(STATUS, ctx)
    assert len(sends) == 2  # admit (limit + cache), settle (cache); a read claims no record
    sends.clear()
    executor.execute(STATUS, dict_task(ctx, "other"))  # served from the cache
    assert len(sends) == 1  # admit only: nothing to record for a read
    sends.clear()
    urge = {"name": "urge_delivery", "parameters": {"order_id": "OD-20240618-001"}}
    executor.execute(urge, ctx)
    assert len(sends) == 2  # a write: admit (limit + claim), settle (record)


def test_default_executor_uses_redis_when_configured(redis_url, monkeypatch, data_dir, ctx):
    set_env(monkeypatch, "REDIS_URL", redis_url)
    executor = default_executor(default_registry())
    assert isinstance(executor.admission, RedisAdmission)
    started = time.perf_counter()
    assert executor.execute(STATUS, ctx)["status"] == "success"
    assert time.perf_counter() - started < 5


def test_redis_admission_records_claim_outcome_and_release(admission):
    first = admission.admit(
        rate_rule=None, user_id="u", tool="t", cache_key=None, request_id="r1", fingerprint="f1"
    )
    assert first.claim.acquired
    again = admission.admit(
        rate_rule=None, user_id="u", tool="t", cache_key=None, request_id="r1", fingerprint="f1"
    )
    assert again.claim.record.state == "pending"
    admission.settle(
        request_id="r1",
        fingerprint="f1",
        outcome="succeeded",
        result={"status": "success"},
        cache_key=None,
        cache_ttl_s=None,
    )
    assert admission.peek("r1").result == {"status": "success"}
    admission.settle(
        request_id="r1",
        fingerprint="f1",
        outcome="release",
        result={},
        cache_key=None,
        cache_ttl_s=None,
    )
    assert admission.peek("r1") is None
