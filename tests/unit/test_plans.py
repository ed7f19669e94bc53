from __future__ import annotations

import json
from dataclasses import replace

import pytest

from config.settings import Settings
from planning.plans import (
    PlanCache,
    PlanInstantiationError,
    instantiate,
    instantiate_step,
    plan_cache,
    plan_key,
    plan_store_kind,
)
from storage.kv import MemoryKV, SQLiteKV
from tests.helpers import default_registry
from tools.executor.pipeline import ActionExecutor, Decision, PreparedCall
from tools.registry.context import TaskHistory, ToolContext

SLOTS = {"department": "皮肤科", "day": "2024-06-20", "slot_id": "S-005", "patient_name": "张三"}


def run_sequence(executor, ctx, calls):
    done = []
    for call in calls:
        card = executor.registry.get(call["name"])
        decision = Decision(kind="approve") if card.risk == "high" else None
        history = TaskHistory.from_results([d["result"] for d in done])
        result = executor.execute(call, replace(ctx, history=history), decision=decision)
        assert result["status"] == "success", result
        done.append({**call, "result": result})
    return done


@pytest.fixture
def executor():
    return ActionExecutor(default_registry())


def test_a_plan_recorded_from_a_real_sequence_holds_no_slot_values(tmp_path, db, executor):
    ctx = ToolContext(user_id="u_10001", user_role="customer", task_id="t1", resources=db)
    sequence = run_sequence(
        executor,
        ctx,
        [
            {"name": "hold_appointment_slot", "parameters": {"slot_id": "S-005"}},
            {
                "name": "book_appointment",
                "parameters": {"slot_id": "S-005", "patient_name": "张三"},
            },
        ],
    )
    cache = PlanCache(SQLiteKV(tmp_path / "storage.db", "plans"))
    plan = cache.record("appointment", "BOOK_APPOINTMENT", SLOTS, sequence)
    assert plan is not None
    text = json.dumps(plan, ensure_ascii=False)
    for value in [*SLOTS.values(), "u_10001", "AP-"]:
        assert value not in text
    assert plan["steps"] == [
        {"name": "hold_appointment_slot", "arguments": {"slot_id": "$slots.slot_id"}},
        {
            "name": "book_appointment",
            "arguments": {"slot_id": "$slots.slot_id", "patient_name": "$slots.patient_name"},
        },
    ]
    assert plan["slot_shape"] == ["day", "department", "patient_name", "slot_id"]

    # The same kind of request, other values: the plan is found in a fresh cache (persisted)
    # and its calls still go through the executor's checks.
    other = {**SLOTS, "slot_id": "S-003", "patient_name": "李四"}
    again = PlanCache(SQLiteKV(tmp_path / "storage.db", "plans"))
    found = again.lookup("appointment", "BOOK_APPOINTMENT", other)
    assert found == plan
    calls = instantiate(found, other)
    assert calls[1] == {
        "name": "book_appointment",
        "parameters": {"slot_id": "S-003", "patient_name": "李四"},
    }
    history = TaskHistory.from_results([{"tool": "hold_appointment_slot", "status": "success"}])
    prepared = [executor.prepare(call, replace(ctx, history=history)) for call in calls]
    assert all(isinstance(p, PreparedCall) for p in prepared)
    assert prepared[1].needs_confirmation  # a cached plan skips no confirmation
    # A different slot shape is another kind of request.
    assert again.lookup("appointment", "BOOK_APPOINTMENT", {"slot_id": "S-003"}) is None


def test_a_failing_plan_is_evicted_and_a_stranger_gets_refused(tmp_path, db, executor):
    cache = PlanCache(SQLiteKV(tmp_path / "storage.db", "plans"))
    owner = ToolContext(user_id="u_10001", user_role="customer", task_id="t2", resources=db)
    sequence = run_sequence(
        executor,
        owner,
        [
            {"name": "query_order_status", "parameters": {"order_id": "OD-20240618-001"}},
            {"name": "urge_delivery", "parameters": {"order_id": "OD-20240618-001"}},
        ],
    )
    slots = {"order_id": "OD-20240618-001"}
    plan = cache.record("delivery", "URGE_DELIVERY", slots, sequence)
    assert plan is not None
    # Bob asks about someone else's order: the plan fills, the executor refuses, we evict.
    bob = ToolContext(user_id="u_10002", user_role="customer", task_id="t3", resources=db)
    theirs = {"order_id": "OD-20240618-002"}
    found = cache.lookup("delivery", "URGE_DELIVERY", theirs)
    result = executor.execute(instantiate_step(found, 0, theirs), bob)
    assert result["error_type"] == "not_found"
    assert cache.evict(found["key"]) is True
    assert cache.lookup("delivery", "URGE_DELIVERY", theirs) is None


def test_free_text_or_failed_steps_are_never_cached():
    cache = PlanCache()
    ok = {"status": "success", "data": {}}
    text = [
        {"name": "hold_appointment_slot", "parameters": {"slot_id": "S-001"}, "result": ok},
        {
            "name": "notify_patient",
            "parameters": {"content": "您的预约已确认，张三", "channel": "sms"},
            "result": ok,
        },
    ]
    assert cache.record("appointment", "BOOK", {"slot_id": "S-001"}, text) is None
    failed = [text[0], {**text[0], "result": {"status": "failed"}}]
    assert cache.record("appointment", "BOOK", {"slot_id": "S-001"}, failed) is None
    assert cache.plans() == []


def test_results_of_earlier_steps_become_step_references():
    cache = PlanCache()
    sequence = [
        {
            "name": "request_refund",
            "parameters": {"order_id": "202506001"},
            "result": {"status": "success", "data": {"refund_id": "RF-ABC", "amount": 12900}},
        },
        {
            "name": "notify_refund_status",
            "parameters": {"refund_id": "RF-ABC", "channel": "sms"},
            "result": {"status": "success", "data": {}},
        },
    ]
    plan = cache.record("delivery", "REQUEST_REFUND", {"order_id": "202506001"}, sequence)
    assert plan["steps"][1]["arguments"] == {"refund_id": "$steps.0.refund_id", "channel": "sms"}
    slots = {"order_id": "OD-20240618-002"}
    with pytest.raises(PlanInstantiationError):
        instantiate(plan, slots)  # step 1 needs step 0's result first
    first = instantiate_step(plan, 0, slots)
    assert first == {"name": "request_refund", "parameters": {"order_id": "OD-20240618-002"}}
    second = instantiate_step(plan, 1, slots, [{"refund_id": "RF-NEW"}])
    assert second["parameters"] == {"refund_id": "RF-NEW", "channel": "sms"}
    assert plan_key("delivery", "REQUEST_REFUND", slots) == plan["key"]


def test_a_disabled_cache_neither_records_nor_finds():
    cache = PlanCache(enabled=False)
    ok = {"status": "success", "data": {}}
    seq = [{"name": "a_b", "parameters": {}, "result": ok}] * 2
    assert cache.record("s", "I", {}, seq) is None
    assert cache.lookup("s", "I", {}) is None


def test_a_model_plan_keeps_one_call_but_no_constant_and_roles_do_not_share():
    cache = PlanCache()
    ok = {"status": "success", "data": {"status": "delivering"}}
    slots = {"order_id": "OD-20240618-001", "notify": "sms"}
    one = [{"name": "query_order_status", "parameters": {"order_id": slots["order_id"]}}]
    assert cache.record("delivery", "CHECK", slots, [{**one[0], "result": ok}]) is None
    plan = cache.record(
        "delivery", "CHECK", slots, [{**one[0], "result": ok}], min_steps=1, role="customer"
    )
    assert plan is not None and plan["key"] == "delivery|CHECK|notify,order_id|customer"
    assert cache.lookup("delivery", "CHECK", slots, "customer") == plan
    assert cache.lookup("delivery", "CHECK", slots, "agent") is None
    # "wechat" is not what the slots say: it came from the user's words, so it is not kept.
    worded = {"name": "send_notification", "parameters": {"order_id": slots["order_id"]}}
    worded["parameters"]["channel"] = "wechat"
    kept = {**worded, "parameters": {**worded["parameters"], "channel": "sms"}}
    assert cache.record("d", "C", slots, [{**worded, "result": ok}], min_steps=1) is not None
    strict = {"min_steps": 1, "constants": False}
    assert cache.record("d", "C", slots, [{**worded, "result": ok}], **strict) is None
    assert cache.record("d", "C", slots, [{**kept, "result": ok}], **strict)["steps"] == [
        {
            "name": "send_notification",
            "arguments": {"order_id": "$slots.order_id", "channel": "$slots.notify"},
        }
    ]


def test_plans_live_in_memory_unless_configured(tmp_path):
    assert isinstance(plan_cache(Settings(REACH_DATA_DIR=tmp_path)).store, MemoryKV)
    sqlite = Settings(REACH_DATA_DIR=tmp_path, REACH_PLAN_STORE="sqlite")
    assert isinstance(plan_cache(sqlite).store, SQLiteKV)
    assert plan_store_kind(Settings(REDIS_URL="redis://127.0.0.1:1/0")) == "redis"
    assert plan_cache(Settings(REACH_DATA_DIR=tmp_path, REACH_PLAN_CACHE="off")).enabled is False
    with pytest.raises(ValueError, match="REDIS_URL"):
        plan_cache(Settings(REACH_DATA_DIR=tmp_path, REACH_PLAN_STORE="redis"))
