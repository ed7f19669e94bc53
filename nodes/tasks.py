"""What each intent needs: its required slots and the tool that fulfils it."""

from __future__ import annotations

from dataclasses import dataclass

UNKNOWN = "UNKNOWN"


@dataclass(frozen=True)
class TaskSpec:
    """How the graph serves one intent."""

    intent: str
    """The intent label."""
    tool: str
    """The tool that fulfils it."""
    required_slots: tuple[str, ...]
    """Slots that must be known before the tool runs."""
    handoff_on_failure: bool = True
    """When the tool keeps failing, hand over to a human (orders, money) or just say so."""
    order_related: bool = True
    """Order words and order numbers count as evidence for this intent."""
    agent: str = "customer_service"
    """Which agent carries the task out: the finance agent has tools the main one lacks."""
    on_request: tuple[tuple[str, str], ...] = ()
    """(slot, tool): a tool added to the plan only when the user asked for it (the slot)."""


TASKS: dict[str, TaskSpec] = {
    spec.intent: spec
    for spec in (
        TaskSpec(
            "CHECK_ORDER_STATUS",
            "query_order_status",
            ("order_id",),
            on_request=(("notify", "send_notification"),),
        ),
        TaskSpec("REQUEST_REFUND", "request_refund", ("order_id",)),
        TaskSpec("URGE_DELIVERY", "urge_delivery", ("order_id",)),
        TaskSpec(
            "QUERY_WEATHER",
            "query_weather",
            ("city",),
            handoff_on_failure=False,
            order_related=False,
        ),
        TaskSpec(
            "BOOK_FLIGHT",
            "book_flight_ticket",
            ("origin", "destination", "departure_date", "passenger_name", "passenger_id"),
            order_related=False,
        ),
        TaskSpec(
            "TRANSFER_MONEY",
            "execute_transfer",
            ("to_account", "amount_cents", "pin"),
            order_related=False,
            agent="finance",
        ),
        TaskSpec(
            "BOOK_APPOINTMENT",
            "book_appointment",
            ("department", "day"),
            order_related=False,
            agent="appointment",
        ),
        TaskSpec(
            "QUERY_SALES",
            "query_sales_report",
            ("question",),
            handoff_on_failure=False,
            order_related=False,
        ),
    )
}
