"""The appointment agent: parallel lookups, one confirmation, then hold → book → notify.

Independent lookups (departments, doctors, free slots) run concurrently. The confirmation
comes before any effect. A failed booking releases the hold; a failed notification leaves
the booking in place and is reported as such.
"""

from __future__ import annotations

import json
from typing import Any

from langgraph.runtime import Runtime

from nodes.actions import confirm_then_run
from nodes.call_words import call_words
from nodes.common import Node, context_of, protocol_message, tool_context
from nodes.services import Services
from nodes.tool import changes_said, reread
from nodes.wording import Voice
from scenarios.appointment.tools import in_period, patient_name
from scenarios.appointment.wording import department_label
from state import AgentState, Context, StateUpdate, ToolResult
from tools.executor.envelope import CallRequest
from tools.executor.failures import classify
from tools.executor.pipeline import Decision

AGENT = "appointment"
"""The node name of the appointment agent in the main graph."""


def make_appointment_node(services: Services) -> Node:
    """Build the node that books a medical appointment end to end."""

    def appointment(state: AgentState, runtime: Runtime[Context]) -> StateUpdate:
        """Look up in parallel, confirm, then hold, book and notify in order."""
        executor = services.executor
        slots = state.get("slots") or {}
        voice = Voice(services.catalog, state.get("language", "zh"))
        results: list[ToolResult] = []

        def ctx() -> Any:
            return tool_context(
                runtime, services, task_id=state.get("task_id", ""), results=results
            )

        query = {"department": slots.get("department", "")}
        lookups = executor.execute_many(
            [
                _pinned(state, {"name": "list_departments", "parameters": query}),
                _pinned(state, {"name": "list_doctors", "parameters": query}),
                _pinned(
                    state,
                    {"name": "list_free_slots", "parameters": {**query, "day": slots.get("day")}},
                ),
            ],
            ctx(),
        )
        results.extend(lookups)
        free = [
            s
            for s in (lookups[2].get("data") or {}).get("slots") or []
            if in_period(s["slot_time"], slots.get("period"))
            and slots.get("doctor") in (None, s["doctor"])  # "王医生": that doctor's slots
        ]
        if any(r["status"] != "success" for r in lookups) or not free:
            return _done(state, runtime, results)  # the reply offers other days or times
        chosen = free[0]
        patient = patient_name(services.database, context_of(runtime).user_id)
        slot_ref = {"slot_id": chosen["slot_id"]}

        def hold(decision: Decision | None) -> list[ToolResult]:
            held = executor.execute(
                {"name": "hold_appointment_slot", "parameters": slot_ref}, ctx()
            )
            results.append(held)
            return [held]

        outcome = confirm_then_run(
            executor,
            [{"name": "book_appointment", "parameters": {**slot_ref, "patient_name": patient}}],
            ctx(),
            language=voice.language,
            words=call_words(services.catalog, voice.language, ctx()),
            before_effects=hold,
            provides=("hold_appointment_slot",),
            preface=changes_said(state, voice, services),
            answer=state.get("answer"),
        )
        if outcome.reread is not None:  # words, not a yes or a no: nothing was held or booked
            return reread(state, outcome.reread)
        booking = outcome.results[-1]
        if booking.get("tool") != "book_appointment":
            return _done(state, runtime, results)  # the hold failed: nothing was booked
        results.append(booking)
        if booking.get("status") != "success":
            if outcome.decision is not None and outcome.decision.kind != "reject":
                release = {"name": "release_appointment_slot", "parameters": slot_ref}
                results.append(executor.execute(release, ctx()))
            return _done(state, runtime, results)
        if classify(booking) is not None:  # recorded, not final (held for review): no notice
            return _done(state, runtime, results)
        notice = voice.say(
            "appointment_notice",
            **{
                **booking["data"],
                "department": department_label(booking["data"].get("department"), voice),
            },
        )
        notify = {"name": "notify_patient", "parameters": {"content": notice}}
        results.append(executor.execute(notify, ctx()))
        return _done(state, runtime, results)

    return appointment


def _pinned(state: AgentState, call: CallRequest) -> CallRequest:
    """A lookup pinned to this step (reads are otherwise never recorded).

    When the node runs again on the user's yes, it sees what the question was built on, so
    the yes to 15:00 is never applied to another slot found then; a new step (a correction)
    looks afresh.
    """
    key = json.dumps(
        [state.get("task_id", ""), state.get("step_count", 0), call["name"], call["parameters"]],
        sort_keys=True,
        ensure_ascii=False,
    )
    return {**call, "idempotency_key": key}


def _done(state: AgentState, runtime: Runtime[Context], results: list[ToolResult]) -> StateUpdate:
    notes = [
        protocol_message(
            state,
            runtime,
            role="tool",
            content={
                "tool": r.get("tool"),
                "status": r.get("status"),
                "summary": r.get("summary", ""),
                "error_type": r.get("error_type"),
            },
            error=r.get("message") if r.get("status") != "success" else None,
        )
        for r in results
    ]
    booked = next((r for r in results if r.get("tool") == "book_appointment"), None)
    decisive = booked or next((r for r in results if r.get("status") != "success"), None)
    failed = decisive if decisive and decisive.get("status") != "success" else None
    return {
        "tool_results": results,
        "protocol": notes,
        "error": failed,
        "step_count": 1,
        "awaiting": None,
        "answer": None,
    }
