"""The turns ``make bench`` compares: bare LangGraph, skeletons of our graph, and ours.

- ``bare_graph``: a minimal ReAct turn (fake model → ``ToolNode`` → fake model).
- ``skeleton_graph``: our state and our supersteps with nodes that do no work, the framework's
  floor for our graph; with ``steps=2`` the shape of an earlier round, where slot filling ran
  in the intent node's superstep and the reply in the tool node's.
- ``untraced``: our graph without the trace callbacks.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from config.settings import Settings  # noqa: E402
from graph.builder import make_builder  # noqa: E402
from graph.checkpoint.compress import protect  # noqa: E402
from nodes.services import Services  # noqa: E402
from scenarios import SCENARIOS  # noqa: E402
from state import AgentState, Context, Overwrite  # noqa: E402
from storage.db import Database  # noqa: E402

ALICE = Context(user_id="u_10001", user_role="customer")
MESSAGE = "OD-20240618-001 到哪了"


def bare_graph(db: Database) -> Any:
    """A minimal ReAct turn: fake model asks for the tool, ToolNode runs it, fake model answers.

    The tool reads the same order from the same SQLite database as ours does, so the two
    turns do the same useful work.
    """

    @tool
    def query_order_status(order_id: str) -> dict[str, Any]:
        """Return an order's status."""
        row = db.query_one("SELECT * FROM orders WHERE order_id = ?", (order_id,))
        return dict(row) if row else {"error": "not found"}

    def model(state: MessagesState) -> dict[str, Any]:
        last = state["messages"][-1]
        if isinstance(last, HumanMessage):
            order = str(last.content).split()[0]
            call = {
                "id": f"call_{len(state['messages'])}",
                "name": "query_order_status",
                "args": {"order_id": order},
                "type": "tool_call",
            }
            return {"messages": [AIMessage(content="", tool_calls=[call])]}
        assert isinstance(last, ToolMessage)
        return {"messages": [AIMessage(content=f"您的订单状态：{str(last.content)[:40]}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", model)
    builder.add_node("tools", ToolNode([query_order_status]))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition, ["tools", END])
    builder.add_edge("tools", "model")
    return builder.compile(checkpointer=InMemorySaver())


def skeleton_graph(*, masking: bool, steps: int = 4) -> Any:
    """Our state and our supersteps, with nodes that do no work: the framework's floor.

    Our common turn is four node supersteps: intent, slot filling, the tool, the reply. Each
    skeleton node returns the keys ours returns there, with constant values; the reply keeps
    the last three user messages, as compaction does. With ``steps=2`` the intent node also
    writes slot filling's keys and the tool node the reply's, in one update each: what an
    earlier round's fusion did (``bench/README.md``, "What a step per node costs"). With
    ``masking`` the saver gets our masking serializer, so the row shows what masking every
    checkpoint blob costs.
    """
    note = {"role": "agent", "content": {"stage": "bench"}, "session_id": "s", "task_id": "t"}
    call = {"id": "c", "name": "query_order_status", "parameters": {"order_id": "OD-1"}}
    result = {"status": "success", "tool": "query_order_status", "request_id": "r", "data": {}}

    def intent(state: AgentState) -> dict[str, Any]:
        return {
            "intent": "CHECK_ORDER_STATUS",
            "invalid_slots": {},
            "missing_slots": [],
            "pending_tool_calls": [],
            "protocol": [dict(note), dict(note)],
            "slots": Overwrite({"order_id": "OD-1"}),
            "step_count": Overwrite(1),
            "task_id": "t",
            "tool_results": Overwrite([]),
        }

    def slot_filling(state: AgentState) -> dict[str, Any]:
        return {
            "missing_slots": [],
            "pending_tool_calls": [call],
            "protocol": [dict(note)],
            "step_count": 1,
        }

    def tool(state: AgentState) -> dict[str, Any]:
        return {"protocol": [dict(note)], "step_count": 1, "tool_results": [result]}

    def reply(state: AgentState) -> dict[str, Any]:
        users = [m for m in state["messages"] if isinstance(m, HumanMessage)]
        old = [RemoveMessage(id=str(m.id)) for m in users[:-3]]
        answer = AIMessage(content="您的订单正在配送", id=f"a-{len(users)}")
        return {"messages": [*old, answer], "protocol": [dict(note)], "step_count": 1}

    def pair(first: Any, second: Any) -> Any:
        def both(state: AgentState) -> dict[str, Any]:
            one, two = first(state), second(state)
            return {
                **one,
                **two,
                "protocol": one["protocol"] + two["protocol"],
                "step_count": Overwrite(2) if "intent" in one else 2,
            }

        return both

    nodes = (
        {"intent": intent, "slot_filling": slot_filling, "tool": tool, "reply": reply}
        if steps == 4
        else {"intent": pair(intent, slot_filling), "tool": pair(tool, reply)}
    )
    builder = StateGraph(AgentState, context_schema=Context)
    names = list(nodes)
    for name, node in nodes.items():
        builder.add_node(name, node)
    builder.add_edge(START, names[0])
    for name, following in zip(names, [*names[1:], END], strict=True):
        # conditional, as ours are: each reads the state to route
        builder.add_conditional_edges(name, lambda s, to=following: to, [following])
    saver = InMemorySaver()
    if masking:
        saver.serde = protect(saver.serde, compress=False)
    return builder.compile(checkpointer=saver)


def untraced(settings: Settings, db: Database, transcript: Any) -> Any:
    """Our graph on InMemorySaver without the trace callbacks, to show what they cost."""
    services = Services(scenarios=SCENARIOS, settings=settings, database_factory=lambda: db)
    saver = InMemorySaver()
    saver.serde = protect(saver.serde, compress=False)
    return make_builder(services, transcript).compile(checkpointer=saver, name="agent")


def turn_ms(app: Any, thread: str, text: str = MESSAGE) -> float:
    """Run one turn; return its wall time in milliseconds."""
    started = time.perf_counter()
    app.invoke(
        {"messages": [("user", text)]}, {"configurable": {"thread_id": thread}}, context=ALICE
    )
    return (time.perf_counter() - started) * 1000
