"""ModelUnderstanding against a real HTTP server speaking the Chat Completions wire format."""

import json
from datetime import date

import pytest
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI

from contract.scenario import ScenarioSet
from planning.tool_calls import call_with_repair
from scenarios import SCENARIOS
from tests.fakes.openai_server import Scripted, label_logprobs
from tests.recognizer import recognizer
from understanding.chat import make_chat_model
from understanding.model_recognizer import ModelUnderstanding, options_from_scenarios


@pytest.fixture(autouse=True)
def fixed_today(monkeypatch):
    monkeypatch.setenv("REACH_TODAY", "2024-06-18")  # the rules' clock


def understanding(server, *, timeout_s=5.0, max_retries=0):
    llm = make_chat_model(
        model="fake-model",
        base_url=server.base_url,
        api_key="sk-test-not-a-secret",
        timeout_s=timeout_s,
        max_retries=max_retries,
    )
    return ModelUnderstanding(
        llm,
        options_from_scenarios(ScenarioSet(SCENARIOS)),
        recognizer(),
        today=lambda: date(2024, 6, 18),
    )


def intent_answer(intent, logprob=None, notify=False):
    content = json.dumps({"intent": intent, "notify": notify})
    tokens = label_logprobs(content, intent, logprob) if logprob is not None else None
    return Scripted(content=content, logprobs=tokens)


def test_intent_via_json_schema_with_bounded_request(openai_server):
    openai_server.push(intent_answer("CHECK_ORDER_STATUS", -0.05))
    result = understanding(openai_server).classify("我点的外卖都快一个半小时了还没送到")
    assert result.intent == "CHECK_ORDER_STATUS"
    assert result.source == "model" and result.error is None
    body = openai_server.requests[-1]
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["strict"] is True
    schema = body["response_format"]["json_schema"]["schema"]
    assert "UNKNOWN" in schema["properties"]["intent"]["enum"]
    assert body["max_completion_tokens"] == 512
    assert body["logprobs"] is True
    assert "外卖" in openai_server.last_prompt()


def test_logprob_of_the_label_sets_the_confidence(openai_server):
    mu = understanding(openai_server)
    openai_server.push(intent_answer("QUERY_SALES", -0.02), intent_answer("QUERY_SALES", -1.6))
    # a message the recognizer is unsure of (0.29), so the model's word carries it
    sure = mu.classify("这个月怎么样")
    unsure = mu.classify("这个月怎么样")
    assert sure.label_probability == pytest.approx(0.9802, abs=1e-3)
    assert unsure.label_probability == pytest.approx(0.2019, abs=1e-3)
    assert sure.confidence > 0.6 > unsure.confidence


def test_streaming_wire_format_is_understood(openai_server):
    openai_server.push(Scripted(content="您好，订单正在配送中。"))
    llm = ChatOpenAI(
        model="fake-model", base_url=openai_server.base_url, api_key="x", streaming=True
    )
    pieces = [chunk.content for chunk in llm.stream("hi")]
    assert "".join(pieces) == "您好，订单正在配送中。"
    assert openai_server.requests[-1]["stream"] is True


def test_http_500_falls_back_to_the_rules_and_says_why(openai_server):
    openai_server.push(Scripted(status=500, content="boom"))
    rules = recognizer().classify("帮我催一下单")
    result = understanding(openai_server).classify("帮我催一下单")
    assert result.source == "rules"
    assert result.intent == rules.intent == "URGE_DELIVERY"
    assert result.confidence < rules.confidence
    assert "500" in result.error


def test_timeout_falls_back_to_the_rules(openai_server):
    openai_server.push(Scripted(delay_s=30, content="{}"))
    result = understanding(openai_server, timeout_s=0.3).classify("北京今天天气怎么样")
    assert result.source == "rules"
    assert result.intent == "QUERY_WEATHER"
    assert "Timeout" in result.error


def test_invalid_output_falls_back(openai_server):
    openai_server.push(Scripted(content="I think you want a refund!"))
    result = understanding(openai_server).classify("我要退款")
    assert result.source == "rules" and result.intent == "REQUEST_REFUND"
    assert result.error.startswith("invalid output")


def test_an_intent_nobody_offered_is_refused(openai_server):
    openai_server.push(Scripted(content='{"intent": "DELETE_ACCOUNT", "notify": false}'))
    result = understanding(openai_server).classify("删掉我的账号")
    assert result.source == "rules"
    assert "DELETE_ACCOUNT" in result.error


def test_invented_order_id_is_refused(openai_server):
    mu = understanding(openai_server)
    openai_server.push(Scripted(content='{"order_id": "OD-20240618-001"}'))
    slots = mu.extract_slots("我要退款，东西坏了", "REQUEST_REFUND")
    assert "order_id" not in slots.slots
    assert slots.refused == {"order_id": "OD-20240618-001"}
    assert "退款" in openai_server.last_prompt()


def test_stated_values_the_rules_missed_are_taken(openai_server):
    mu = understanding(openai_server)
    slots = mu.extract_slots("帮我挂一个明天的皮肤科号", "BOOK_APPOINTMENT")
    # the rules find both here, so the model is not asked at all
    assert slots.slots == {"department": "皮肤科", "day": "2024-06-19"}
    assert openai_server.requests == []
    openai_server.push(Scripted(content=json.dumps({"department": None, "day": "2024-06-20"})))
    slots = mu.extract_slots("我想后天去看医生", "BOOK_APPOINTMENT")
    assert slots.slots == {"day": "2024-06-20"}
    assert slots.refused == {}


def test_invented_date_is_refused(openai_server):
    openai_server.push(Scripted(content=json.dumps({"department": None, "day": "2024-06-25"})))
    slots = understanding(openai_server).extract_slots("我想看医生", "BOOK_APPOINTMENT")
    assert slots.slots == {}
    assert slots.refused == {"day": "2024-06-25"}


def test_notification_flag_from_other_wordings(openai_server):
    mu = understanding(openai_server)
    openai_server.push(intent_answer("CHECK_ORDER_STATUS", -0.1, notify=True))
    text = "OD-20240618-001 送到的时候记得给我发条短信"
    result = mu.classify(text)
    assert result.intent == "CHECK_ORDER_STATUS"
    slots = mu.extract_slots(text, "CHECK_ORDER_STATUS")
    assert slots.slots["order_id"] == "OD-20240618-001"
    assert slots.slots["notify"]


def test_reconsider_keeps_a_rule_verified_answer_without_a_call(openai_server):
    result = understanding(openai_server).reconsider(
        "OD-20240618-001", pending_intent="REQUEST_REFUND", missing_slots=["order_id"]
    )
    assert result.intent == "REQUEST_REFUND"
    assert openai_server.requests == []


def test_reconsider_tells_the_model_what_is_pending(openai_server):
    openai_server.push(intent_answer("BOOK_FLIGHT", -0.1))
    understanding(openai_server).reconsider(
        "就那天吧", pending_intent="BOOK_FLIGHT", missing_slots=["departure_date"]
    )
    assert "departure_date" in openai_server.last_prompt()


def test_content_tool_call_over_the_wire_with_one_repair(openai_server):
    openai_server.push(
        Scripted(content='```json\n{"name": "query_order_status", "arguments": {}}\n```'),
        Scripted(content='{"name": "query_order_status", "arguments": {"order_id": "202506001"}}'),
    )
    llm = make_chat_model(
        model="fake-model", base_url=openai_server.base_url, api_key=None, logprobs=False
    )

    def validate(call):
        return None if call["parameters"].get("order_id") else "order_id: field required"

    outcome = call_with_repair(
        llm.invoke, [HumanMessage("查一下 202506001")], {"query_order_status"}, validate
    )
    assert [c["parameters"] for c in outcome.calls] == [{"order_id": "202506001"}]
    assert "field required" in openai_server.requests[1]["messages"][-1]["content"]


def test_native_parallel_tool_calls_over_the_wire(openai_server):
    openai_server.push(
        Scripted(
            tool_calls=[
                {"name": "query_order_status", "arguments": {"order_id": "202506001"}},
                {"name": "send_notification", "arguments": {"order_id": "202506001"}},
                {"name": "launch_missiles", "arguments": {}},
            ]
        )
    )
    llm = make_chat_model(
        model="fake-model", base_url=openai_server.base_url, api_key=None, logprobs=False
    )
    outcome = call_with_repair(
        llm.invoke,
        [HumanMessage("查一下，到了通知我")],
        {"query_order_status", "send_notification"},
        lambda call: None,
    )
    assert [c["name"] for c in outcome.calls] == ["query_order_status", "send_notification"]
    assert outcome.refused == ["unknown tool 'launch_missiles'"]


def test_mixed_mode_asks_the_model_only_when_the_rules_are_unsure(openai_server):
    llm = make_chat_model(model="fake-model", base_url=openai_server.base_url, api_key=None)
    mu = ModelUnderstanding(
        llm,
        options_from_scenarios(ScenarioSet(SCENARIOS)),
        recognizer(),
        consult_below=0.6,
    )
    sure = mu.classify("帮我催一下单，订单号 OD-20240618-001")
    assert sure.source == "rules" and sure.intent == "URGE_DELIVERY"
    assert openai_server.requests == []
    openai_server.push(intent_answer("BOOK_FLIGHT", -0.1))
    # The recognizer reads most flight phrasings itself; one it is unsure of (0.45) is
    # what sends the question to the model.
    unsure = mu.classify("我想去北京")
    assert unsure.source == "model" and unsure.intent == "BOOK_FLIGHT"
    assert len(openai_server.requests) == 1


def test_streamed_tool_calls_are_reassembled(openai_server):
    openai_server.push(
        Scripted(
            tool_calls=[
                {"name": "query_order_status", "arguments": {"order_id": "OD-20240618-001"}},
                {"name": "urge_delivery", "arguments": {"order_id": "OD-20240618-001"}},
            ]
        )
    )
    llm = ChatOpenAI(model="fake-model", base_url=openai_server.base_url, api_key="x")
    message = None
    for chunk in llm.stream("查一下再催一下 OD-20240618-001"):
        message = chunk if message is None else message + chunk
    assert [(c["name"], c["args"]) for c in message.tool_calls] == [
        ("query_order_status", {"order_id": "OD-20240618-001"}),
        ("urge_delivery", {"order_id": "OD-20240618-001"}),
    ]
