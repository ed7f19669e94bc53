"""Two nodes in one superstep leave the state exactly as two supersteps would (``nodes.fusion``)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from contract.scenario import ScenarioSet
from nodes.routing import MAX_TASK_STEPS, Through, route_after_intent, route_after_tool
from scenarios import SCENARIOS
from state import REDUCERS, AgentState, Overwrite, applied, in_one_write

CATALOG = ScenarioSet(SCENARIOS)
BASE_IDS = ["m0", "m1", "m2"]


def _note(n: int) -> dict[str, Any]:
    return {"role": "agent", "content": {"stage": f"s{n}"}, "session_id": "t", "task_id": "x"}


_FRESH = iter(range(10**9))


def _message(draw: Any, present: list[str]) -> Any:
    """A message write: a new one, one replacing a present id, or removing one."""
    kind = draw(st.sampled_from(["new", "replace", "remove"]))
    if kind == "remove" and present:
        gone = draw(st.sampled_from(present))
        present.remove(gone)
        return RemoveMessage(id=gone)
    if kind == "replace" and present:
        return AIMessage(content=f"again {len(present)}", id=draw(st.sampled_from(present)))
    new_id = f"n{next(_FRESH)}"
    present.append(new_id)
    return AIMessage(content=f"reply {new_id}", id=new_id)


@st.composite
def updates(draw: Any, known: list[str]) -> dict[str, Any]:
    """A node's update: any mix of the reducer keys and two last-value keys."""
    out: dict[str, Any] = {}
    if draw(st.booleans()):
        out["messages"] = [_message(draw, known) for _ in range(draw(st.integers(1, 3)))]
    if draw(st.booleans()):
        notes = [_note(draw(st.integers(0, 99))) for _ in range(draw(st.integers(1, 2)))]
        out["protocol"] = Overwrite(notes) if draw(st.booleans()) else notes
    if draw(st.booleans()):
        slots = draw(
            st.dictionaries(
                st.sampled_from(["a", "b", "c"]), st.one_of(st.none(), st.integers(0, 9))
            )
        )
        out["slots"] = Overwrite(slots) if draw(st.booleans()) else slots
    if draw(st.booleans()):
        results = [{"tool": "t", "status": draw(st.sampled_from(["success", "failed"]))}]
        out["tool_results"] = Overwrite(results) if draw(st.booleans()) else results
    if draw(st.booleans()):
        steps = draw(st.integers(0, 3))
        out["step_count"] = Overwrite(steps) if draw(st.booleans()) else steps
    if draw(st.booleans()):
        out["intent"] = draw(st.sampled_from(["CHECK_ORDER_STATUS", "REQUEST_REFUND"]))
    if draw(st.booleans()):
        out["decision"] = draw(st.sampled_from(["continue", "clarify"]))
    return out


def _plain(values: dict[str, Any]) -> dict[str, Any]:
    out = dict(values)
    out["messages"] = [(type(m).__name__, m.id, m.content) for m in out.get("messages", [])]
    # validation stamps each protocol message with the time
    out["protocol"] = [{**p, "timestamp": None} for p in out.get("protocol", [])]
    return out


class _Steps:
    """Graphs of one and of two supersteps, whose nodes return the updates put in ``plan``."""

    def __init__(self) -> None:
        self.plan: list[dict[str, Any]] = []
        self.seen: list[dict[str, Any]] = []
        self.runs = 0
        self.two = self._graph(2)
        self.one = self._graph(1)

    def _graph(self, count: int) -> Any:
        builder = StateGraph(AgentState)
        names = [f"n{i}" for i in range(count)]
        for index, name in enumerate(names):

            def step(state: AgentState, index: int = index) -> Any:
                self.seen.append(dict(state))
                return self.plan[index]

            builder.add_node(name, step)
        builder.add_edge(START, names[0])
        for a, b in zip(names, names[1:], strict=False):
            builder.add_edge(a, b)
        builder.add_edge(names[-1], END)
        return builder.compile(checkpointer=InMemorySaver())

    def run(self, graph: Any, plan: list[dict[str, Any]]) -> dict[str, Any]:
        """Seed a fresh thread, run ``plan`` through ``graph``, return its end state."""
        self.plan, self.seen = plan, []
        self.runs += 1
        config = {"configurable": {"thread_id": f"t{self.runs}"}}
        start = {
            "messages": [HumanMessage(content=f"hi {i}", id=i) for i in BASE_IDS],
            "protocol": [_note(-1)],
            "slots": {"a": 1},
            "tool_results": [],
            "step_count": 2,
            "intent": "CHECK_ORDER_STATUS",
        }
        graph.invoke(start, config)
        return dict(graph.get_state(config).values)


STEPS = _Steps()


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_one_write_leaves_the_state_two_supersteps_leave(data: Any) -> None:
    known = list(BASE_IDS)
    first = data.draw(updates(known))
    second = data.draw(updates(known))
    two = STEPS.run(STEPS.two, [first, second])
    seen = STEPS.seen
    one = STEPS.run(STEPS.one, [in_one_write(first, second)])
    assert _plain(one) == _plain(two)
    # and the second node of a pair reads what the second superstep read
    assert _plain(applied(seen[0], first)) == _plain(seen[1])


def test_a_message_removed_then_added_again_is_refused() -> None:
    # two supersteps would move it to the end; no single write of add_messages can
    with pytest.raises(ValueError, match="again"):
        in_one_write(
            {"messages": [RemoveMessage(id="m1")]}, {"messages": [AIMessage("back", id="m1")]}
        )


def test_every_reducer_has_a_one_write_form() -> None:
    assert set(REDUCERS) == {"messages", "protocol", "slots", "tool_results", "step_count"}
    for key in REDUCERS:  # in_one_write raises KeyError for a reducer it does not know
        in_one_write({key: [] if key != "slots" and key != "step_count" else {}}, {key: []})


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from([None, "user_fixable", "validation", "rate_limited", "transient", None]),
    st.booleans(),
    st.integers(0, 3),
    st.integers(MAX_TASK_STEPS - 3, MAX_TASK_STEPS + 2),
    st.sampled_from(["CHECK_ORDER_STATUS", "GET_WEATHER", "REQUEST_REFUND"]),
)
def test_the_reply_never_changes_where_the_tool_edge_leads(
    error_type: str | None, retryable: bool, retries: int, steps: int, intent: str
) -> None:
    # the tool node goes on into the reply only when its edge leads there; the reply adds a
    # step, and the edge must still lead to the reply after it, or ``Through`` would misroute
    error = None if error_type is None else {"error_type": error_type, "retryable": retryable}
    state: dict[str, Any] = {
        "error": error,
        "retry_count": retries,
        "step_count": steps,
        "intent": intent,
    }
    before = route_after_tool(state, scenarios=CATALOG)  # type: ignore[arg-type]
    if before == "reply":
        after = {**state, "step_count": steps + 1}
        assert route_after_tool(after, scenarios=CATALOG) == "reply"  # type: ignore[arg-type]


def test_slot_filling_writes_nothing_the_intent_edge_reads() -> None:
    # route_after_intent reads these; slot filling writes slots, what is missing or invalid,
    # the planned calls, a step and a protocol note
    read = {"awaiting", "decision", "confidence", "intent"}
    written = {"slots", "missing_slots", "invalid_slots", "pending_tool_calls", "step_count"}
    assert not read & written
    state = {"intent": "CHECK_ORDER_STATUS", "confidence": 0.9}
    route = Through(
        lambda s: route_after_intent(s, scenarios=CATALOG), "slot_filling", lambda s: "clarify"
    )
    assert route(state) == "clarify"  # type: ignore[arg-type]
    assert route({**state, "confidence": 0.3}) == "reflect_refine"  # type: ignore[arg-type]
    assert Through(lambda s: "reply", "reply", None)({}) == END
