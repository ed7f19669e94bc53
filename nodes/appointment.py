"""Medical appointments: parallel lookups, then one confirmation, then hold → book → notify.

Independent lookups (departments, doctors, free slots) run concurrently. The confirmation
comes before any effect. A failed booking releases the hold; a failed notification leaves
the booking in place and is reported as such.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from nodes.common import Node, context_of, protocol_message, tool_context
from nodes.confirmation import read_decision
from nodes.prompts import render
from nodes.services import Services
from state import AgentState, Context
from tools.executor import envelope
from tools.registry import ToolContext


def make_appointment_node(services: Services) -> Node:
    """Build the node that books a medical appointment end to end."""

    def appointment(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
        """Look up in parallel, confirm, then hold, book and notify in order."""
        executor = services.executor
        context = context_of(runtime)
        slots = state.get("slots") or {}
        language = state.get("language", "zh")
        results: list[dict[str, Any]] = []

        def ctx() -> ToolContext:
            return tool_context(
                runtime,
                task_id=state.get("task_id", ""),
                resources=services.database,
                results=results,
            )

        query = {"department": slots.get("department", "")}
        lookups = executor.execute_many(
            [
                {"name": "list_departments", "parameters": query},
                {"name": "list_doctors", "parameters": query},
                {"name": "list_free_slots", "parameters": {**query, "day": slots.get("day")}},
            ],
            ctx(),
        )
        results.extend(lookups)
        free = (lookups[2].get("data") or {}).get("slots") or []
        if any(r["status"] != "success" for r in lookups) or not free:
            return _done(state, runtime, results)
        chosen = free[0]
        patient = services.database.query_one(
            "SELECT display_name FROM users WHERE user_id = ?", (context.user_id,)
        )
        patient_name = str(patient["display_name"]) if patient else context.user_id
        answer = interrupt(
            {
                "type": "confirm_action",
                "question": render(
                    "confirm_appointment",
                    language,
                    day=slots.get("day"),
                    time=chosen["slot_time"],
                    department=lookups[2]["data"]["department"],
                    doctor=chosen["doctor"],
                    patient=patient_name,
                ),
                "actions": [
                    {
                        "tool": "book_appointment",
                        "arguments": {"slot_id": chosen["slot_id"], "patient_name": patient_name},
                    }
                ],
            }
        )
        decision = read_decision(answer)
        if decision.kind != "approve":
            results.append(
                envelope(
                    tool="book_appointment",
                    status="rejected",
                    message="the user did not confirm; nothing was held or booked",
                    request_id=state.get("task_id", ""),
                )
            )
            return _done(state, runtime, results)
        hold = executor.execute(
            {"name": "hold_appointment_slot", "parameters": {"slot_id": chosen["slot_id"]}}, ctx()
        )
        results.append(hold)
        if hold["status"] != "success":
            return _done(state, runtime, results)
        booking = executor.execute(
            {
                "name": "book_appointment",
                "parameters": {"slot_id": chosen["slot_id"], "patient_name": patient_name},
            },
            ctx(),
            decision=decision,
        )
        results.append(booking)
        if booking["status"] != "success":
            results.append(
                executor.execute(
                    {
                        "name": "release_appointment_slot",
                        "parameters": {"slot_id": chosen["slot_id"]},
                    },
                    ctx(),
                )
            )
            return _done(state, runtime, results)
        data = booking["data"]
        notice = render("appointment_notice", language, **data)
        results.append(
            executor.execute({"name": "notify_patient", "parameters": {"content": notice}}, ctx())
        )
        return _done(state, runtime, results)

    return appointment


def _done(
    state: AgentState, runtime: Runtime[Context], results: list[dict[str, Any]]
) -> dict[str, Any]:
    notes = [
        protocol_message(
            state,
            runtime,
            role="tool",
            content={
                "tool": r["tool"],
                "status": r["status"],
                "summary": r.get("summary", ""),
                "error_type": r.get("error_type"),
            },
            error=r.get("message") if r["status"] != "success" else None,
        )
        for r in results
    ]
    booked = next((r for r in results if r["tool"] == "book_appointment"), None)
    decisive = booked or next((r for r in results if r["status"] != "success"), None)
    failed = decisive if decisive and decisive["status"] != "success" else None
    return {"tool_results": results, "protocol": notes, "error": failed, "step_count": 1}
