"""Served runs take identity from the authenticated user; Python callers from Context."""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from nodes.common import context_of
from state import Context
from tests.conftest import ALICE, BOB


class Seen(TypedDict, total=False):
    user_id: str
    user_role: str
    model: str


def probe() -> Any:
    """A one-node graph reporting what ``context_of`` sees."""

    def look(state: Seen, runtime: Runtime[Context]) -> Seen:
        context = context_of(runtime)
        return {"user_id": context.user_id, "user_role": context.user_role, "model": context.model}

    builder = StateGraph(Seen, context_schema=Context)
    builder.add_node("look", look)
    builder.add_edge(START, "look")
    builder.add_edge("look", END)
    return builder.compile()


class ServerUser:
    """Shaped like the server's user proxy: an ``identity`` attribute and dict-style fields."""

    def __init__(self, identity: str, role: str) -> None:
        self.identity = identity
        self._fields = {"identity": identity, "role": role}

    def get(self, key: str, default: Any = None) -> Any:
        return self._fields.get(key, default)


def served(user: Any) -> dict[str, Any]:
    return {"configurable": {"langgraph_auth_user": user, "langgraph_auth_user_id": "ignored"}}


def test_authenticated_user_wins_over_the_clients_context():
    seen = probe().invoke(
        {},
        served(ServerUser("u_10002", "customer")),
        context={"user_id": "u_10001", "user_role": "admin", "model": "rules"},
    )
    assert (seen["user_id"], seen["user_role"]) == ("u_10002", "customer")
    assert seen["model"] == "rules", "non-identity settings still come from the context"


def test_a_stored_user_dict_works_too():
    seen = probe().invoke(
        {}, served({"identity": "u_90001", "role": "agent"}), context={"user_id": "u_10001"}
    )
    assert (seen["user_id"], seen["user_role"]) == ("u_90001", "agent")


def test_an_unknown_role_from_the_server_is_a_customer():
    seen = probe().invoke({}, served(ServerUser("u_1", "root")), context=Context(user_role="admin"))
    assert (seen["user_id"], seen["user_role"]) == ("u_1", "customer")


def test_python_callers_keep_passing_context():
    seen = probe().invoke({}, context=Context(user_id="u_10001", user_role="agent"))
    assert (seen["user_id"], seen["user_role"]) == ("u_10001", "agent")
    assert probe().invoke({}, context={"user_id": "u_10002"})["user_id"] == "u_10002"


def test_outside_a_run_there_is_no_authenticated_user():
    assert context_of(None) == Context()


def test_the_agent_answers_for_the_authenticated_user_not_the_context(make_app):
    app = make_app()
    text = {"messages": [("user", "OD-20240618-001 到哪了？")]}  # u_10001's order
    as_bob: dict[str, Any] = {
        "configurable": {
            "thread_id": "t-bob",
            **served(ServerUser("u_10002", "customer"))["configurable"],
        }
    }
    out = app.invoke(text, as_bob, context=ALICE)  # claims to be u_10001
    assert "没有找到" in out["messages"][-1].content
    assert out["tool_results"][-1]["error_type"] == "not_found"
    as_alice = {
        "configurable": {
            "thread_id": "t-alice",
            **served(ServerUser("u_10001", "customer"))["configurable"],
        }
    }
    mine = app.invoke(text, as_alice, context=BOB)
    assert "配送中" in mine["messages"][-1].content
