"""Wiring only: add the nodes, connect them with the routers, compile.

``graph`` is compiled without a checkpointer because ``langgraph dev`` supplies its own;
everywhere else call ``build_graph(checkpointer=...)``.
"""

from __future__ import annotations

from dataclasses import fields
from functools import partial
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from graph.checkpoint.masking import MaskingSerializer
from graph.finance import build_finance_agent
from nodes.appointment import make_appointment_node
from nodes.clarify import clarify
from nodes.finance import make_handoff_node, route_after_finance
from nodes.handoff import handoff
from nodes.intent import make_intent_node
from nodes.reflect_refine import make_reflect_refine_node
from nodes.reply import reply
from nodes.routing import (
    route_after_intent,
    route_after_reflect,
    route_after_slots,
    route_after_tool,
)
from nodes.services import Services
from nodes.slot_filling import make_slot_filling_node
from nodes.tool import make_tool_node
from state import AgentState, Context


def make_builder(services: Services | None = None) -> StateGraph[AgentState, Context, Any, Any]:
    """Return the uncompiled graph wired to ``services``."""
    services = services or Services()
    builder = StateGraph(AgentState, context_schema=Context)
    builder.add_node("intent", make_intent_node(services))
    builder.add_node("reflect_refine", make_reflect_refine_node(services))
    builder.add_node("slot_filling", make_slot_filling_node(services))
    builder.add_node("clarify", clarify)
    builder.add_node("tool", make_tool_node(services))
    builder.add_node("reply", reply)
    builder.add_node("handoff", handoff)
    builder.add_node("finance", make_handoff_node(services, build_finance_agent(services)))
    builder.add_node("appointment", make_appointment_node(services))

    builder.add_edge(START, "intent")
    builder.add_conditional_edges(
        "intent",
        partial(route_after_intent, threshold=services.confidence_threshold),
        ["reflect_refine", "slot_filling"],
    )
    builder.add_conditional_edges(
        "reflect_refine", route_after_reflect, ["slot_filling", "tool", "clarify", "handoff"]
    )
    builder.add_conditional_edges(
        "slot_filling", route_after_slots, ["clarify", "tool", "finance", "appointment"]
    )
    builder.add_conditional_edges("finance", route_after_finance, ["reply"])
    builder.add_edge("appointment", "reply")
    builder.add_conditional_edges(
        "tool",
        partial(route_after_tool, max_retries=services.max_tool_retries),
        ["reply", "reflect_refine", "handoff", "tool", "finance"],
    )
    builder.add_edge("clarify", END)
    builder.add_edge("reply", END)
    builder.add_edge("handoff", END)
    return builder


def build_graph(
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    *,
    services: Services | None = None,
    **options: Any,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile the agent graph.

    The checkpointer's serializer is wrapped so that no checkpoint it writes holds a full
    ID-card number or a keyword-marked PIN (see ``graph.checkpoint.masking``).

    Args:
        checkpointer: Where thread state persists; ``None`` for none (``langgraph dev``).
        services: Understanding, tools and data; built from ``options`` when omitted.
        **options: ``Services`` fields (``registry``, ``database_factory``,
            ``executor_factory``, ``understanding``, ``max_tool_retries``,
            ``confidence_threshold``) or ``compile`` keywords (``interrupt_before``,
            ``interrupt_after``, ``name``).
    """
    service_keys = {f.name for f in fields(Services) if f.init}
    service_options = {key: options.pop(key) for key in list(options) if key in service_keys}
    if services is None:
        services = Services(**service_options)
    elif service_options:
        msg = f"pass either services or {sorted(service_options)}, not both"
        raise TypeError(msg)
    options.setdefault("name", "agent")
    if checkpointer is not None and not isinstance(checkpointer.serde, MaskingSerializer):
        # the turn's input is checkpointed before any node runs: mask ID numbers on the way
        checkpointer.serde = MaskingSerializer(checkpointer.serde)
    return make_builder(services).compile(checkpointer=checkpointer, **options)


builder = make_builder()
graph = builder.compile(name="agent")
