"""The compiled graph with a model in the loop, over the real Chat Completions wire format.

The fake server (``tests.fakes.openai_server``) answers by request kind: understanding and
critique requests carry a ``json_schema`` response format named ``commands`` / ``critique``,
a planning request carries ``tools``, a reply request neither. Understanding is the one model
call a turn (``REACH_MODEL``); planning and critique run only where a test turns them on
(``REACH_TOOL_MODEL``, ``REACH_REFLECT_MODEL``). Every test asserts what reached the handlers
(a recording wrapper around the real ones) and the database.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from langgraph.types import Command

from planning.prompt_budget import DEFAULT_BUDGET, estimate_messages
from tests.conftest import ALICE, say
from tests.fakes.openai_server import Scripted
from tests.graph.model_script import CONFIG, command, commands, content_call, intent
from tests.helpers import default_registry, set_env
from tools.executor.errors import TransientToolError


@pytest.fixture
def planning(monkeypatch, model_env):
    """The tool step plans with the model too (opt in: it costs a second call)."""
    set_env(monkeypatch, "REACH_TOOL_MODEL", "fake-model")
    return model_env


def stages(out: dict[str, Any], stage: str) -> list[dict[str, Any]]:
    return [
        p
        for p in out["protocol"]
        if isinstance(p.get("content"), dict) and p["content"].get("stage") == stage
    ]


def refunds(db):
    return db.query("SELECT order_id, user_id, status FROM refunds")


def test_multi_turn_refund_driven_by_model_output(model_app, planning, db, handled):
    app = model_app()
    model_env = planning
    model_env.add(
        "commands",
        intent("REQUEST_REFUND"),
        commands(command("set", "REQUEST_REFUND", order_id="OD-20240618-002")),
    )
    model_env.add(
        "plan", content_call("request_refund", order_id="OD-20240618-002", reason="菜全洒了")
    )
    out = say(app, "收到的菜全洒了，这钱我不想花了")
    first = stages(out, "intent")[-1]
    assert first["content"]["intent"] == "REQUEST_REFUND"
    assert first["content"]["source"] == "model"
    assert "订单号" in out["messages"][-1].content  # asks for the order id, invents none
    out = say(app, "OD-20240618-002")
    assert app.get_state(CONFIG).interrupts and refunds(db) == []
    planner = stages(out, "slot_filling")[-1]["content"]["planner"]
    assert planner["source"] == "model" and planner["refused"] == []
    out = app.invoke(Command(resume="确认"), CONFIG, context=ALICE)
    assert refunds(db) == [
        {"order_id": "OD-20240618-002", "user_id": "u_10001", "status": "submitted"}
    ]
    assert handled == [("request_refund", {"order_id": "OD-20240618-002", "reason": "菜全洒了"})]
    assert db.query("SELECT reason FROM refunds")[0]["reason"] == "菜全洒了"


def test_an_asked_for_notification_runs_with_one_model_call(model_app, model_env, handled):
    app = model_app("query_order_status", "send_notification")
    model_env.add(
        "commands",
        intent("CHECK_ORDER_STATUS", order_id="OD-20240618-001", notify="yes"),
    )
    out = say(app, "OD-20240618-001 到哪了？送到的时候给我发个消息吧")
    assert [name for name, _ in handled] == ["query_order_status", "send_notification"]
    assert len(model_env.seen["commands"]) == 1 and not model_env.seen["plan"]
    assert stages(out, "intent")[-1]["content"]["source"] == "model"


def test_a_notification_nobody_asked_for_is_refused(model_app, planning, handled):
    app = model_app("query_order_status", "send_notification")
    planning.add("commands", intent("CHECK_ORDER_STATUS", order_id="OD-20240618-001", notify="yes"))
    planning.add(
        "plan",
        Scripted(
            tool_calls=[
                {"name": "query_order_status", "arguments": {"order_id": "OD-20240618-001"}},
                {
                    "name": "send_notification",
                    "arguments": {"order_id": "OD-20240618-001", "channel": "sms"},
                },
            ]
        ),
    )
    out = say(app, "OD-20240618-001 到哪了？")  # the model's notify flag: the user never said it
    assert [name for name, _ in handled] == ["query_order_status"]
    note = stages(out, "intent")[-1]["content"]
    assert note["refused"] == {"notify": "yes"}
    results = {r["tool"]: r.get("error_type") for r in out["tool_results"]}
    assert results == {"query_order_status": None, "send_notification": "not_requested"}
    assert "配送中" in out["messages"][-1].content


def test_parallel_calls_in_one_message_run_as_one_plan(model_app, planning, handled):
    app = model_app("query_order_status", "send_notification")
    model_env = planning
    model_env.add("commands", intent("CHECK_ORDER_STATUS", order_id="OD-20240618-001"))
    model_env.add(
        "plan",
        Scripted(
            tool_calls=[
                {"name": "query_order_status", "arguments": {"order_id": "OD-20240618-001"}},
                {
                    "name": "send_notification",
                    "arguments": {"order_id": "OD-20240618-001", "channel": "sms"},
                },
            ]
        ),
    )
    out = say(app, "OD-20240618-001 到哪了？送到的时候给我发个消息吧")
    assert sorted(name for name, _ in handled) == ["query_order_status", "send_notification"]
    assert {r["tool"]: r["status"] for r in out["tool_results"]} == {
        "query_order_status": "success",
        "send_notification": "success",
    }
    assert model_env.seen["plan"][0]["tools"][0]["function"]["name"] == "query_order_status"
    assert len(model_env.seen["plan"][0]["tools"]) <= 8


def test_malformed_arguments_go_back_once_and_the_repair_runs(model_app, planning, handled):
    app = model_app("query_order_status")
    model_env = planning
    model_env.add("commands", intent("CHECK_ORDER_STATUS"))
    model_env.add(
        "plan",
        Scripted(content='```json\n{"name": "query_order_status", "arguments": {"order": 1}}\n```'),
        content_call("query_order_status", order_id="OD-20240618-001"),
    )
    out = say(app, "帮我看看 OD-20240618-001 到哪了")
    assert len(model_env.seen["plan"]) == 2
    repair = model_env.seen["plan"][1]["messages"][-1]["content"]
    assert "could not be used" in repair and "order_id" in repair
    assert handled == [("query_order_status", {"order_id": "OD-20240618-001"})]
    assert stages(out, "slot_filling")[-1]["content"]["planner"]["rounds"] == 2


def test_a_hallucinated_tool_is_refused_and_the_rules_plan_runs(model_app, planning, handled):
    app = model_app("query_order_status")
    model_env = planning
    model_env.add("commands", intent("CHECK_ORDER_STATUS"))
    model_env.add(
        "plan",
        Scripted(
            tool_calls=[
                {"name": "query_order_status", "arguments": {"order_id": "OD-20240618-001"}},
                {"name": "delete_all_orders", "arguments": {}},
            ]
        ),
    )
    out = say(app, "帮我看看 OD-20240618-001 到哪了")
    note = stages(out, "slot_filling")[-1]
    assert note["content"]["planner"]["source"] == "rules"
    assert "unknown tool 'delete_all_orders'" in note["content"]["planner"]["refused"]
    assert "delete_all_orders" in note["error"]
    assert handled == [("query_order_status", {"order_id": "OD-20240618-001"})]
    assert [r["tool"] for r in out["tool_results"]] == ["query_order_status"]


def test_an_invented_order_id_never_reaches_a_handler(model_app, planning, db, handled):
    app = model_app()
    model_env = planning
    # turn 1: the model's command invents an id the user never said
    model_env.add(
        "commands",
        intent("REQUEST_REFUND", order_id="OD-20240618-001"),
        commands(command("set", "REQUEST_REFUND", order_id="OD-20240618-002")),
    )
    out = say(app, "我要退款，东西坏了")
    assert stages(out, "intent")[-1]["content"]["refused"] == {"order_id": "OD-20240618-001"}
    assert stages(out, "slot_filling")[-1]["content"]["missing"] == ["order_id"]
    # turn 2: the user names 002; the planner swaps in 001, which Alice also owns
    model_env.add("plan", content_call("request_refund", order_id="OD-20240618-001"))
    out = say(app, "OD-20240618-002")
    planner = stages(out, "slot_filling")[-1]["content"]["planner"]
    assert planner["source"] == "rules"
    assert any("never stated" in r and "OD-20240618-001" in r for r in planner["refused"])
    app.invoke(Command(resume="确认"), CONFIG, context=ALICE)
    assert [args["order_id"] for _, args in handled] == ["OD-20240618-002"]
    assert [r["order_id"] for r in refunds(db)] == ["OD-20240618-002"]


def test_endpoint_500_falls_back_to_the_rules_and_the_protocol_says_so(
    model_app, planning, handled
):
    app = model_app("query_order_status")
    model_env = planning
    model_env.defaults.update(
        commands=Scripted(status=500, content="boom"), plan=Scripted(status=503)
    )
    out = say(app, "OD-20240618-001 到哪了")
    note = stages(out, "intent")[-1]
    assert note["content"]["source"] == "rules" and "500" in note["error"]
    assert note["confidence"] < 0.99
    assert "503" in stages(out, "slot_filling")[-1]["error"]
    assert handled == [("query_order_status", {"order_id": "OD-20240618-001"})]
    assert "配送中" in out["messages"][-1].content


def test_a_timeout_falls_back_to_the_rules(model_app, model_env, monkeypatch, handled):
    set_env(monkeypatch, "REACH_MODEL_TIMEOUT_S", "0.3")
    app = model_app("query_order_status")
    model_env.defaults.update(
        commands=Scripted(delay_s=30, content="{}"), plan=Scripted(delay_s=30, content="")
    )
    out = say(app, "OD-20240618-001 到哪了")
    assert "Timeout" in stages(out, "intent")[-1]["error"]
    assert handled == [("query_order_status", {"order_id": "OD-20240618-001"})]
    assert "配送中" in out["messages"][-1].content


def test_a_run_can_switch_to_the_rules(model_app, model_env, handled):
    app = model_app("query_order_status")
    out = app.invoke(
        {"messages": [("user", "OD-20240618-001 到哪了")]},
        CONFIG,
        context=type(ALICE)(user_id=ALICE.user_id, user_role=ALICE.user_role, model="rules"),
    )
    assert model_env.seen == {}
    assert stages(out, "intent")[-1]["content"]["source"] == "rules"
    assert handled == [("query_order_status", {"order_id": "OD-20240618-001"})]


def test_the_prompt_stays_bounded_over_fifty_turns(model_app, planning, monkeypatch):
    set_env(monkeypatch, "REACH_PLAN_CACHE", "off")  # a learned plan would skip the planner
    app = model_app("query_order_status")
    model_env = planning
    model_env.defaults.update(
        commands=intent("CHECK_ORDER_STATUS", order_id="OD-20240618-001"),
        plan=content_call("query_order_status", order_id="OD-20240618-001"),
    )
    for turn in range(50):
        say(app, f"第{turn}次问：OD-20240618-001 到哪了？麻烦快点查一下，我等了很久了")
    sizes = [
        estimate_messages([(m["role"], str(m.get("content") or "")) for m in body["messages"]])
        for body in model_env.seen["plan"]
    ]
    assert len(sizes) == 50
    assert max(sizes) <= DEFAULT_BUDGET
    assert sizes[-1] <= sizes[25] + 20  # flat once the budget is reached
    last = model_env.seen["plan"][-1]["messages"]
    # 100 messages were said; old turns are trimmed (by the budget, or earlier by state compaction)
    assert len(last) < 40
    assert "第49次问" in last[-1]["content"] and "第0次问" not in json.dumps(
        last, ensure_ascii=False
    )
    understood = [
        len(json.dumps(body["messages"], ensure_ascii=False)) for body in model_env.seen["commands"]
    ]
    assert len(understood) == 50 and max(understood) - min(understood) < 200  # no history grows


def flaky_registry(handled, failures):
    """query_order_status fails transiently ``failures`` times (the executor retries 3)."""
    registry = default_registry()
    card = registry.get("query_order_status")

    def handler(args, ctx):
        handled.append(("query_order_status", args.model_dump()))
        if len(handled) <= failures:
            raise TransientToolError("upstream 503")
        return card.handler(args, ctx)

    registry.register(dataclasses.replace(card, handler=handler), replace_existing=True)
    return registry


def critique(action: str, **fields: Any) -> Scripted:
    body = {"cause": "the order service is down", "action": action, "tool": None}
    body["arguments"] = None
    body.update(fields)
    return Scripted(content=json.dumps(body))


@pytest.fixture
def critiquing(monkeypatch, planning):
    set_env(monkeypatch, "REACH_REFLECT_MODEL", "fake-model")
    return planning


def test_the_critique_can_give_up_and_hand_over(make_app, critiquing, handled):
    app = make_app(registry=flaky_registry(handled, failures=99))
    model_env = critiquing
    model_env.defaults.update(
        commands=intent("CHECK_ORDER_STATUS", order_id="OD-20240618-001"),
        plan=content_call("query_order_status", order_id="OD-20240618-001"),
    )
    model_env.add("critique", critique("give_up"))
    out = say(app, "OD-20240618-001 到哪了")
    note = stages(out, "reflect_refine")[-1]["content"]
    assert note["source"] == "model" and note["critique"] == "give_up"
    assert note["decision"] == "handoff"
    assert len(handled) == 3  # one executor round of attempts, no retry after giving up
    assert len(model_env.seen["critique"]) == 1


def test_a_critique_with_an_invented_id_is_refused_and_the_rules_retry(
    make_app, critiquing, handled
):
    app = make_app(registry=flaky_registry(handled, failures=3))
    model_env = critiquing
    model_env.defaults.update(
        commands=intent("CHECK_ORDER_STATUS", order_id="OD-20240618-001"),
        plan=content_call("query_order_status", order_id="OD-20240618-001"),
    )
    model_env.add(
        "critique", critique("fix_arguments", arguments='{"order_id": "OD-20240619-003"}')
    )
    out = say(app, "OD-20240618-001 到哪了")
    note = stages(out, "reflect_refine")[-1]
    assert note["content"]["source"] == "rules" and note["content"]["decision"] == "retry"
    assert "never stated" in note["error"]
    assert {args["order_id"] for _, args in handled} == {"OD-20240618-001"}
    assert "配送中" in out["messages"][-1].content


def test_a_model_sure_of_unknown_does_not_drop_the_pending_task(model_app, model_env, db):
    """Seen with the real model: a bare order id is UNKNOWN to it, with confidence 0.7."""
    app = model_app()
    model_env.add("commands", intent("REQUEST_REFUND"), intent("UNKNOWN", -0.01))
    say(app, "收到的菜全洒了，这钱我不想花了")
    out = say(app, "OD-20240618-002")
    assert stages(out, "intent")[-1]["content"]["continues_task"] is True
    assert app.get_state(CONFIG).interrupts
    app.invoke(Command(resume="确认"), CONFIG, context=ALICE)
    assert [r["order_id"] for r in refunds(db)] == ["OD-20240618-002"]


def test_a_request_the_model_left_out_of_a_two_request_message_still_runs(
    model_app, model_env, handled
):
    """Seen with the real model, one run in two: the appointment of this message dropped."""
    app = model_app("query_order_status")
    model_env.add("commands", intent("CHECK_ORDER_STATUS", order_id="OD-20240618-001"))
    out = say(app, "查下 OD-20240618-001，然后给我约个20号的儿科")
    assert handled == [("query_order_status", {"order_id": "OD-20240618-001"})]
    intents = [c["intent"] for c in stages(out, "intent")[-1]["content"]["commands"]]
    assert intents == ["CHECK_ORDER_STATUS", "BOOK_APPOINTMENT"]
    assert app.get_state(CONFIG).interrupts or "儿科" in out["messages"][-1].content
    assert len(model_env.seen["commands"]) == 1  # still one model call for the message


def test_one_request_the_model_reads_alone_is_not_doubled_by_the_rules(
    model_app, model_env, handled
):
    app = model_app("query_order_status")
    model_env.add("commands", intent("CHECK_ORDER_STATUS", order_id="OD-20240618-001"))
    out = say(app, "OD-20240618-001 到哪了")
    assert [c["intent"] for c in stages(out, "intent")[-1]["content"]["commands"]] == [
        "CHECK_ORDER_STATUS"
    ]


def test_a_hand_off_nobody_asked_for_does_not_replace_a_task_the_rules_are_sure_of(
    model_app, model_env
):
    """Seen with the real model: "挂个号" handed over to a person."""
    app = model_app()
    model_env.add("commands", commands(command("handoff")))
    out = say(app, "挂个号")
    intent = stages(out, "intent")[-1]["content"]
    assert intent["intent"] == "BOOK_APPOINTMENT" and "hand-off nobody asked for" in str(
        out["protocol"]
    )
    assert not any(p.get("handoff") for p in out["protocol"])
    assert len(model_env.seen["commands"]) == 1


def test_a_hand_off_the_rules_cannot_read_is_the_models(model_app, model_env):
    app = model_app()
    model_env.add("commands", commands(command("handoff")))
    out = say(app, "我需要有个活人来帮我看看这个问题")
    assert [p["handoff"]["to"] for p in out["protocol"] if p.get("handoff")] == ["human"]


def test_a_task_the_model_adds_that_nothing_in_the_message_names_is_dropped(model_app, model_env):
    """Seen with the real model: an order check with no order beside the weather asked for."""
    app = model_app()
    model_env.add("commands", intent("TRANSFER_MONEY", to_account="ACC-2001"))
    say(app, "转账给ACC-2001")
    model_env.add(
        "commands",
        commands(
            command("start", "QUERY_WEATHER", city="北京"), command("start", "CHECK_ORDER_STATUS")
        ),
    )
    out = say(app, "先帮我查下北京天气")
    intents = [c["intent"] for c in stages(out, "intent")[-1]["content"]["commands"]]
    assert intents == ["QUERY_WEATHER"]
    assert "订单号" not in out["messages"][-1].content


def test_mixed_mode_takes_the_rules_second_look_before_asking_the_model(
    model_app, model_env, db
):
    """Seen in mixed mode: "崔一下" (催 mistyped) sent to the model, which read a status check."""
    app = model_app("urge_delivery")
    mixed = dataclasses.replace(ALICE, model="mixed:fake-model")
    out = say(app, "帮我崔一下OD-20240618-001", context=mixed)
    assert model_env.seen["commands"] == []  # the homophone settles it: no model call
    assert [r["tool"] for r in out["tool_results"]] == ["urge_delivery"]
    assert db.query("SELECT order_id FROM delivery_urges") == [{"order_id": "OD-20240618-001"}]
