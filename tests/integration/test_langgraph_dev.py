from __future__ import annotations

import pytest
from langgraph_sdk import get_client

from tests.services.langgraph_server import TEST_AUTH_SECRET, langgraph_dev
from tools.settings import Settings
from tools.tokens import issue_token

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def dev_server(tmp_path_factory):
    with langgraph_dev(tmp_path_factory.mktemp("langgraph-dev")) as url:
        yield url


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


async def test_a_confirmation_round_trip_through_the_api(dev_server):
    client = client_for(dev_server)
    thread = await client.threads.create()
    context = {"user_id": "u_10001", "user_role": "customer"}
    await client.runs.wait(
        thread["thread_id"],
        "agent",
        input={"messages": [{"role": "user", "content": "我要退款 OD-20240618-002"}]},
        context=context,
    )
    state = await client.threads.get_state(thread["thread_id"])
    assert state["next"] == ["tool"]
    interrupt_value = state["tasks"][0]["interrupts"][0]["value"]
    assert interrupt_value["type"] == "confirm_action"
    assert interrupt_value["action_requests"][0]["name"] == "request_refund"
    assert interrupt_value["review_configs"][0]["action_name"] == "request_refund"
    done = await client.runs.wait(
        thread["thread_id"],
        "agent",
        command={"resume": {"decision": "approve"}},
        context=context,
    )
    assert "提交退款申请" in done["messages"][-1]["content"]
