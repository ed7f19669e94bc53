"""The compiled graph as a τ² agent, run by τ²'s own orchestrator, user simulator and evaluator.

τ²'s ``mock`` domain (a task list: ``create_task`` writes, ``get_users`` reads) with a
scripted OpenAI-compatible server in place of the model, for the graph's command generator
and for τ²'s user simulator alike (told apart by the structured-output request). The write
goes out only after the simulated user's "yes" to the confirmation question; a "no" leaves
the database as it was; τ²'s evaluator scores what the trajectory did.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, Scripted

pytestmark = pytest.mark.integration
pytest.importorskip("tau2", reason="τ²-bench is the optional group: uv sync --group tau2")

from bench.tau2.metrics import figures  # noqa: E402 - after the skip
from bench.tau2.runner import Endpoint, register_reach_agent  # noqa: E402

REQUEST = "Please create a task called 'Important Meeting' for user_1."
CREATE = {
    "commands": [
        {
            "kind": "start",
            "tool": "create_task",
            "arguments": [
                {"name": "user_id", "value": "user_1"},
                {"name": "title", "value": "Important Meeting"},
            ],
        }
    ]
}


def script(server: FakeOpenAIServer, user_turns: list[str]) -> list[str]:
    """The graph's model always reads the request; the simulated user says ``user_turns``."""
    said = list(user_turns)
    seen: list[str] = []

    def answer(body: dict[str, Any]) -> Scripted | None:
        if body.get("response_format"):  # the graph's one structured call
            return Scripted(content=json.dumps(CREATE))
        seen.append(str(body["messages"][-1].get("content")))  # what the user was told
        return Scripted(content=said.pop(0) if said else "###STOP###")

    server.match(answer)
    return seen


def simulate(server: FakeOpenAIServer) -> Any:
    from tau2.run import get_tasks, run_task  # noqa: PLC0415 - after the skip

    register_reach_agent()
    task = next(t for t in get_tasks("mock") if t.id == "create_task_1")
    endpoint = Endpoint("fake-model", server.base_url, "test")
    simulation = run_task(
        domain="mock",
        task=task,
        agent="agent_reach",
        user="user_simulator",
        llm_agent=endpoint.litellm_name,
        llm_args_agent=endpoint.llm_args(),
        llm_user=endpoint.litellm_name,
        llm_args_user=endpoint.llm_args(),
        max_steps=20,
        seed=300,
    )
    return simulation, task


def calls(simulation: Any) -> list[str]:
    return [
        c.name for m in simulation.messages if m.role == "assistant" for c in m.tool_calls or []
    ]


def test_a_write_goes_out_after_the_simulated_users_yes_and_tau2_scores_it(openai_server):
    told = script(openai_server, [REQUEST, "yes"])
    simulation, task = simulate(openai_server)
    assert calls(simulation) == ["create_task"]
    # asked first, in words: what will happen and the title, never the tool's name (issue 38)
    asked = [t for t in told if "Important Meeting" in t and "yes" in t]
    assert asked and "Create a new task" in asked[0]
    assert not any("create_task" in t or "=" in t for t in told)
    assert simulation.reward_info.reward == 1.0  # τ²'s evaluator: the database matches
    counted = figures(simulation, task, {"create_task", "update_task_status"}.__contains__, 0)
    assert (counted.writes, counted.unconfirmed_writes, counted.off_gold_writes) == (1, 0, 0)


def test_a_no_from_the_simulated_user_sends_nothing(openai_server):
    script(openai_server, [REQUEST, "no"])
    simulation, _ = simulate(openai_server)
    assert calls(simulation) == []
    assert simulation.reward_info.reward == 0.0


def test_the_probe_counts_the_tasks_where_the_simulated_user_left_its_role(openai_server):
    from bench.tau2.probe import probe_user  # noqa: PLC0415 - after the skip

    replies = iter(["Hello! How can I assist you today?", REQUEST, "I'm just a computer program."])
    openai_server.match(lambda body: Scripted(content=next(replies)))
    found = probe_user("mock", None, Endpoint("fake-model", openai_server.base_url, "t"), tasks=3)
    assert (found["tasks"], found["in_role"], found["role_broken"]) == (3, 1, 2)
    assert [f["role_broken"] for f in found["first_messages"].values()] == [True, False, True]


def test_the_primed_user_opens_with_the_tasks_reason_then_the_simulator_speaks(openai_server):
    from tau2.data_model.message import AssistantMessage  # noqa: PLC0415 - after the skip
    from tau2.run import get_tasks  # noqa: PLC0415

    from bench.tau2.primed import PrimedUser, opening  # noqa: PLC0415

    task = next(t for t in get_tasks("retail", "test") if t.id == "5")
    first = opening(str(task.user_scenario))
    assert first == (
        "Hi! I want to exchange the water bottle and the desk lamp. "
        "I am mei_kovacs_8020 in zipcode 28236."
    )
    openai_server.push(Scripted(content="It is the bigger bottle I want."))
    endpoint = Endpoint("fake-model", openai_server.base_url, "t")
    user = PrimedUser(
        tools=None,
        instructions=str(task.user_scenario),
        llm=endpoint.litellm_name,
        llm_args=endpoint.llm_args(),
    )
    state = user.get_init_state()
    said, state = user.generate_next_message(
        AssistantMessage(role="assistant", content="Hi! How can I help you today?"), state
    )
    assert said.content == first and openai_server.requests == []
    said, state = user.generate_next_message(
        AssistantMessage(role="assistant", content="Which bottle?"), state
    )
    assert said.content == "It is the bigger bottle I want."
    sent = openai_server.requests[0]["messages"]
    assert sent[-2]["content"] == first  # the simulator sees its opening as its own words


def test_a_call_left_unanswered_when_the_conversation_stops_is_released(openai_server):
    """τ² may stop (its step limit) while a call it was sent waits for an answer.

    The executor's worker thread waited ``TURN_TIMEOUT_S`` for it and held the interpreter's
    exit that long: 15 idle minutes at the end of CI's real-model tier.
    """
    from pydantic import BaseModel  # noqa: PLC0415
    from tau2.data_model.message import UserMessage  # noqa: PLC0415 - after the skip
    from tau2.domains.mock.environment import get_environment  # noqa: PLC0415

    from bench.tau2.agent import GraphStopped, ReachAgent  # noqa: PLC0415

    read = {"commands": [{"kind": "start", "tool": "get_users", "arguments": []}]}
    openai_server.match(lambda body: Scripted(content=json.dumps(read)))
    environment = get_environment()
    endpoint = Endpoint("fake-model", openai_server.base_url, "test")
    agent = ReachAgent(
        tools=environment.get_tools(),
        domain_policy=environment.get_policy(),
        llm=endpoint.litellm_name,
        llm_args=endpoint.llm_args(),
    )
    state = agent.get_init_state()
    sent, state = agent.generate_next_message(
        UserMessage(role="user", content="Who are the users?"), state
    )
    assert [c.name for c in sent.tool_calls or []] == ["get_users"]  # out to τ², unanswered
    worker = agent._worker
    assert worker is not None and worker.is_alive()
    agent.stop()  # what τ²'s orchestrator calls when the simulation ends
    assert not worker.is_alive()  # the turn finished: no thread waits on τ² any more
    with pytest.raises(GraphStopped):
        agent.bridge.invoke("get_users", type("NoArguments", (BaseModel,), {})())  # refused
