"""What agent-chat-ui sends, replayed against a real ``langgraph dev`` with ``langgraph-sdk``.

Every request is shaped like the front-end's (``/work/shared/design/frontends.md``): input
messages as content blocks, no run ``context``, the token as ``x-api-key``, resumes in
LangChain's ``{"decisions": [...]}`` shape, "Mark as resolved" as ``goto: "__end__"``, and a
typed answer as a new input message. Each test checks the business database itself: the
refund was made once, or not at all.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient

from config.settings import Settings
from security.tokens import issue_token
from tests.services.langgraph_server import TEST_AUTH_SECRET, langgraph_dev
from tests.unit.test_confirmation import agent_chat_ui_draws_buttons, hitl_adapters

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SETTINGS = Settings(REACH_AUTH_SECRET=TEST_AUTH_SECRET)
ALICE, BOB = "u_10001", "u_10002"
ORDER = "OD-20240618-002"  # Alice's, delivered, 36.00 yuan
OTHER = "OD-20240618-001"  # Alice's too, still being delivered
REFUND = f"订单 {ORDER} 送到了但是洒了，我要退款"


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("frontend-dev")


@pytest.fixture(scope="module")
def server(data_dir: Path):
    with langgraph_dev(data_dir) as url:
        yield url


@pytest.fixture
def alice(server: str) -> SyncLangGraphClient:
    return client_for(server, ALICE)


@pytest.fixture(autouse=True)
def no_refunds_yet(server: str, data_dir: Path) -> None:
    """Each test starts with no refund filed (one refundable order serves them all)."""
    with sqlite3.connect(data_dir / "business.db") as conn:
        conn.execute("DELETE FROM refunds")


def client_for(url: str, user_id: str) -> SyncLangGraphClient:
    """The SDK as agent-chat-ui configures it: the API-key field, sent as ``x-api-key``."""
    token = issue_token(user_id, "customer", 600, settings=SETTINGS)
    return get_sync_client(url=url, api_key=token)


def typed(text: str) -> dict[str, Any]:
    """An input message as agent-chat-ui sends it: content blocks, no ``context``."""
    return {"messages": [{"type": "human", "content": [{"type": "text", "text": text}]}]}


def refunds(data_dir: Path, order_id: str | None = None) -> list[tuple[str, str]]:
    """The refunds actually filed, from the business database the server writes."""
    with sqlite3.connect(data_dir / "business.db") as conn:
        rows = conn.execute("SELECT order_id, reason FROM refunds").fetchall()
    return [row for row in rows if order_id is None or row[0] == order_id]


def say(client: SyncLangGraphClient, thread_id: str, text: str) -> dict[str, Any]:
    return client.runs.wait(thread_id, "agent", input=typed(text))  # type: ignore[return-value]


def resume(client: SyncLangGraphClient, thread_id: str, command: dict[str, Any]) -> dict[str, Any]:
    """What the front-end's buttons send: ``input: {}`` and a command."""
    return client.runs.wait(thread_id, "agent", input={}, command=command)  # type: ignore[arg-type,return-value]


def interrupts(client: SyncLangGraphClient, thread_id: str) -> list[Any]:
    state = client.threads.get_state(thread_id)
    return [i["value"] for i in state.get("interrupts") or []]


def last_ai(state_values: dict[str, Any]) -> str:
    ai = [m for m in state_values["messages"] if m["type"] == "ai" and m["content"]]
    return str(ai[-1]["content"])


def ask_for_refund(client: SyncLangGraphClient) -> tuple[str, dict[str, Any]]:
    """Start a thread with the refund request; return it and the confirmation shown."""
    thread_id = client.threads.create()["thread_id"]
    say(client, thread_id, REFUND)
    values = interrupts(client, thread_id)
    assert len(values) == 1, values
    return thread_id, values[0]


# ---- the confirmation as the front-end draws it -------------------------------------------


def test_the_confirmation_is_a_hitl_request_under_an_ai_message(alice, data_dir):
    thread_id, value = ask_for_refund(alice)
    for adapter in hitl_adapters():
        adapter.validate_python(value)
    assert agent_chat_ui_draws_buttons(value)
    assert value["action_requests"][0]["name"] == "申请退款"  # the card's title: the task
    assert value["actions"][0]["tool"] == "request_refund"
    assert set(value["review_configs"][0]["allowed_decisions"]) >= {"approve", "reject"}
    messages = alice.threads.get_state(thread_id)["values"]["messages"]
    assert messages[-1]["type"] == "ai"  # the front-end draws the interrupt under it
    assert not messages[-1]["tool_calls"]  # no call announced: nothing to stand in for
    assert refunds(data_dir) == []  # asking did nothing


def test_approve_refunds_once(alice, data_dir):
    thread_id, _ = ask_for_refund(alice)
    out = resume(alice, thread_id, {"resume": {"decisions": [{"type": "approve"}]}})
    assert "退款" in last_ai(out) and "取消" not in last_ai(out)
    assert len(refunds(data_dir, ORDER)) == 1
    # the button pressed twice (a retried request): still one refund
    resume(alice, thread_id, {"resume": {"decisions": [{"type": "approve"}]}})
    assert len(refunds(data_dir, ORDER)) == 1
    assert interrupts(alice, thread_id) == []


def test_edit_refunds_with_the_edited_arguments(alice, data_dir):
    thread_id, value = ask_for_refund(alice)
    action = value["action_requests"][0]
    assert "edit" in value["review_configs"][0]["allowed_decisions"]
    edited = {"name": action["name"], "args": {**action["args"], "退款原因": "餐品洒漏"}}
    resume(alice, thread_id, {"resume": {"decisions": [{"type": "edit", "edited_action": edited}]}})
    assert refunds(data_dir, ORDER) == [(ORDER, "餐品洒漏")]


def test_reject_with_a_message_refunds_nothing(alice, data_dir):
    thread_id, _ = ask_for_refund(alice)
    out = resume(
        alice, thread_id, {"resume": {"decisions": [{"type": "reject", "message": "不退了"}]}}
    )
    assert "取消" in last_ai(out)
    assert refunds(data_dir) == [] and interrupts(alice, thread_id) == []


def test_a_wrong_count_of_decisions_changes_nothing_and_asks_again(alice, data_dir):
    thread_id, value = ask_for_refund(alice)
    twice = {"decisions": [{"type": "approve"}, {"type": "approve"}]}
    resume(alice, thread_id, {"resume": twice})
    assert refunds(data_dir) == []
    again = interrupts(alice, thread_id)
    assert again and again[0]["action_requests"] == value["action_requests"]


def test_typed_confirm_as_a_new_message_refunds_once(alice, data_dir):
    thread_id, _ = ask_for_refund(alice)
    out = say(alice, thread_id, "确认")
    assert "没太明白" not in last_ai(out)
    assert len(refunds(data_dir, ORDER)) == 1
    say(alice, thread_id, "确认")  # said again: nothing is waiting any more
    assert len(refunds(data_dir, ORDER)) == 1


STAND_IN = "Successfully handled tool call."


def stand_in_then(call_id: str, text: str) -> dict[str, Any]:
    """What agent-chat-ui sends when the user types at a pending confirmation: a made-up
    result for the pending call (``ensureToolCallsHaveResponses``), then the typed text."""
    return {
        "messages": [
            {
                "type": "tool",
                "tool_call_id": call_id,
                "id": "do-not-render-0b5c1c52-6b3e-4d1f-9a43-6f0c2f7e1a11",
                "name": "request_refund",
                "content": STAND_IN,
            },
            *typed(text)["messages"],
        ]
    }


def stored_messages(client: SyncLangGraphClient, thread_id: str) -> list[dict[str, Any]]:
    return list(client.threads.get_state(thread_id)["values"]["messages"])


@pytest.mark.parametrize("text", ["确认", f"不对，是订单 {OTHER}"])
def test_a_stand_in_tool_result_is_never_stored(alice, data_dir, text):
    """The exact payload agent-chat-ui sends before a typed answer: the stand-in is dropped
    at intake, the typed answer works as before, and the thread records no tool result the
    executor did not give."""
    thread_id, _ = ask_for_refund(alice)
    out = alice.runs.wait(thread_id, "agent", input=stand_in_then("call_feedfacecafebeef_0", text))
    stored = stored_messages(alice, thread_id)
    assert not any(STAND_IN in str(m.get("content")) for m in stored)
    assert not any(str(m.get("id", "")).startswith("do-not-render-") for m in stored)
    called = {c["id"] for m in stored if m["type"] == "ai" for c in m.get("tool_calls") or []}
    answered = [m["tool_call_id"] for m in stored if m["type"] == "tool"]
    assert set(answered) <= called and len(answered) == len(set(answered))
    if text == "确认":
        assert len(refunds(data_dir, ORDER)) == 1 and "退款" in last_ai(out)
    else:
        assert refunds(data_dir) == []
        (value,) = interrupts(alice, thread_id)
        assert value["action_requests"][0]["args"]["订单号"] == OTHER


def test_typed_correction_asks_again_about_the_corrected_order(alice, data_dir):
    thread_id, _ = ask_for_refund(alice)
    say(alice, thread_id, f"不对，是订单 {OTHER}")
    assert refunds(data_dir) == []  # a correction is not a yes
    values = interrupts(alice, thread_id)
    assert values and values[0]["action_requests"][0]["args"]["订单号"] == OTHER
    resume(alice, thread_id, {"resume": {"decisions": [{"type": "approve"}]}})
    assert [order for order, _ in refunds(data_dir)] == [OTHER]


def test_an_unrelated_request_keeps_the_refund_queued_unrun(alice, data_dir):
    thread_id, _ = ask_for_refund(alice)
    out = say(alice, thread_id, "帮我催一下单")
    texts = [str(m["content"]) for m in out["messages"] if m["type"] == "ai"]
    assert any("还在等您确认" in t and "没有执行" in t for t in texts)  # said so
    assert refunds(data_dir) == [] and interrupts(alice, thread_id) == []  # asks for the order
    say(alice, thread_id, "确认")  # no answer to anything: the refund waits behind the urge
    assert refunds(data_dir) == []


def test_a_status_question_about_another_order_keeps_the_refund_as_it_was(alice, data_dir):
    thread_id, _ = ask_for_refund(alice)
    out = say(alice, thread_id, f"{OTHER} 到哪了？")
    texts = [str(m["content"]) for m in out["messages"] if m["type"] == "ai"]
    assert any("配送中" in t for t in texts)  # the new question, answered first
    assert refunds(data_dir) == []
    (again,) = interrupts(alice, thread_id)  # then the refund is asked again, unchanged:
    assert again["action_requests"][0]["args"]["订单号"] == ORDER  # no corrected order id


def test_mark_as_resolved_is_a_rejection(alice, data_dir):
    thread_id, _ = ask_for_refund(alice)
    resume(alice, thread_id, {"goto": "__end__"})
    state = alice.threads.get_state(thread_id)
    assert refunds(data_dir) == [] and not state.get("interrupts")
    assert state["values"].get("awaiting") is None
    say(alice, thread_id, "确认")  # the question is closed: not read as its answer
    assert refunds(data_dir) == []


# ---- nothing tells "not yours" from "does not exist" --------------------------------------

_VARYING = re.compile(
    r'"(?:[a-z_]*_id|id|run_id|thread_id|checkpoint_id|ts|timestamp|'
    r'created_at|updated_at|latency_ms)": ("[^"]*"|[0-9.]+|null)'
)
_HASHES = re.compile(r"\b(?:call|req|key|run|task)_[0-9a-f]{8,}\b")
_UUIDS = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _scrub(value: Any, order_id: str) -> str:
    """Serialize, then drop ids and timings (random, or hashes of what the caller sent)."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    text = text.replace(order_id, "OD-X")
    text = _VARYING.sub(lambda m: m.group(0).split(":")[0] + ': "…"', text)
    return _UUIDS.sub("…", _HASHES.sub("…", text))


def _probe(client: SyncLangGraphClient, order_id: str) -> tuple[str, str]:
    """Ask about ``order_id``; return the final state and every stream event, scrubbed."""
    thread_id = client.threads.create()["thread_id"]
    events = [
        {"event": part.event, "data": part.data}
        for part in client.runs.stream(
            thread_id,
            "agent",
            input=typed(f"{order_id} 到哪了？"),
            stream_mode=["values", "updates", "messages-tuple", "custom"],
        )
        if part.event != "metadata"
    ]
    state = client.threads.get_state(thread_id)
    readable = {"values": state["values"], "next": state["next"], "tasks": state["tasks"]}
    return _scrub(readable, order_id), _scrub(events, order_id)


def test_another_users_order_reads_exactly_like_a_missing_one(server):
    bob = client_for(server, BOB)
    theirs_state, theirs_events = _probe(bob, "OD-20240618-001")  # Alice's
    missing_state, missing_events = _probe(bob, "OD-20240618-009")  # nobody's
    assert "not_found" in theirs_state and "owner_mismatch" not in theirs_state + theirs_events
    assert theirs_state == missing_state
    assert theirs_events == missing_events
