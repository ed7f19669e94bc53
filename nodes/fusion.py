"""Run the next node in the same superstep when the edge after a node leads straight to it.

Every superstep costs LangGraph a task, a checkpoint and the fresh read of a conditional
edge, whatever the nodes do: a sixth of a bare turn here (``bench/README.md``). The turn most
users make went intent → slot filling → tool → reply, four supersteps where a ReAct loop
takes three. So the intent node goes on into slot filling, and the tool node into the
reply, when their edges would send the turn there anyway, and each pair writes once:

- the second node reads the state the next superstep would have read, the first node's
  writes applied with the graph's own reducers (``state.applied``);
- the two updates go out as one that leaves the state exactly as the two in a row would
  (``state.in_one_write``);
- the edge after the pair (``nodes.routing.Through``) routes as the second node's edge
  when the first node's edge leads to it, and as the first node's otherwise.

Both nodes keep their own code, and slot filling and reply stay nodes of their own for
every other way into them (after reflect-refine, after a sub-agent). What changes is the
checkpoints: none between the two, so time travel and a resume after a crash start from
before the first (the executor's idempotency keeps a side effect to once either way).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.runtime import Runtime

from nodes.common import Node
from state import AgentState, Context, StateUpdate, applied, in_one_write


def continued(first: Node, *, route: Callable[[Any], Any], into: str, then: Node) -> Node:
    """Return ``first`` going on into ``then`` when ``route`` sends its result to ``into``."""

    def node(state: AgentState, runtime: Runtime[Context]) -> StateUpdate:
        update = first(state, runtime=runtime)
        after = applied(state, update)
        if route(after) != into:
            return update
        return in_one_write(update, then(after, runtime=runtime))  # type: ignore[arg-type]

    node.__name__ = getattr(first, "__name__", "continued")
    node.__doc__ = first.__doc__
    return node


__all__ = ["continued"]
