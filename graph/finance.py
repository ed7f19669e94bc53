"""Wiring of the finance agent: a strict chain per request kind, stopping at the first failure."""

from __future__ import annotations

from typing import Any

from langgraph.graph import START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from nodes.finance import STEPS, FinanceState, make_finance_steps, route_chain, route_start
from nodes.services import Services
from state import Context


def build_finance_agent(services: Services) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile the finance subgraph; it inherits the parent's checkpointer when nested."""
    builder = StateGraph(FinanceState, context_schema=Context)
    for tool, node in make_finance_steps(services).items():
        builder.add_node(tool, node)
    builder.add_conditional_edges(START, route_start, list(STEPS))
    for tool in STEPS:
        builder.add_conditional_edges(tool, route_chain, [*STEPS, "__end__"])
    return builder.compile(name="finance_agent")
