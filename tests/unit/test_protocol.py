from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from pydantic import ValidationError

from config.limits import json_bytes
from state import (
    MAX_PROTOCOL_BYTES,
    REFUSE_OVERSIZE,
    ProtocolMessage,
    ProtocolMessageTooLarge,
    ValidatedProtocol,
    append_protocol,
    merge_slots,
)
from tests.helpers import open_database


def make(**fields):
    base = {"role": "agent", "content": "ok", "session_id": "s1", "task_id": "t1"}
    return ProtocolMessage(**{**base, **fields})


def test_has_exactly_the_protocol_fields():
    assert set(ProtocolMessage.model_fields) == {
        "role",
        "content",
        "tool_calls",
        "session_id",
        "task_id",
        "parent_task_id",
        "confidence",
        "timestamp",
        "error",
        "user_role",
        "retry_count",
    }


def test_design_example_round_trips_through_json():
    wire = {
        "role": "agent",
        "content": {"status": "success", "slot": {"origin": "上海", "destination": "北京"}},
        "tool_calls": [{"name": "book_flight_ticket", "parameters": {"origin": "上海"}}],
        "session_id": "session_20240618123456",
        "task_id": "task_20240618123456_001",
        "confidence": 0.98,
        "timestamp": "2024-06-18T12:35:05Z",
        "error": None,
    }
    message = ProtocolMessage.model_validate(wire)
    again = ProtocolMessage.model_validate_json(message.to_json())
    assert again == message
    assert again.timestamp == "2024-06-18T12:35:05.000Z"
    assert again.tool_calls[0].parameters == {"origin": "上海"}


def test_unknown_fields_from_a_newer_peer_are_kept_and_passed_on():
    message = ProtocolMessage.model_validate(
        {"role": "agent", "content": "hi", "trace_span": "abc", "priority": {"level": 2}}
    )
    dumped = json.loads(message.to_json())
    assert dumped["trace_span"] == "abc"
    assert dumped["priority"] == {"level": 2}
    # and they survive the state reducer into a checkpoint
    stored = append_protocol([], message)
    assert stored[0]["trace_span"] == "abc"


@pytest.mark.parametrize(
    "bad",
    [
        {"role": "robot"},
        {"confidence": 1.5},
        {"confidence": -0.1},
        {"timestamp": "yesterday"},
        {"retry_count": -1},
    ],
)
def test_invalid_fields_get_a_clear_error(bad):
    with pytest.raises(ValidationError) as info:
        make(**bad)
    assert list(bad)[0] in str(info.value)


def test_naive_and_offset_timestamps_normalize_to_utc():
    assert make(timestamp="2024-06-18T20:35:00+08:00").timestamp == "2024-06-18T12:35:00.000Z"
    assert make(timestamp="2024-06-18T12:35:00").timestamp == "2024-06-18T12:35:00.000Z"


def test_id_card_and_phone_never_persist_in_full():
    message = make(
        role="user",
        content="乘客张三，身份证号110101199001011234，电话 13800138000",
        tool_calls=[
            {
                "id": "c1",
                "name": "book_flight_ticket",
                "parameters": {
                    "passenger_id": "110101199001011234",
                    "contact": {"phone": "+86 13912345678"},
                },
            }
        ],
        error="lookup failed for 110101199001011234",
        note_from_peer="call 13800138000",
    )
    text = message.to_json()
    assert "110101199001011234" not in text
    assert "13800138000" not in text
    assert "13912345678" not in text
    assert "110101********1234" in text
    assert "138****8000" in text
    assert message.tool_calls[0].parameters["passenger_id"] == "110101********1234"


def test_order_numbers_and_timestamps_are_not_mistaken_for_pii():
    message = make(content="订单 202506001 和 OD-20240618-001, session_20240618123456")
    assert message.content == "订单 202506001 和 OD-20240618-001, session_20240618123456"


def test_message_just_under_the_limit_is_accepted_and_over_is_cut_or_refused_on_request():
    overhead = make(content="").size_bytes()
    fits = make(content="a" * (MAX_PROTOCOL_BYTES - overhead))
    assert fits.size_bytes() == MAX_PROTOCOL_BYTES
    over = "a" * (MAX_PROTOCOL_BYTES - overhead + 1)
    cut = make(content=over)
    assert cut.size_bytes() <= MAX_PROTOCOL_BYTES
    assert f"[cut: {len(over)} bytes, sha256" in cut.content
    base = {"role": "agent", "session_id": "s1", "task_id": "t1"}
    with pytest.raises(ValidationError) as info:
        ProtocolMessage.model_validate({**base, "content": over}, context=REFUSE_OVERSIZE)
    assert "limit is 5120" in str(info.value)
    assert isinstance(info.value.errors()[0]["ctx"]["error"], ProtocolMessageTooLarge)


def test_large_payload_is_stored_by_reference(tmp_path):
    db = open_database(tmp_path / "b.db")
    big = {"rows": [{"i": i, "text": "数据" * 20} for i in range(200)]}
    message = ProtocolMessage.fit(db, role="tool", content=big, session_id="s", task_id="t")
    assert message.size_bytes() <= MAX_PROTOCOL_BYTES
    ref = message.content["$ref"]
    assert json.loads(db.get_payload(ref)) == big
    small = ProtocolMessage.fit(db, role="tool", content={"ok": 1})
    assert small.content == {"ok": 1}


def test_langchain_round_trip_ai_with_tool_calls():
    message = make(
        role="assistant",
        content="",
        tool_calls=[
            {"id": "call_1", "name": "query_order_status", "parameters": {"order_id": "202506001"}}
        ],
    )
    lc = message.to_langchain()
    assert isinstance(lc, AIMessage)
    assert lc.tool_calls[0]["id"] == "call_1"
    assert lc.tool_calls[0]["args"] == {"order_id": "202506001"}
    back = ProtocolMessage.from_langchain(lc)
    assert back.tool_calls == message.tool_calls
    assert back.session_id == "s1" and back.task_id == "t1"


def test_langchain_round_trip_tool_message():
    message = make(role="tool", content={"status": "success"}, tool_call_id="call_1")
    lc = message.to_langchain()
    assert isinstance(lc, ToolMessage)
    assert lc.tool_call_id == "call_1"
    back = ProtocolMessage.from_langchain(lc)
    assert back.role == "tool"
    assert back.content == {"status": "success"}
    assert back.tool_call_id == "call_1"


def test_langchain_user_and_agent_roles():
    assert isinstance(make(role="user").to_langchain(), HumanMessage)
    agent = make(role="agent").to_langchain()
    assert isinstance(agent, AIMessage) and agent.name == "agent"
    assert ProtocolMessage.from_langchain(agent).role == "agent"
    fresh = ProtocolMessage.from_langchain(HumanMessage("你好"), session_id="s9")
    assert fresh.role == "user" and fresh.session_id == "s9"


def test_openai_wire_format():
    call = make(
        role="assistant",
        content="",
        tool_calls=[
            {"id": "call_1", "name": "query_order_status", "parameters": {"order_id": "202506001"}}
        ],
    )
    wire = call.to_openai()
    assert wire == {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {
                    "name": "query_order_status",
                    "arguments": '{"order_id": "202506001"}',
                },
            }
        ],
    }
    assert ProtocolMessage.from_openai(wire).tool_calls == call.tool_calls
    tool = make(role="tool", content={"ok": True}, tool_call_id="call_1").to_openai()
    assert tool == {"role": "tool", "tool_call_id": "call_1", "content": '{"ok": true}'}
    assert ProtocolMessage.from_openai(tool).content == {"ok": True}
    assert make(role="agent").to_openai()["name"] == "agent"


def test_reducers():
    assert merge_slots({"a": 1, "b": 2}, {"b": 3, "a": None}) == {"b": 3}
    stored = append_protocol([{"role": "user", "content": "x"}], [make(), {"role": "tool"}])
    assert [m["role"] for m in stored] == ["user", "agent", "tool"]
    with pytest.raises(ValidationError):
        append_protocol([], {"role": "nobody"})


def test_a_validated_message_carries_the_size_validation_measured():
    message = ProtocolMessage(role="agent", content={"stage": "intent", "note": "好的" * 40})
    validated = message.validated()
    assert isinstance(validated, ValidatedProtocol)
    assert validated == message.model_dump(mode="json")
    assert validated.size == json_bytes(validated) == message.size_bytes()
    again = message.validated()  # the measured dump is taken once; later ones dump afresh
    assert again == validated and again is not validated and again.size == validated.size


def test_a_timestamp_already_in_canonical_form_is_kept_and_others_are_converted():
    kept = ProtocolMessage(role="user", content="x", timestamp="2026-12-01T20:10:00.123Z")
    assert kept.timestamp == "2026-12-01T20:10:00.123Z"
    moved = ProtocolMessage(role="user", content="x", timestamp="2026-12-01T22:10:00+02:00")
    assert moved.timestamp == "2026-12-01T20:10:00.000Z"
