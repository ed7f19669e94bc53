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
from langgraph.runtime import Runtime

from contract.scenario import Scenario
from graph.checkpoint.compress import protect
from graph.job_followup import ThreadActivity, follow_up_on_thread
from graph.resume import DURABILITY_KEY, checked
from jobs.bodies import JOBS
from nodes.clarify import make_clarify_node
from nodes.common import Node
from nodes.compact import unpinning_tools, with_compaction
from nodes.handoff import make_handoff_node
from nodes.intent import make_intent_node
from nodes.job_update import make_job_update_node
from nodes.propose import make_propose_node
from nodes.reflect_refine import make_reflect_refine_node
from nodes.reply import make_reply_node
from nodes.routing import (
    Bound,
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
from state import AgentState, Context, StateUpdate
from storage.transcript import TranscriptStore, open_transcript_store


class _Step:
    """A generic node as the graph holds it: an object LangGraph calls, not a closure.

    LangGraph looks into every node function it compiles for a subgraph it may call: it reads
    the bytecode of the function and of everything it closes over. Our generic nodes call
    none, and that look was a third of compiling the graph (5 of 17 ms, every test that
    builds one); an object that is not a function is not looked into. Sub-agents (each a
    subgraph) stay functions, so LangGraph finds them and checkpoints and streams them.
    """

    def __init__(self, node: Node) -> None:
        """Hold ``node``."""
        self.node = node
        self.__name__ = getattr(node, "__name__", type(node).__name__)
        self.__doc__ = node.__doc__

    def __call__(self, state: AgentState, runtime: Runtime[Context]) -> StateUpdate:
        """Run the node."""
        return self.node(state, runtime=runtime)


def make_builder(
    services: Services, transcript: TranscriptStore | None = None
) -> StateGraph[AgentState, Context, Any, Any]:
    """Return the uncompiled graph wired to ``services``.

    The nodes that end a turn (clarify, reply, handoff) also compact the state, moving what
    is older than the last few turns to ``transcript`` (opened from the settings on first
    use when omitted): see ``nodes.compact``. Every node runs in a superstep of its own, so
    the stream, Studio and the checkpoints show each node that ran, and a person can fork
    between any two (README, "Fork after a wrong intent").
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

    builder = StateGraph(AgentState, context_schema=Context)
    builder.add_node("intent", _Step(make_intent_node(services)))
    builder.add_node("reflect_refine", _Step(make_reflect_refine_node(services)))
    builder.add_node("slot_filling", _Step(make_slot_filling_node(services)))
    builder.add_node("clarify", _Step(ends_turn(make_clarify_node(services))))
    builder.add_node("propose", _Step(make_propose_node(services)))
    builder.add_node("tool", _Step(make_tool_node(services)))
    reply = ends_turn(unpinning_tools(make_reply_node(services), services))
    builder.add_node("reply", _Step(reply))
    handoff = ends_turn(unpinning_tools(make_handoff_node(services), services))
    builder.add_node("handoff", _Step(handoff))
    builder.add_node("job_update", _Step(make_job_update_node(services)))
    for agent, factory in catalog.agents.items():
        builder.add_node(agent, factory(services))
        builder.add_conditional_edges(agent, route_after_agent, ["reply", "intent"])

    builder.add_conditional_edges(START, route_start, ["job_update", "intent"])
    builder.add_conditional_edges(
        "intent",
        after_intent,
        ["reflect_refine", "slot_filling", "tool", "handoff", END, *agents],
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
        "tool", after_tool, ["reply", "reflect_refine", "handoff", "intent", *agents]
    )
    builder.add_edge("clarify", END)
    builder.add_conditional_edges("reply", route_after_reply, ["slot_filling", END])
    builder.add_edge("handoff", END)
    builder.add_edge("job_update", END)
    return builder


def build_graph(
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    *,
    scenarios: Sequence[Scenario] | None = None,
    services: Services | None = None,
    transcript: TranscriptStore | None = None,
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
        make_builder(services, transcript).compile(checkpointer=checkpointer, **options)
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
