"""The model's critique of a failed step and its phrasing of a reply, over the wire format."""

from __future__ import annotations

import json
from datetime import date

from nodes.services import Services
from planning.critique import critique_failure
from planning.model_reply import phrase_reply
from planning.planner import evidence_names, scenario_cards
from planning.prompt_budget import estimate_messages
from scenarios import SCENARIOS
from tests.fakes.openai_server import Scripted
from understanding.chat import make_chat_model

FAILED = {
    "tool": "query_order_status",
    "status": "error",
    "error_type": "upstream_unavailable",
    "retryable": True,
    "summary": "order service timed out",
    "data": {"secret": "never in a prompt"},
}
CALL = {"id": "c1", "name": "query_order_status", "parameters": {"order_id": "OD-20240618-001"}}


def llm(server, **options):
    return make_chat_model(
        model="fake-model", base_url=server.base_url, api_key=None, max_retries=0, **options
    )


def critique(server, answer, texts=("OD-20240618-001 到哪了",)):
    server.push(answer)
    services = Services(scenarios=SCENARIOS)
    task = services.catalog.task("CHECK_ORDER_STATUS")
    return critique_failure(
        llm(server),
        failed=FAILED,
        call=CALL,
        cards=scenario_cards(services.tools, services.catalog, task, "customer"),
        goal="CHECK_ORDER_STATUS",
        slots={"order_id": "OD-20240618-001"},
        user_texts=list(texts),
        task_id="t",
        checked=evidence_names(services.catalog, task),
        today=date(2024, 6, 18),
    )


def answer(action, tool=None, arguments=None, cause="the order service timed out"):
    body = {"cause": cause, "action": action, "tool": tool, "arguments": arguments}
    return Scripted(content=json.dumps(body))


def test_critique_is_structured_and_sees_summaries_only(openai_server):
    result = critique(openai_server, answer("give_up"))
    assert result.action == "give_up" and result.error is None
    body = openai_server.requests[-1]
    assert body["response_format"]["json_schema"]["name"] == "critique"
    prompt = openai_server.last_prompt()
    assert "order service timed out" in prompt and "never in a prompt" not in prompt


def test_fixed_arguments_are_validated_and_evidenced(openai_server):
    fixed = critique(
        openai_server,
        answer("fix_arguments", arguments=json.dumps({"order_id": "OD-20240618-001"})),
    )
    assert fixed.action == "fix_arguments"
    assert fixed.calls[0]["parameters"] == {"order_id": "OD-20240618-001"}
    invented = critique(
        openai_server,
        answer("fix_arguments", arguments=json.dumps({"order_id": "OD-20240618-003"})),
    )
    assert invented.action is None and "never stated" in invented.error
    unknown = critique(openai_server, answer("other_tool", tool="drop_tables", arguments="{}"))
    assert unknown.action is None and "unknown tool" in unknown.error


def test_a_bad_critique_leaves_the_rules_in_charge(openai_server):
    assert critique(openai_server, Scripted(content="just retry I guess")).action is None
    failed = critique(openai_server, Scripted(status=502))
    assert failed.action is None and "502" in failed.error


def test_a_reply_is_phrased_only_from_the_results(openai_server):
    draft = "订单 OD-20240618-001 正在配送中，预计 12:30 送达。"
    results = [{"tool": "query_order_status", "status": "success", "summary": "delivering"}]
    openai_server.push(Scripted(content="您好！您的订单 OD-20240618-001 还在路上，预计 12:30 到。"))
    text, error = phrase_reply(
        llm(openai_server, logprobs=False),
        draft=draft,
        results=results,
        goal="CHECK_ORDER_STATUS",
        language="zh",
        turns=[("user", "到哪了")],
    )
    assert error is None and text.startswith("您好")
    openai_server.push(Scripted(content="您的订单预计 13:45 送达，并补偿 20 元。"))
    text, error = phrase_reply(
        llm(openai_server, logprobs=False),
        draft=draft,
        results=results,
        goal="CHECK_ORDER_STATUS",
        language="zh",
        turns=[],
    )
    assert text == draft and "13:45" in error


def test_a_long_thread_keeps_the_reply_prompt_bounded(openai_server):
    turns = [("user" if i % 2 == 0 else "assistant", "我的订单到哪了？" * 20) for i in range(100)]
    openai_server.push(Scripted(content="好的。"))
    phrase_reply(
        llm(openai_server, logprobs=False),
        draft="好的。",
        results=[],
        goal="CHECK_ORDER_STATUS",
        language="zh",
        turns=turns,
        budget=800,
    )
    body = openai_server.requests[-1]
    assert estimate_messages([(m["role"], m["content"]) for m in body["messages"]]) <= 800
