"""Clarification: ask for what is missing, or ask what the user means. Ends the turn."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from nodes.common import protocol_message
from nodes.prompts import intent_label, render
from nodes.tasks import TASKS
from state import AgentState, Context


def clarify(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Ask one specific question; the user's next message on the thread answers it."""
    question = clarifying_question(state)
    note = protocol_message(
        state,
        runtime,
        role="assistant",
        content=question,
        confidence=state.get("confidence", 1.0),
    )
    return {"messages": [AIMessage(content=question)], "protocol": [note], "step_count": 1}


def clarifying_question(state: AgentState) -> str:
    """Choose the question: the missing slot if the task is known, else the intent."""
    language = state.get("language", "zh")
    intent = state.get("intent", "")
    unsure = state.get("decision") == "clarify"
    waiting = bool(state.get("missing_slots"))
    if unsure and not waiting:
        candidates = [c for c in state.get("intent_candidates") or [] if c in TASKS]
        if len(candidates) >= 2:
            return render(
                "ask_between",
                language,
                first=intent_label(candidates[0], language),
                second=intent_label(candidates[1], language),
            )
        return render("ask_intent", language)
    missing = state.get("missing_slots") or []
    invalid_id = (state.get("invalid_slots") or {}).get("passenger_id")
    if invalid_id:
        value, _, reason = invalid_id.partition(": ")
        reasons = {"check digit does not match": ("校验位不正确", "wrong check digit")}
        zh, en = reasons.get(reason, (reason, reason))
        return render(
            "invalid_passenger_id", language, value=value, reason=zh if language == "zh" else en
        )
    if "city" in missing:
        return render("ask_city", language, task=intent_label(intent, language))
    if missing and missing != ["order_id"]:
        separator = "、" if language == "zh" else ", "
        names = separator.join(render(f"slot_{name}", language) for name in missing)
        return render("ask_slots", language, task=intent_label(intent, language), slots=names)
    invalid = (state.get("invalid_slots") or {}).get("order_id")
    if invalid:
        value, _, _reason = invalid.partition(": ")
        if value == "multiple":
            return render("multiple_order_ids", language, value=_reason)
        return render("invalid_order_id", language, value=value)
    return render("ask_order_id", language, task=intent_label(intent, language))
