"""Reflect-refine: look again when the agent is unsure, or when a tool call failed.

Two triggers, one node, as the design has it: an intent below the confidence threshold
(re-examine the request with the conversation's context) and a transient tool failure with
retries left (count the retry and send the call again). It decides; routers act on
``decision``.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from contract.scenario import UNKNOWN, TaskSpec
from nodes.common import Node, context_of, latest_user_message, message_text, protocol_message
from nodes.services import Services
from nodes.slot_filling import vault_sensitive
from planning.critique import Critique, critique_failure
from planning.planner import evidence_names, scenario_cards
from security.intake import revealed
from state import AgentState, Context, Overwrite, StateUpdate, ToolResult
from understanding.commands import SetSlot, records
from understanding.view import view_of


def make_reflect_refine_node(services: Services) -> Node:
    """Build the reflect-refine node."""

    def reflect_refine(state: AgentState, runtime: Runtime[Context]) -> StateUpdate:
        """Decide to retry a failed tool, refine an unclear intent, or ask the user."""
        error = state.get("error")
        if error and error.get("retryable"):
            return _after_tool_failure(services, state, runtime, error)
        return _refine_intent(services, state, runtime)

    return reflect_refine


CRITIQUE_DECISIONS = {
    "retry": "retry",
    "fix_arguments": "retry",
    "other_tool": "retry",
    "ask": "handoff",
    "give_up": "handoff",
}
"""The model's critique → the router's decision. ``ask`` hands over too: a transient failure
is nothing the user can fix by answering, and a person can ask better than a template."""


def _asks_its_own_question(services: Services, text: str, command: Any, waiting: Any) -> bool:
    """The message cues one task only and gives it nothing: asking for its slots is safe.

    Nothing runs on such a guess: the task asks for what it needs, and a write still waits
    for its confirmation. With a task already waiting, the guess could take the answer
    from it, so the menu is asked instead.
    """
    intent = getattr(command, "intent", None)
    task = services.catalog.task(intent) if isinstance(intent, str) else None
    if waiting is not None or task is None or not task.required_slots:
        return False
    if getattr(command, "slots", None) or getattr(command, "invalid", None):
        return False
    return services.rule_commands.classify(text).candidates == (intent,)


def _after_tool_failure(
    services: Services,
    state: AgentState,
    runtime: Runtime[Context],
    error: ToolResult,
) -> StateUpdate:
    retries = state.get("retry_count", 0) + 1
    content: dict[str, object] = {  # the note's fields (``ProtocolMessage.content``)
        "stage": "reflect_refine",
        "trigger": "tool_failure",
        "tool": error.get("tool"),
        "decision": "retry",
        "attempt": retries + 1,
    }
    update: StateUpdate = {"retry_count": retries, "decision": "retry", "step_count": 1}
    problem = error.get("message")
    context = context_of(runtime)
    llm = services.chat_model("reflect", context.model)
    task = services.catalog.task(state.get("intent"))
    if llm is not None and task is not None:
        critique = _critique(services, state, task, error, llm, context.user_role)
        content["source"] = "rules" if critique.action is None else "model"
        content["cause"] = critique.cause
        if critique.action is not None:
            content["critique"] = critique.action
            content["decision"] = update["decision"] = CRITIQUE_DECISIONS[critique.action]
            if critique.calls:
                update["pending_tool_calls"] = critique.calls
                content["calls"] = [dict(c) for c in critique.calls]
        if critique.error:
            problem = f"{problem}; critique: {critique.error}"
    note = protocol_message(
        state, runtime, role="agent", content=content, error=problem, retry_count=retries
    )
    return {**update, "protocol": [note]}


def _critique(
    services: Services,
    state: AgentState,
    task: TaskSpec,
    error: ToolResult,
    llm: Any,
    role: str,
) -> Critique:
    """Ask the model why the call failed; the rules' decision stands when it cannot say."""
    failed_call = next(
        (c for c in state.get("pending_tool_calls") or [] if c["name"] == error.get("tool")),
        None,
    )
    texts = [message_text(m) for m in state.get("messages") or [] if isinstance(m, HumanMessage)][
        -6:
    ]
    return critique_failure(
        llm,
        failed=dict(error),
        call=dict(failed_call) if failed_call else None,
        cards=scenario_cards(services.tools, services.catalog, task, role),
        goal=task.intent,
        slots=dict(state.get("slots") or {}),
        user_texts=texts,
        task_id=state.get("task_id", ""),
        checked=evidence_names(services.catalog, task),
        today=services.today(),
    )


def _refine_intent(services: Services, state: AgentState, runtime: Runtime[Context]) -> StateUpdate:
    """Look again with the rules alone: the turn's one model call, if any, is spent already."""
    context = context_of(runtime)  # intake tokens reveal for extraction, in memory only
    text = revealed(message_text(latest_user_message(state)), context.user_id, services.database)
    pending = state.get("intent")
    view = view_of(state, required=services.required_slots)
    # the configured generator's second look: a model's is the reader's (its call is spent)
    reading = services.commands_for(context.model).reconsider(text, view)
    command = reading.commands[0]
    threshold = services.confidence_threshold
    refined_intent = getattr(command, "intent", None) or UNKNOWN
    if isinstance(command, SetSlot) and view.waiting is not None:
        refined_intent = view.waiting.intent
    resolved = refined_intent != UNKNOWN and command.confidence >= threshold
    confidence = command.confidence
    evidence = list(command.evidence)
    missing = list(state.get("missing_slots") or [])
    offered = state.get("slot_offers") or {}
    if not resolved and pending and any(name in offered for name in missing):
        # the question listed the user's own records: a reply may name one ("麻辣香锅那单"),
        # which only slot filling's lookup can tell; if it names none, it asks again
        resolved = refined_intent in (UNKNOWN, pending)
        if resolved:
            refined_intent, confidence = str(pending), threshold
            evidence.append("answers an offered choice")
    if not resolved and _asks_its_own_question(services, text, command, view.waiting):
        # "查订单": one task cued, none of its slots given; its question ("哪个订单？", with
        # the user's own orders listed) clarifies better than the menu of every task
        resolved = True
        evidence.append("one task cued; its question clarifies")
    decision = "continue" if resolved else "clarify"
    # the nearest tasks: the second look's, else those the first reading gave (best first)
    candidates = list(getattr(command, "candidates", ()) or state.get("intent_candidates") or ())
    note = protocol_message(
        state,
        runtime,
        role="agent",
        content={
            "stage": "reflect_refine",
            "trigger": "low_confidence",
            "before": {"intent": pending, "confidence": state.get("confidence")},
            "after": {"intent": refined_intent, "confidence": confidence},
            "evidence": evidence,
            "candidates": candidates,
            "decision": decision,
            "source": reading.source,
            "commands": list(
                records(
                    reading.commands,
                    shown=dict.fromkeys(services.sensitive_slot_names, "******"),
                )
            ),
        },
        confidence=confidence,
        error=reading.error,
    )
    update: StateUpdate = {
        "decision": decision,
        "confidence": confidence,
        "intent_evidence": evidence,
        "step_count": 1,
        "protocol": [note],
    }
    if not resolved:
        update["intent_candidates"] = candidates
        return update
    update["intent"] = refined_intent
    found = dict(getattr(command, "slots", {}) or {})
    invalid = dict(getattr(command, "invalid", {}) or {})
    task = services.catalog.task(refined_intent)
    if task is not None and task.sensitive_slots:
        found = vault_sensitive(task, found, services, context.user_id)
    if refined_intent == pending:
        update["slots"] = found
        update["invalid_slots"] = {**(state.get("invalid_slots") or {}), **invalid}
        return update
    if view.waiting is not None:  # another request after all: the waiting task is set aside
        update["task_stack"] = [
            *(state.get("task_stack") or []),
            {
                "intent": view.waiting.intent,
                "task_id": view.waiting.task_id,
                "slots": dict(state.get("slots") or {}),
                "status": "suspended",
                "missing_slots": missing,
            },
        ]
        update["task_id"] = f"{state.get('task_id', '')}.r"
    update.update(
        slots=Overwrite(found), invalid_slots=invalid, missing_slots=[], tool_results=Overwrite([])
    )
    return update
