"""Reply: turn tool results into natural language in the user's language.

Replies are built from the envelope's data with templates. Raw JSON and internal error
text never reach the user; a missing order is said to be missing, and nothing is invented.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
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
    error_type = result.get("error_type")
    if result["status"] == "rejected" and error_type is None:
        return render("declined", language, task=intent_label(state.get("intent", ""), language))
    if error_type == "rate_limited":
        return render("rate_limited", language)
    if error_type == "permission_denied":
        return render("not_permitted", language)
    if error_type == "validation":
        fields = ", ".join(err["field"] for err in data.get("errors", [])) or "arguments"
        return render("invalid_request", language, reason=fields)
    describe = DESCRIBERS.get(result["tool"], _describe_generic)
    return describe(result, data, state, language)


def _describe_generic(
    result: dict[str, Any], data: dict[str, Any], state: AgentState, language: str
) -> str:
    """A tool without its own wording: its summary on success, else a hand-over."""
    if result["status"] == "success" and result.get("summary"):
        return str(result["summary"])
    return render("handoff", language, task=intent_label(state.get("intent", ""), language))


def _describe_order(
    result: dict[str, Any], data: dict[str, Any], state: AgentState, language: str
) -> str:
    order_id = data.get("order_id") or (state.get("slots") or {}).get("order_id", "")
    error_type = result.get("error_type")
    if result["status"] == "success":
        return _describe_order_success(result["tool"], data, language)
    if error_type == "not_found":
        return render("order_not_found", language, order_id=order_id)
    if error_type == "user_fixable":
        status = status_label(str(data.get("reason", "")), language)
        name = "cannot_refund" if result["tool"] == "request_refund" else "cannot_urge"
        return render(name, language, order_id=order_id, status=status)
    return render("handoff", language, task=intent_label(state.get("intent", ""), language))


def _describe_weather(
    result: dict[str, Any], data: dict[str, Any], state: AgentState, language: str
) -> str:
    city = (state.get("slots") or {}).get("city") or data.get("city", "")
    if result["status"] == "success":
        humidity = data.get("humidity")
        return render(
            "weather_now",
            language,
            city=city,
            condition=data["condition"],
            temp_c=data["temp_c"],
            humidity="" if humidity is None else render("humidity", language, value=humidity),
        )
    if result.get("error_type") == "not_found":
        return render("city_not_found", language, city=city)
    if data.get("reason") == "schema_drift":
        return render("weather_format_changed", language, city=city)
    return render("weather_unavailable", language, city=city)


def _describe_sales(
    result: dict[str, Any], data: dict[str, Any], state: AgentState, language: str
) -> str:
    if result["status"] != "success":
        return render("sales_unsupported", language)
    metric_key = "metric_quantity" if data["metric"] == "quantity" else "metric_amount"
    metric = render(metric_key, language)
    rows = data["rows"]

    def value(row: dict[str, Any]) -> str:
        total = row.get("total") or 0
        if data["metric"] == "quantity":
            return render("units", language, value=total)
        return render("yuan", language, value=total / 100)

    month = _month_label(data["month"], language)
    if not rows or rows[0].get("total") is None:
        return render("sales_no_data", language, month=month)
    if data["shape"] == "total":
        return render("sales_total", language, month=month, metric=metric, value=value(rows[0]))
    if len(rows) > 1:
        ranking = "; ".join(f"{i}. {r['product']} {value(r)}" for i, r in enumerate(rows, 1))
        return render("sales_ranking", language, month=month, metric=metric, ranking=ranking)
    name = "sales_top" if data["shape"] == "top" else "sales_bottom"
    return render(
        name, language, month=month, metric=metric, product=rows[0]["product"], value=value(rows[0])
    )


def _month_label(month: str, language: str) -> str:
    year, number = month.split("-")
    if language == "zh":
        return f"{int(year)}年{int(number)}月"
    return date(int(year), int(number), 1).strftime("%B %Y")


def _describe_flight(
    result: dict[str, Any], data: dict[str, Any], state: AgentState, language: str
) -> str:
    slots = state.get("slots") or {}
    if result["status"] == "success":
        return render(
            "flight_booked",
            language,
            price=f"{data['price_cents'] / 100:,.0f}",
            **{k: v for k, v in data.items() if k != "price_cents"},
        )
    if result.get("error_type") == "not_found":
        reasons = {"sold_out": ("已售罄", "sold out"), "no_flight": ("无此航线", "no such flight")}
        zh, en = reasons.get(str(data.get("reason")), ("无座位", "no seat"))
        return render(
            "flight_unavailable",
            language,
            origin=slots.get("origin", ""),
            destination=slots.get("destination", ""),
            departure_date=slots.get("departure_date", ""),
            reason=zh if language == "zh" else en,
        )
    return render("handoff", language, task=intent_label(state.get("intent", ""), language))


def _describe_large_refund(
    result: dict[str, Any], data: dict[str, Any], state: AgentState, language: str
) -> str:
    if result["status"] != "success":
        return render("handoff", language, task=intent_label(state.get("intent", ""), language))
    name = "large_refund_approved" if data.get("status") == "approved" else "large_refund_review"
    return render(name, language, amount=f"{data['amount_cents'] / 100:,.2f}", **data)


def _describe_transfer(
    result: dict[str, Any], data: dict[str, Any], state: AgentState, language: str
) -> str:
    slots = state.get("slots") or {}
    amount = f"{(slots.get('amount_cents') or data.get('amount_cents') or 0) / 100:,.2f}"
    reason = data.get("reason")
    if result["status"] == "success" and result["tool"] == "execute_transfer":
        name = {"pending_review": "transfer_review", "completed": "transfer_done"}.get(
            str(data.get("status")), "transfer_reversed"
        )
        payee = next(
            (
                s.get("data", {}).get("payee_name")
                for s in state.get("tool_results", [])
                if s.get("tool") == "check_balance" and s.get("data")
            ),
            "",
        )
        return render(
            name,
            language,
            amount=amount,
            payee=payee,
            to_account=data.get("to_account", ""),
            transfer_id=data.get("transfer_id", ""),
        )
    if reason == "wrong_pin":
        return render("transfer_wrong_pin", language)
    if reason == "insufficient":
        return render(
            "transfer_insufficient", language, balance=f"{data.get('balance_cents', 0) / 100:,.2f}"
        )
    if reason == "no_payee":
        return render("transfer_no_payee", language, to_account=slots.get("to_account", ""))
    if reason == "compensated":
        return render("transfer_reversed", language)
    return render("transfer_failed", language)


def _describe_appointment(
    result: dict[str, Any], data: dict[str, Any], state: AgentState, language: str
) -> str:
    by_tool = {r["tool"]: r for r in state.get("tool_results") or []}
    slots = state.get("slots") or {}
    booking = by_tool.get("book_appointment")
    if booking and booking["status"] == "success":
        notify = by_tool.get("notify_patient")
        notice = render(
            "appointment_notified"
            if notify and notify["status"] == "success"
            else "appointment_not_notified",
            language,
        )
        return render("appointment_booked", language, notice=notice, **booking["data"])
    if booking and booking["status"] == "rejected" and booking.get("error_type") is None:
        return render("declined", language, task=intent_label(state.get("intent", ""), language))
    hold = by_tool.get("hold_appointment_slot")
    if hold and hold["status"] != "success":
        return render("appointment_taken", language)
    if booking:
        return render("appointment_failed", language)
    lookup = by_tool.get("list_free_slots")
    if lookup and lookup.get("error_type") == "not_found":
        return render("appointment_no_department", language, department=slots.get("department"))
    return render(
        "appointment_none",
        language,
        day=slots.get("day", ""),
        department=slots.get("department", ""),
    )


Describer = Callable[[dict[str, Any], dict[str, Any], AgentState, str], str]
DESCRIBERS: dict[str, Describer] = {
    **dict.fromkeys(
        ("query_order_status", "request_refund", "urge_delivery", "send_notification"),
        _describe_order,
    ),
    "query_weather": _describe_weather,
    "query_sales_report": _describe_sales,
    "book_flight_ticket": _describe_flight,
    "approve_large_refund": _describe_large_refund,
    **dict.fromkeys(
        (
            "list_departments",
            "list_doctors",
            "list_free_slots",
            "hold_appointment_slot",
            "book_appointment",
            "release_appointment_slot",
            "notify_patient",
        ),
        _describe_appointment,
    ),
    **dict.fromkeys(
        ("verify_identity", "check_balance", "assess_transfer_risk", "execute_transfer"),
        _describe_transfer,
    ),
}


def _describe_order_success(tool: str, data: dict[str, Any], language: str) -> str:
    if tool == "send_notification":
        return render("notification_sent", language)
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
    name = "urged_minutes" if data.get("eta_minutes") else "urged_date"  # urge_delivery
    return render(name, language, **data)
