from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from langgraph_sdk import get_client

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def dev_server(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("langgraph-dev")
    port = free_port()
    langgraph = Path(sys.executable).parent / "langgraph"
    env = {**os.environ, "REACH_DATA_DIR": str(tmp_path), "LANGGRAPH_CLI_NO_ANALYTICS": "1"}
    log = (tmp_path / "dev.log").open("w")
    proc = subprocess.Popen(
        [
            str(langgraph),
            "dev",
            "--no-browser",
            "--no-reload",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"langgraph dev exited: {(tmp_path / 'dev.log').read_text()[-2000:]}")
        try:
            if httpx.get(f"{url}/ok", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("langgraph dev did not start within 90 s")
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


async def test_a_thread_runs_through_the_langgraph_api(dev_server):
    client = get_client(url=dev_server)
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
    client = get_client(url=dev_server)
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
    done = await client.runs.wait(
        thread["thread_id"],
        "agent",
        command={"resume": {"decision": "approve"}},
        context=context,
    )
    assert "提交退款申请" in done["messages"][-1]["content"]
