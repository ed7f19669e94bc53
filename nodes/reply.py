"""Reply: turn tool results into natural language in the user's language.

Replies are built from the envelope's data with templates. Raw JSON and internal error
text never reach the user; a missing order is said to be missing, and nothing is invented.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from nodes.common import protocol_message
from nodes.prompts import intent_label, render, status_label
from state import AgentState, Context


def reply(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Answer the user from this task's latest tool results."""
    language = state.get("language", "zh")
    results = _latest_results(state)
    text = "\n".join(describe_result(result, state, language) for result in results)
    note = protocol_message(
        state,
        runtime,
        role="assistant",
        content=text,
        confidence=state.get("confidence", 1.0),
    )
    return {"messages": [AIMessage(content=text)], "protocol": [note], "step_count": 1}


def _latest_results(state: AgentState) -> list[dict[str, Any]]:
    count = len(state.get("pending_tool_calls") or []) or 1
    return (state.get("tool_results") or [])[-count:]


def describe_result(result: dict[str, Any], state: AgentState, language: str) -> str:
    """Say what one tool result means for the user."""
    data = result.get("data") or {}
    order_id = data.get("order_id") or (state.get("slots") or {}).get("order_id", "")
    if result["status"] == "success":
        return _describe_success(result["tool"], data, language)
    error_type = result.get("error_type")
    if result["status"] == "rejected" and error_type is None:
        return render("declined", language, task=intent_label(state.get("intent", ""), language))
    if error_type == "rate_limited":
        return render("rate_limited", language)
    if error_type == "not_found":
        return render("order_not_found", language, order_id=order_id)
    if error_type == "user_fixable":
        status = status_label(str(data.get("reason", "")), language)
        name = "cannot_refund" if result["tool"] == "request_refund" else "cannot_urge"
        return render(name, language, order_id=order_id, status=status)
    if error_type == "permission_denied":
        return render("not_permitted", language)
    if error_type == "validation":
        fields = ", ".join(err["field"] for err in data.get("errors", [])) or "arguments"
        return render("invalid_request", language, reason=fields)
    return render("handoff", language, task=result["tool"])


def _describe_success(tool: str, data: dict[str, Any], language: str) -> str:
    if tool == "query_order_status":
        status = data["status"]
        name = {
            "delivering": "status_delivering",
            "shipped": "status_shipped",
            "delivered": "status_delivered",
        }.get(status, "status_other")
        return render(name, language, **{**data, "status": status_label(status, language)})
    if tool == "request_refund":
        amount = f"{data['amount_cents'] / 100:.2f}"
        if data.get("already_requested"):
            return render(
                "refund_exists",
                language,
                order_id=data["order_id"],
                refund_id=data["refund_id"],
                refund_status=data["status"],
            )
        return render("refund_submitted", language, amount=amount, **data)
    if tool == "urge_delivery":
        name = "urged_minutes" if data.get("eta_minutes") else "urged_date"
        return render(name, language, **data)
    summary = data.get("summary") if isinstance(data, dict) else None
    return str(summary or "")
