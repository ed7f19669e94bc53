"""Clarification: ask for what is missing, or ask what the user means. Ends the turn."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from contract.scenario import ScenarioSet
from nodes.common import Node, context_of, protocol_message
from nodes.services import Services
from nodes.wording import Voice
from state import AgentState, Context, StateUpdate


def make_clarify_node(services: Services) -> Node:
    """Build the node that asks one specific question."""

    def clarify(state: AgentState, runtime: Runtime[Context]) -> StateUpdate:
        """Ask one question; the user's next message on the thread answers it."""
        offered = services.offered_intents(context_of(runtime).user_role)
        question = clarifying_question(state, services.catalog, offered=offered)
        note = protocol_message(
            state,
            runtime,
            role="assistant",
            content=question,
            confidence=state.get("confidence", 1.0),
        )
        return {"messages": [AIMessage(content=question)], "protocol": [note], "step_count": 1}

    return clarify


def clarifying_question(
    state: AgentState, scenarios: ScenarioSet, *, offered: Sequence[str] | None = None
) -> str:
    """Choose the question: a bad value, the missing slot(s), or what the user means.

    Everything said comes from the scenarios' wording: ``invalid.<slot>`` and
    ``multiple.<slot>`` for a value that is not usable, ``ask.<slot>`` when one slot is
    missing, ``slot.<slot>`` labels for several, and every task's label when the request
    itself is unclear, so the question offers all the agent can do for this caller
    (``offered``: the intents the caller's role may carry out; every intent when omitted). A
    missing slot's offer (``slot_offers``: the user's own recent orders) follows its question.
    """
    intent = state.get("intent", "")
    voice = Voice(scenarios, state.get("language", "zh"), scenarios.scenario_of.get(intent))
    task = scenarios.task(intent)
    missing = list(state.get("missing_slots") or [])
    if task is None or (state.get("decision") == "clarify" and not missing):
        return _ask_intent(
            state, scenarios, voice, scenarios.intents if offered is None else offered
        )
    label = voice.label(intent)
    invalid = state.get("invalid_slots") or {}
    for name in task.required_slots:
        if name not in invalid:
            continue
        value, _, reason = invalid[name].partition(": ")
        if value == "multiple" and voice.text(f"multiple.{name}") is not None:
            return voice.say(f"multiple.{name}", value=reason)
        if value != "multiple" and voice.text(f"invalid.{name}") is not None:
            shown_reason = voice.text(f"reason.{reason}") or reason
            return voice.say(f"invalid.{name}", value=value, reason=shown_reason)
    offers = state.get("slot_offers") or {}
    offered = "".join(offers[name] for name in missing if name in offers)
    if len(missing) == 1 and voice.text(f"ask.{missing[0]}") is not None:
        return voice.say(f"ask.{missing[0]}", task=label) + offered
    names = voice.join([voice.text(f"slot.{name}") or name for name in missing])
    return voice.say("ask_slots", task=label, slots=names) + offered


NEAREST = 3
"""At most this many tasks are offered when a message was not understood."""


def _ask_intent(
    state: AgentState, scenarios: ScenarioSet, voice: Voice, offered: Sequence[str]
) -> str:
    """One question about the nearest tasks the caller may use, never the list of them all.

    The nearest are the reader's candidates, best first (``CannotTell.candidates``, or
    reflect-refine's); none near enough: ask to put it another way.
    """
    allowed = set(offered)
    candidates = [
        c
        for c in dict.fromkeys(state.get("intent_candidates") or [])
        if scenarios.task(c) and c in allowed
    ][:NEAREST]
    labels = [voice.label(c) for c in candidates]
    if len(labels) >= 2:
        return voice.say("ask_among", first=voice.join(labels[:-1]), last=labels[-1])
    if labels:
        return voice.say("ask_one", task=labels[0])
    return voice.say("ask_intent_open")
