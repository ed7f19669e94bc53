"""Propose: say what is about to happen, before a node that may pause for a confirmation.

Chat front-ends draw a pending confirmation under the last AI message, and transcripts read
better with the question in them. So the question is written here, as an ``AIMessage``, by
the node before the one that interrupts; ``awaiting`` records the pause, so a typed "确认"
that arrives as a new message can be read as the answer. The message announces no tool
call: an unanswered call is what agent-chat-ui stands in for with a made-up tool result.
"""

from __future__ import annotations

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from nodes.call_words import call_words
from nodes.common import Node, tool_context
from nodes.confirmation import confirmation_request
from nodes.services import Services
from nodes.slot_filling import display_values
from nodes.tool import changes_said
from nodes.wording import Voice
from state import AgentState, Context, PendingConfirmation, StateUpdate, ToolResult
from tools.executor.failures import classify
from tools.executor.pipeline import PreparedCall


def make_propose_node(services: Services) -> Node:
    """Build the node that announces the planned action."""

    def propose(state: AgentState, runtime: Runtime[Context]) -> StateUpdate:
        """Write the confirmation question (or the hand-over) as an AI message."""
        intent = state.get("intent", "")
        task = services.catalog.task(intent)
        language = state.get("language", "zh")
        voice = Voice(services.catalog, language)
        changed = changes_said(state, voice, services)
        if task is not None and task.agent is not None:
            text = voice.say("working_on", task=voice.label(intent))
            if changed:
                text = f"{changed}\n{text}"
            pending: PendingConfirmation = {"node": task.agent, "intent": intent, "question": text}
            return {"messages": [AIMessage(content=text)], "awaiting": pending, "step_count": 1}
        risky = [
            call
            for call in state.get("pending_tool_calls") or []
            if (card := services.tools.get(call["name"])) is not None and card.risk == "high"
        ]
        if not risky:
            return {"awaiting": None, "step_count": 1}
        ctx = tool_context(
            runtime,
            services,
            task_id=state.get("task_id", ""),
            results=state.get("tool_results") or [],
            step_count=state.get("step_count", 0),
        )
        prepared = [services.executor.prepare(dict(call), ctx) for call in risky]
        waiting = [p for p in prepared if isinstance(p, PreparedCall) and p.needs_confirmation]
        if not waiting:
            return {"awaiting": None, "step_count": 1}
        # a step of the plan that is switched off (an asked-for text) is said with the
        # question, so the user decides on the rest knowing it will not happen
        off = [
            found
            for call in state.get("pending_tool_calls") or []
            if call not in risky and (found := services.executor.switched_off(call["name"]))
        ]
        refused = "".join(
            _refusal(r, state, voice) for r in [*prepared, *off] if isinstance(r, dict)
        )
        request = confirmation_request(
            waiting,
            language,
            display=display_values(dict(state.get("slots") or {})),
            words=call_words(services.catalog, language, ctx),
        )
        question = str(request["question"])
        if refused:
            question = f"{refused}\n{question}"
        if changed:
            question = f"{changed}\n{question}"
        pending = {"node": "tool", "intent": intent, "question": question}
        # the question only: no tool call is announced before it runs, so a front-end has
        # no unanswered call to stand in for ("Successfully handled tool call."); the planned
        # calls are the interrupt's ``action_requests``, and the tool node writes each call
        # with its result once it has run
        return {"messages": [AIMessage(content=question)], "awaiting": pending, "step_count": 1}

    return propose


def _refusal(result: ToolResult, state: AgentState, voice: Voice) -> str:
    """The generic sentence for a call the executor refused while it was being prepared."""
    if result.get("status") == "success":
        return ""  # answered from its idempotency record: nothing to warn of
    outcome = classify(result)
    if outcome is None:
        return ""
    step = voice.text(f"step.{result.get('tool', '')}")
    task = step or voice.label(state.get("intent", ""))
    return voice.failure(
        outcome, result, task=task, known=list((state.get("slots") or {}).values())
    )
