from __future__ import annotations

import httpx
import pytest
from langgraph_sdk import get_client

from config.settings import Settings
from security.tokens import issue_token
from storage.db import Database
from tests.services.langgraph_server import TEST_AUTH_SECRET, langgraph_dev

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def dev_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("langgraph-dev")


@pytest.fixture(scope="module")
def dev_server(dev_dir):
    with langgraph_dev(dev_dir) as url:
        yield url


def refunds(data_dir, order_id: str) -> list[dict]:
    """The refunds the served graph wrote to its business database."""
    database = Database(data_dir / "business.db")
    try:
        return database.query("SELECT user_id, reason FROM refunds WHERE order_id = ?", (order_id,))
    finally:
        database.close()


def chat_ui_input(text: str) -> dict:
    """An input message exactly as agent-chat-ui sends it: content blocks, no context."""
    return {"messages": [{"type": "human", "content": [{"type": "text", "text": text}]}]}


def token_for(user_id: str, role: str = "customer") -> str:
    """Sign a token the test server accepts."""
    return issue_token(user_id, role, 600, settings=Settings(REACH_AUTH_SECRET=TEST_AUTH_SECRET))


def client_for(url: str, user_id: str = "u_10001", role: str = "customer"):
    """A client authenticated as ``user_id``, the way agent-chat-ui does (x-api-key)."""
    return get_client(url=url, api_key=token_for(user_id, role))


async def test_a_thread_runs_through_the_langgraph_api(dev_server):
    client = client_for(dev_server)
    assistants = await client.assistants.search(graph_id="agent")
    assert assistants, "graph 'agent' from langgraph.json is served"
    thread = await client.threads.create()
    context = {"user_id": "u_10001", "user_role": "customer"}
    first = await client.runs.wait(
        thread["thread_id"],
        "agent",
        input={"messages": [{"role": "user", "content": "我的订单怎么还没到？"}]},
        context=context,
    )
    assert "订单号" in first["messages"][-1]["content"]
    second = await client.runs.wait(
        thread["thread_id"],
        "agent",
        input={"messages": [{"role": "user", "content": "OD-20240618-001"}]},
        context=context,
    )
    assert "配送中" in second["messages"][-1]["content"]
    assert {m["session_id"] for m in second["protocol"]} == {thread["thread_id"]}
    history = await client.threads.get_history(thread["thread_id"], limit=50)
    nodes = [h["metadata"].get("source") for h in history]
    assert len(history) >= 10 and "loop" in nodes
    assert history[-1]["next"] == ["__start__"]
    assert history[0]["next"] == []


async def pending_refund(client) -> str:
    """Start a refund of u_10001's delivered order; return the thread waiting to confirm."""
    thread = await client.threads.create()
    await client.runs.wait(
        thread["thread_id"], "agent", input=chat_ui_input("订单 OD-20240618-002 洒了，我要退款")
    )
    state = await client.threads.get_state(thread["thread_id"])
    assert state["next"] == ["tool"]
    interrupt_value = state["tasks"][0]["interrupts"][0]["value"]
    assert interrupt_value["type"] == "confirm_action"
    assert interrupt_value["action_requests"][0]["name"] == "申请退款"  # the task, not the tool
    assert interrupt_value["review_configs"][0]["action_name"] == "申请退款"
    assert interrupt_value["actions"][0]["tool"] == "request_refund"
    assert "request_id" not in str(interrupt_value)
    return thread["thread_id"]


async def test_chat_ui_reject_makes_no_refund(dev_server, dev_dir):
    client = client_for(dev_server)
    thread_id = await pending_refund(client)
    await client.runs.wait(
        thread_id,
        "agent",
        input={},
        command={"resume": {"decisions": [{"type": "reject", "message": "不退了"}]}},
    )
    assert refunds(dev_dir, "OD-20240618-002") == []


async def test_chat_ui_approve_makes_the_refund_once(dev_server, dev_dir):
    client = client_for(dev_server)
    thread_id = await pending_refund(client)
    done = await client.runs.wait(
        thread_id, "agent", input={}, command={"resume": {"decisions": [{"type": "approve"}]}}
    )
    assert "提交退款申请" in done["messages"][-1]["content"]
    made = refunds(dev_dir, "OD-20240618-002")
    assert [r["user_id"] for r in made] == ["u_10001"]


@pytest.mark.parametrize("resume", [None, [{"type": "approve"}], 7])
async def test_an_unreadable_resume_is_refused_and_the_refund_still_waits(
    dev_server, dev_dir, resume
):
    client = client_for(dev_server)
    thread_id = await pending_refund(client)
    before = refunds(dev_dir, "OD-20240618-002")  # the module's other tests may have made one
    async with httpx.AsyncClient(base_url=dev_server, timeout=30) as http:
        answer = await http.post(
            f"/threads/{thread_id}/runs/wait",
            json={"assistant_id": "agent", "command": {"resume": resume}},
            headers={"x-api-key": token_for("u_10001")},
        )
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"] == "unreadable_resume"
    assert "仍在等待" in answer.json()["detail"]
    state = await client.threads.get_state(thread_id)
    assert state["next"] == ["tool"]  # still waiting for the answer; nothing ran
    assert refunds(dev_dir, "OD-20240618-002") == before
    done = await client.runs.wait(
        thread_id, "agent", input={}, command={"resume": {"decisions": [{"type": "approve"}]}}
    )
    assert "退款" in done["messages"][-1]["content"]
    assert len(refunds(dev_dir, "OD-20240618-002")) == 1


async def _updates(client, thread_id: str, **run: object) -> list[tuple[str, dict]]:
    """Stream a run's ``updates``: (node, update) for each part, in order."""
    context = {"user_id": "u_10001", "user_role": "customer"}
    parts = []
    async for part in client.runs.stream(
        thread_id, "agent", stream_mode="updates", context=context, **run
    ):
        if part.event == "updates":
            assert len(part.data) == 1, f"one part, several nodes: {sorted(part.data)}"
            parts.extend((node, update) for node, update in part.data.items())
    return parts


async def test_each_node_streams_its_own_update_and_a_fork_after_intent_reruns_slots(
    dev_server, dev_dir
):
    client = client_for(dev_server)
    thread = (await client.threads.create())["thread_id"]
    said = {"messages": [{"role": "user", "content": "OD-20240618-001 到哪了"}]}
    parts = await _updates(client, thread, input=said)
    assert [node for node, _ in parts] == ["intent", "slot_filling", "tool", "reply"]
    assert "pending_tool_calls" in dict(parts)["slot_filling"]  # slot filling's own update

    # history: a checkpoint after each node; the one after intent is where to fork
    history = await client.threads.get_history(thread, limit=20)
    after_intent = next(h for h in history if h["next"] == ["slot_filling"])
    assert after_intent["values"]["intent"] == "CHECK_ORDER_STATUS"
    forked = await client.threads.update_state(
        thread,
        {"intent": "URGE_DELIVERY"},
        as_node="intent",
        checkpoint_id=after_intent["checkpoint"]["checkpoint_id"],
    )
    parts = await _updates(client, thread, input=None, checkpoint=forked["checkpoint"])
    assert [node for node, _ in parts] == ["slot_filling", "tool", "reply"]
    (call,) = dict(parts)["slot_filling"]["pending_tool_calls"]
    assert call["name"] == "urge_delivery"
    assert call["parameters"] == {"order_id": "OD-20240618-001"}
    state = await client.threads.get_state(thread)
    assert state["values"]["intent"] == "URGE_DELIVERY"
    assert "催" in state["values"]["messages"][-1]["content"]
    database = Database(dev_dir / "business.db")
    try:
        urges = database.query(
            "SELECT user_id FROM delivery_urges WHERE order_id = ?", ("OD-20240618-001",)
        )
    finally:
        database.close()
    assert urges == [{"user_id": "u_10001"}]
