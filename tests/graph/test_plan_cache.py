"""Learned action plans on the compiled graph, with the planner behind a real HTTP model server.

Only the ``tool`` step uses the model here (``REACH_TOOL_MODEL``; understanding stays on the
rules), so every request the fake server receives is a planning call: counting them counts
what the plan cache saves. Every test asserts what reached the handlers and the cache.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.types import Command

from observability.audit import AuditLog, read_jsonl
from planning.plans import PlanCache
from tests.conftest import ALICE, BOB, fast_executor, say
from tests.fakes.openai_server import Scripted, openai_server  # noqa: F401 - the fixture
from tests.graph.model_script import content_call, recording
from tests.graph.test_model_in_the_loop import stages
from tests.helpers import default_registry, set_env


@pytest.fixture
def planner(monkeypatch, openai_server):  # noqa: F811 - the fixture imported above
    set_env(monkeypatch, "REACH_TOOL_MODEL", "fake-model")
    set_env(monkeypatch, "REACH_BASE_URL", openai_server.base_url)
    set_env(monkeypatch, "REACH_MODEL_MAX_RETRIES", "0")
    set_env(monkeypatch, "REACH_MODEL_TIMEOUT_S", "5")
    set_env(monkeypatch, "REACH_TODAY", "2024-06-18")
    return openai_server


@pytest.fixture
def handled() -> list[tuple[str, dict[str, Any]]]:
    return []


@pytest.fixture
def plans() -> PlanCache:
    return PlanCache()


@pytest.fixture
def app(make_app, planner, handled, plans):
    registry = default_registry()
    for name in ("query_order_status", "send_notification", "request_refund"):
        recording(registry, name, handled)
    return make_app(registry=registry, plan_cache=plans)


def status_plan(order_id: str) -> Scripted:
    return content_call("query_order_status", order_id=order_id)


def status_and_sms_plan(order_id: str) -> Scripted:
    """The model's plan: look the order up, then send an SMS about it."""
    return Scripted(
        tool_calls=[
            {"name": "query_order_status", "arguments": {"order_id": order_id}},
            {"name": "send_notification", "arguments": {"order_id": order_id, "channel": "sms"}},
        ]
    )


def planner_of(out: dict[str, Any]) -> dict[str, Any]:
    return stages(out, "slot_filling")[-1]["content"]["planner"]


def test_the_second_request_of_a_kind_skips_the_model(app, planner, handled, plans):
    planner.push(status_plan("OD-20240618-001"))
    first = say(app, "帮我查一下 OD-20240618-001 到哪了", thread="a")
    assert len(planner.requests) == 1
    assert planner_of(first)["source"] == "model"
    assert len(plans.plans()) == 1

    second = say(app, "OD-20240618-002 现在什么状态？", thread="b")
    assert len(planner.requests) == 1  # one model call fewer: the plan came from the cache
    assert planner_of(second)["source"] == "cache"
    assert planner_of(second)["plan"] == plans.plans()[0]["key"]
    assert second["tool_results"][-1]["status"] == "success"
    assert handled == [
        ("query_order_status", {"order_id": "OD-20240618-001"}),
        ("query_order_status", {"order_id": "OD-20240618-002"}),
    ]
    assert plans.plans()[0]["successes"] == 2


def test_no_slot_value_is_stored(app, planner, plans):
    planner.push(status_plan("OD-20240618-001"))
    say(app, "帮我查一下 OD-20240618-001 到哪了")
    stored = json.dumps(plans.plans(), ensure_ascii=False)
    assert plans.plans()[0]["steps"] == [
        {"name": "query_order_status", "arguments": {"order_id": "$slots.order_id"}}
    ]
    assert "OD-20240618-001" not in stored and "u_10001" not in stored


def test_a_cached_plan_for_a_foreign_order_is_refused_and_evicted(app, planner, handled, plans):
    planner.push(status_plan("OD-20240618-001"))
    say(app, "帮我查一下 OD-20240618-001 到哪了", thread="alice")
    assert len(plans.plans()) == 1

    # Bob asks about Alice's order: the plan fills from his slots, the executor refuses it
    # exactly as it refuses a model-planned call, and the failed plan is evicted.
    out = say(app, "OD-20240618-001 到哪了", thread="bob", context=BOB)
    assert planner_of(out)["source"] == "cache"
    assert len(planner.requests) == 1
    assert out["tool_results"][-1]["status"] != "success"
    assert out["tool_results"][-1]["error_type"] in ("not_found", "permission_denied")
    assert handled == [("query_order_status", {"order_id": "OD-20240618-001"})]  # not Bob's
    assert plans.plans() == []

    # So the next request of that kind asks the model again.
    planner.push(status_plan("OD-20240619-003"))
    again = say(app, "OD-20240619-003 到哪了", thread="bob2", context=BOB)
    assert len(planner.requests) == 2
    assert planner_of(again)["source"] == "model"
    assert again["tool_results"][-1]["status"] == "success"


def test_a_cached_plan_still_asks_for_confirmation(app, planner, handled, plans, db):
    planner.push(content_call("request_refund", order_id="OD-20240618-002"))
    say(app, "OD-20240618-002 我要退款", thread="r1")
    assert handled == []  # high risk: nothing ran before the yes
    app.invoke(Command(resume="确认"), {"configurable": {"thread_id": "r1"}}, context=ALICE)
    assert [(name, args["order_id"]) for name, args in handled] == [
        ("request_refund", "OD-20240618-002")
    ]
    assert len(plans.plans()) == 1

    out = say(app, "OD-20240618-001 退款", thread="r2")
    assert planner_of(out)["source"] == "cache"
    assert len(planner.requests) == 1
    assert app.get_state({"configurable": {"thread_id": "r2"}}).interrupts  # asked, not run
    assert len(handled) == 1
    out = app.invoke(Command(resume="不用了"), {"configurable": {"thread_id": "r2"}}, context=ALICE)
    assert len(handled) == 1
    assert len(plans.plans()) == 1  # the user's "no" is not the plan's failure


def test_a_side_effect_understanding_did_not_hear_is_refused_and_never_replayed(
    app, planner, handled, plans
):
    # The planner adds a notification understanding did not hear asked for: the executor
    # refuses it (not_requested), and the plan is not kept, or the next user of the same slot
    # shape would get a message unasked.
    planner.push(status_and_sms_plan("OD-20240618-001"))
    out = say(app, "OD-20240618-001 到哪了？")
    assert "notify" not in out["slots"]
    assert [name for name, _ in handled] == ["query_order_status"]
    refused = [r for r in out["tool_results"] if r["tool"] == "send_notification"]
    assert refused[0]["error_type"] == "not_requested"
    assert plans.plans() == []
    planner.push(status_plan("OD-20240618-002"))
    out = say(app, "OD-20240618-002 到哪了", thread="t2")
    assert len(planner.requests) == 2 and planner_of(out)["source"] == "model"


def test_the_cache_can_be_turned_off(make_app, planner, monkeypatch):
    set_env(monkeypatch, "REACH_PLAN_CACHE", "off")
    app = make_app()
    planner.push(status_plan("OD-20240618-001"), status_plan("OD-20240618-002"))
    say(app, "帮我查一下 OD-20240618-001 到哪了", thread="a")
    out = say(app, "OD-20240618-002 现在什么状态？", thread="b")
    assert len(planner.requests) == 2 and planner_of(out)["source"] == "model"


def test_the_trace_says_the_plan_came_from_the_cache(make_app, planner, tmp_path: Path):
    audit = AuditLog(tmp_path / "audit.jsonl")
    app = make_app(
        executor_factory=lambda registry: fast_executor(registry, audit=audit),
        plan_cache=PlanCache(),
    )
    planner.push(status_plan("OD-20240618-001"))
    say(app, "帮我查一下 OD-20240618-001 到哪了", thread="a")
    say(app, "OD-20240618-002 现在什么状态？", thread="b")
    audit.close()
    records = [r for r in read_jsonl(tmp_path / "audit.jsonl") if r.get("kind") == "arguments"]
    sources = [(r["session_id"], (r.get("planner") or {}).get("source")) for r in records]
    assert ("a", "model") in sources and ("b", "cache") in sources


def test_an_asked_for_notification_is_kept_as_a_slot_template(app, planner, handled, plans):
    # When the slots hold the request (the rules' cue "短信"), the extra call is the shape's.
    planner.push(status_and_sms_plan("OD-20240618-001"))
    say(app, "OD-20240618-001 到哪了？到了发短信告诉我")
    [plan] = plans.plans()
    assert plan["steps"][1] == {
        "name": "send_notification",
        "arguments": {"order_id": "$slots.order_id", "channel": "$slots.notify"},
    }
    out = say(app, "OD-20240618-002 到哪了？到了发短信告诉我", thread="t2")
    assert planner_of(out)["source"] == "cache" and len(planner.requests) == 1
    assert handled[-1] == ("send_notification", {"order_id": "OD-20240618-002", "channel": "sms"})


def test_a_refund_above_the_limit_from_a_cached_plan_goes_to_finance(app, planner, plans, db):
    planner.push(content_call("request_refund", order_id="OD-20240618-002"))
    say(app, "OD-20240618-002 我要退款", thread="small")
    app.invoke(Command(resume="确认"), {"configurable": {"thread_id": "small"}}, context=ALICE)
    assert len(plans.plans()) == 1

    say(app, "我要退款 202506001", thread="large")  # 129 yuan: finance must approve
    out = app.invoke(
        Command(resume="确认"), {"configurable": {"thread_id": "large"}}, context=ALICE
    )
    assert len(planner.requests) == 1  # planned from the cache
    steps = [(r["tool"], r["status"]) for r in out["tool_results"]]
    assert steps == [("request_refund", "failed"), ("approve_large_refund", "success")]
    assert db.query("SELECT status FROM refunds WHERE order_id = '202506001'") == [
        {"status": "approved"}
    ]
    assert len(plans.plans()) == 1  # a designed hand-over is not the plan's failure


def test_a_default_the_model_filled_in_is_left_out_and_a_stated_reason_is_not_kept(
    app, planner, plans
):
    planner.push(content_call("request_refund", order_id="OD-20240618-002", reason="用户申请退款"))
    say(app, "我要退款 OD-20240618-002", thread="d1")
    app.invoke(Command(resume="确认"), {"configurable": {"thread_id": "d1"}}, context=ALICE)
    [plan] = plans.plans()
    assert plan["steps"] == [
        {"name": "request_refund", "arguments": {"order_id": "$slots.order_id"}}
    ]
    plans.evict(plan["key"])

    planner.push(content_call("request_refund", order_id="OD-20240618-002", reason="菜全洒了"))
    say(app, "OD-20240618-002 菜全洒了，我要退款", thread="d2")
    app.invoke(Command(resume="确认"), {"configurable": {"thread_id": "d2"}}, context=ALICE)
    # the user's own words are the task's ``reason`` slot now (issue 38): the plan takes them
    # from the slot, never as a constant, so the next refund files its own reason
    [plan] = plans.plans()
    assert plan["steps"] == [
        {
            "name": "request_refund",
            "arguments": {"order_id": "$slots.order_id", "reason": "$slots.reason"},
        }
    ]
    assert "菜全洒了" not in str(plan)
