"""Wiring only: add the nodes, connect them with the routers, compile.

``graph`` is compiled without a checkpointer because ``langgraph dev`` supplies its own;
everywhere else call ``build_graph(checkpointer=...)``. The nodes are generic; what they
know comes from the scenarios (``scenarios.SCENARIOS`` unless ``scenarios=`` says
otherwise), and each sub-agent a scenario declares becomes one node.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import fields
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from contract.scenario import Scenario
from graph.checkpoint.compress import protect
from graph.job_followup import ThreadActivity, follow_up_on_thread
from graph.resume import DURABILITY_KEY, checked
from jobs.bodies import JOBS
from nodes.clarify import make_clarify_node
from nodes.compact import unpinning_tools, with_compaction
from nodes.fusion import continued
from nodes.handoff import make_handoff_node
from nodes.intent import make_intent_node
from nodes.job_update import make_job_update_node
from nodes.propose import make_propose_node
from nodes.reflect_refine import make_reflect_refine_node
from nodes.reply import make_reply_node
from nodes.routing import (
    Bound,
    Through,
    route_after_agent,
    route_after_intent,
    route_after_propose,
    route_after_reflect,
    route_after_reply,
    route_after_slots_skipping_idle,
    route_after_tool,
    route_start,
)
from nodes.services import Services
from nodes.slot_filling import make_slot_filling_node
from nodes.tool import make_tool_node
from observability.trace_callbacks import trace_callbacks
from scenarios import SCENARIOS
from state import AgentState, Context
from storage.transcript import TranscriptStore, open_transcript_store

_PAIRS = {"intent": "slot_filling", "tool": "reply"}
"""The node whose superstep another may share, mapped to that node (``nodes.fusion``)."""
SAME_STEP = frozenset(_PAIRS.values())
"""Nodes that run in the superstep of the node before them when its edge leads to them:
slot filling after intent, the reply after the tool (``nodes.fusion``)."""


def make_builder(
    services: Services,
    transcript: TranscriptStore | None = None,
    *,
    same_step: frozenset[str] = SAME_STEP,
) -> StateGraph[AgentState, Context, Any, Any]:
    """Return the uncompiled graph wired to ``services``.

    The nodes that end a turn (clarify, reply, handoff) also compact the state, moving what
    is older than the last few turns to ``transcript`` (opened from the settings on first
    use when omitted): see ``nodes.compact``. The nodes named in ``same_step`` also run in
    the superstep of the node before them on the common path (``nodes.fusion``).
    """
    catalog = services.catalog
    agents = list(catalog.agents)
    opened: list[TranscriptStore] = [transcript] if transcript is not None else []
    opening = threading.Lock()  # concurrent first turns open the store once, not once each

    def store() -> TranscriptStore:
        if not opened:
            with opening:
                if not opened:
                    opened.append(open_transcript_store(services.settings))
        return opened[0]

    def ends_turn(node: Any) -> Any:
        return with_compaction(
            node,
            store=store,
            keep_turns=services.settings.state_keep_turns,
            keep_protocol=services.settings.state_keep_protocol,
        )

    after_intent = Bound(
        route_after_intent, scenarios=catalog, threshold=services.confidence_threshold
    )
    after_slots = Bound(route_after_slots_skipping_idle, scenarios=catalog, registry=services.tools)
    after_tool = Bound(
        route_after_tool,
        scenarios=catalog,
        max_retries=services.max_tool_retries,
        registry=services.tools,
    )
    intent = make_intent_node(services)
    slot_filling = make_slot_filling_node(services)
    tool = make_tool_node(services)
    reply = ends_turn(unpinning_tools(make_reply_node(services), services))
    slots_too = "slot_filling" in same_step
    reply_too = "reply" in same_step

    builder = StateGraph(AgentState, context_schema=Context)
    builder.add_node(
        "intent",
        continued(intent, route=after_intent, into="slot_filling", then=slot_filling)
        if slots_too
        else intent,
    )
    builder.add_node("reflect_refine", make_reflect_refine_node(services))
    builder.add_node("slot_filling", slot_filling)
    builder.add_node("clarify", ends_turn(make_clarify_node(services)))
    builder.add_node("propose", make_propose_node(services))
    builder.add_node(
        "tool", continued(tool, route=after_tool, into="reply", then=reply) if reply_too else tool
    )
    builder.add_node("reply", reply)
    builder.add_node("handoff", ends_turn(unpinning_tools(make_handoff_node(services), services)))
    builder.add_node("job_update", make_job_update_node(services))
    for agent, factory in catalog.agents.items():
        builder.add_node(agent, factory(services))
        builder.add_conditional_edges(agent, route_after_agent, ["reply", "intent"])

    builder.add_conditional_edges(START, route_start, ["job_update", "intent"])
    builder.add_conditional_edges(
        "intent",
        Through(after_intent, "slot_filling", after_slots) if slots_too else after_intent,
        ["reflect_refine", "slot_filling", "tool", "handoff", END, *agents]
        + (["clarify", "propose"] if slots_too else []),
    )
    builder.add_conditional_edges(
        "reflect_refine",
        Bound(route_after_reflect, scenarios=catalog),
        ["slot_filling", "tool", "clarify", "handoff"],
    )
    builder.add_conditional_edges(
        "slot_filling", after_slots, ["clarify", "propose", "tool", END, *agents]
    )
    builder.add_conditional_edges(
        "propose", Bound(route_after_propose, scenarios=catalog), ["tool", *agents]
    )
    builder.add_conditional_edges(
        "tool",
        Through(after_tool, "reply", route_after_reply) if reply_too else after_tool,
        ["reply", "reflect_refine", "handoff", "intent", *agents]
        + ([END, "slot_filling"] if reply_too else []),
    )
    builder.add_edge("clarify", END)
    builder.add_conditional_edges("reply", route_after_reply, ["slot_filling", END])
    builder.add_edge("handoff", END)
    builder.add_edge("job_update", END)
    return builder


def _kept_apart(interrupt_before: Any, interrupt_after: Any) -> set[str]:
    """Return the nodes of ``SAME_STEP`` a requested pause falls in front of."""

    def named(nodes: Any) -> set[str]:
        listed = {nodes} if isinstance(nodes, str) else set(nodes or ())
        return set(_PAIRS) | SAME_STEP if "*" in listed else listed

    after = {_PAIRS[node] for node in named(interrupt_after) if node in _PAIRS}
    return (named(interrupt_before) | after) & SAME_STEP


def build_graph(
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    *,
    scenarios: Sequence[Scenario] | None = None,
    services: Services | None = None,
    transcript: TranscriptStore | None = None,
    same_step: frozenset[str] = SAME_STEP,
    **options: Any,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile the agent graph.

    The checkpointer's serializer is wrapped so that no checkpoint it writes holds a full
    ID-card number or a keyword-marked PIN (see ``graph.checkpoint.masking``).

    Args:
        checkpointer: Where thread state persists; ``None`` for none (``langgraph dev``).
        scenarios: The capabilities to serve; every shipped scenario when omitted.
        services: Understanding, tools and data; built from ``options`` when omitted.
        transcript: Where messages older than the state keeps go; the configured store
            (``storage.transcript.open_transcript_store``) when omitted.
        same_step: The nodes that run in the superstep of the node before them when its
            edge leads to them (``SAME_STEP``; empty: every node its own superstep). A node
            an ``interrupt_before`` or ``interrupt_after`` would pause next to is kept apart.
        **options: ``Services`` fields (``settings``, ``registry``, ``database_factory``,
            ``executor_factory``, ``understanding``, ``max_tool_retries``,
            ``confidence_threshold``) or ``compile`` keywords (``interrupt_before``,
            ``interrupt_after``, ``name``).
    """
    service_keys = {f.name for f in fields(Services) if f.init}
    service_options = {key: options.pop(key) for key in list(options) if key in service_keys}
    if services is None:
        services = Services(scenarios=tuple(scenarios or SCENARIOS), **service_options)
    elif service_options or scenarios is not None:
        msg = f"pass either services or {sorted(service_options) or ['scenarios']}, not both"
        raise TypeError(msg)
    options.setdefault("name", "agent")
    # a pause asked for between two nodes that share a superstep keeps them apart
    same_step = same_step - _kept_apart(
        options.get("interrupt_before"), options.get("interrupt_after")
    )
    if checkpointer is not None:
        # the turn's input is checkpointed before any node runs: mask ID numbers on the way;
        # savers that store bytes (SQLite, Redis) also compress them, after masking
        checkpointer.serde = protect(
            checkpointer.serde,
            compress=services.settings.compress_checkpoints
            and not isinstance(checkpointer, InMemorySaver),
        )
    # a resume the graph cannot read (None, a list, bytes) is refused before LangGraph sees it
    compiled = checked(
        make_builder(services, transcript, same_step=same_step).compile(
            checkpointer=checkpointer, **options
        )
    )
    # the four decision points of every task go to the audit log (``reach trace``)
    callbacks: list[Any] = list(trace_callbacks(lambda: services.executor.audit))
    if checkpointer is not None:
        # embedded: a job started from this graph reports back by a callback that runs a
        # turn on its thread once it is idle (under ``langgraph dev``, ``runs.create`` does)
        activity = ThreadActivity()
        callbacks.append(activity)
        # the default durability of every run (a run's own ``durability=`` still wins)
        traced = compiled.with_config(
            callbacks=callbacks,
            configurable={DURABILITY_KEY: services.settings.durability},
        )
        JOBS.set_follow_up(services.database, follow_up_on_thread(traced, activity))
        return traced
    return compiled.with_config(callbacks=callbacks)
