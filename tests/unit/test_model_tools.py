from langchain_core.messages import AIMessage

from planning.tool_calls import (
    call_with_repair,
    calls_from_message,
    check_calls,
    check_results,
    parse_content_calls,
)

KNOWN = {"query_order_status", "request_refund", "send_notification"}


def test_bare_object_with_name_and_arguments():
    calls, problems = parse_content_calls(
        '{"name": "query_order_status", "arguments": {"order_id": "OD-20240618-001"}}'
    )
    assert problems == []
    assert [(c["name"], c["parameters"]) for c in calls] == [
        ("query_order_status", {"order_id": "OD-20240618-001"})
    ]
    assert calls[0]["id"]


def test_fenced_list_with_tool_and_parameters_variant():
    content = (
        "Sure, I will do both:\n```json\n"
        '[{"tool": "query_order_status", "parameters": {"order_id": "202506001"}},\n'
        ' {"tool": "send_notification", "parameters": {"order_id": "202506001"}}]\n```'
    )
    calls, problems = parse_content_calls(content)
    assert problems == []
    assert [c["name"] for c in calls] == ["query_order_status", "send_notification"]
    assert len({c["id"] for c in calls}) == 2


def test_arguments_as_json_string_and_openai_function_shape():
    content = (
        '{"type": "function", "function": {"name": "request_refund", '
        '"arguments": "{\\"order_id\\": \\"202506001\\"}"}}'
    )
    calls, problems = parse_content_calls(content)
    assert problems == []
    assert calls[0]["name"] == "request_refund"
    assert calls[0]["parameters"] == {"order_id": "202506001"}


def test_prose_around_bare_json_and_broken_arguments():
    calls, problems = parse_content_calls(
        'I think {"name": "request_refund", "arguments": "{order_id: 1"} fits.'
    )
    assert calls == []
    assert problems and "not JSON" in problems[0]


def test_plain_prose_has_no_calls():
    assert parse_content_calls("您的订单正在配送中。") == ([], [])


def test_native_tool_calls_win_over_content():
    message = AIMessage(
        content='{"name": "request_refund", "arguments": {}}',
        tool_calls=[{"name": "query_order_status", "args": {"order_id": "1"}, "id": "call_a"}],
    )
    calls, _ = calls_from_message(message)
    assert [(c["id"], c["name"]) for c in calls] == [("call_a", "query_order_status")]


def test_unknown_tool_and_duplicate_id_refused():
    calls, _ = parse_content_calls(
        '[{"name": "query_order_status", "arguments": {}, "id": "x"},'
        ' {"name": "query_order_status", "arguments": {}, "id": "x"},'
        ' {"name": "delete_all_orders", "arguments": {}}]'
    )
    check = check_calls(calls, KNOWN)
    assert [c["id"] for c in check.accepted] == ["x"]
    assert any("duplicate tool_call_id" in r for r in check.refused)
    assert any("unknown tool 'delete_all_orders'" in r for r in check.refused)


def test_results_must_answer_issued_ids_once():
    ok, refused = check_results(["a", "b", "a", "zzz"], {"a", "b"})
    assert ok == ["a", "b"]
    assert refused == ["duplicate tool_call_id 'a'", "unknown tool_call_id 'zzz'"]


def _needs_order_id(call):
    value = call["parameters"].get("order_id")
    return None if isinstance(value, str) and value else "order_id: field required"


def test_malformed_arguments_go_back_once_with_the_error():
    answers = iter(
        [
            AIMessage(content='{"name": "query_order_status", "arguments": {"id": 1}}'),
            AIMessage(
                content='{"name": "query_order_status", "arguments": {"order_id": "202506001"}}'
            ),
        ]
    )
    seen = []

    def invoke(messages):
        seen.append(list(messages))
        return next(answers)

    outcome = call_with_repair(invoke, [("user", "查 202506001")], KNOWN, _needs_order_id)
    assert outcome.rounds == 2
    assert [c["parameters"] for c in outcome.calls] == [{"order_id": "202506001"}]
    assert outcome.refused == []
    assert "order_id: field required" in seen[1][-1].content


def test_still_malformed_after_one_repair_is_refused():
    bad = AIMessage(content='{"name": "query_order_status", "arguments": {}}')
    calls = []

    def invoke(messages):
        calls.append(1)
        return bad

    outcome = call_with_repair(invoke, [("user", "查订单")], KNOWN, _needs_order_id)
    assert len(calls) == 2
    assert outcome.calls == []
    assert outcome.refused == ["query_order_status: order_id: field required (after one repair)"]


def test_hallucinated_tool_is_refused_not_repaired():
    calls = []

    def invoke(messages):
        calls.append(1)
        return AIMessage(content='{"name": "refund_everything", "arguments": {}}')

    outcome = call_with_repair(invoke, [("user", "退款")], KNOWN, _needs_order_id)
    assert len(calls) == 1
    assert outcome.calls == []
    assert outcome.refused == ["unknown tool 'refund_everything'"]
