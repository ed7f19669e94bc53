"""Delivery customer service: status, urging, cancelling, refunds, a notification on request.

Staff (role ``agent``) can also notify many customers at once (``NOTIFY_CUSTOMERS``, a
background job); its cues and extractor live in ``jobs`` and are merged here.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

from contract.scenario import Scenario, SlotResult, TaskSpec, load_examples
from scenarios.delivery import confirm, jobs, understanding
from scenarios.delivery.reasons import refund_reason
from scenarios.delivery.seed import SEED
from scenarios.delivery.suggest import suggest_order
from scenarios.delivery.tools import ORDER_TOOLS
from scenarios.delivery.wording import DESCRIBE, WORDING


def extract(text: str, intent: str, *, today: date) -> SlotResult:
    """Extract with the bulk notification's extractor for its intent, else the orders'.

    A refund also takes the user's own reason, when the message gives one ("洒了").
    """
    if intent == "NOTIFY_CUSTOMERS":
        return jobs.extract_notify(text, intent, today=today)
    found = understanding.extract(text, intent, today=today)
    reason = refund_reason(text) if intent == "REQUEST_REFUND" else None
    if reason is None:
        return found
    return replace(found, slots={**found.slots, "reason": reason})


def _order_task(intent: str, tool: str, **more: Any) -> TaskSpec:
    """An order task: it needs the order number, which the caller's own orders may give."""
    return TaskSpec(
        intent=intent, tool=tool, required_slots=("order_id",), suggest=suggest_order, **more
    )


SCENARIO = Scenario(
    examples=load_examples(Path(__file__).parent / "examples.yaml"),
    name="delivery",
    tasks=(
        _order_task(
            "CHECK_ORDER_STATUS",
            "query_order_status",
            on_request=(("notify", "send_notification"),),
        ),
        _order_task("REQUEST_REFUND", "request_refund", optional_slots=("reason",)),
        _order_task("URGE_DELIVERY", "urge_delivery"),
        _order_task("CANCEL_ORDER", "cancel_order"),
        TaskSpec(
            intent="LIST_MY_ORDERS",
            tool="list_my_orders",
            required_slots=(),
            handoff_on_failure=False,
        ),
        TaskSpec(
            intent="NOTIFY_CUSTOMERS",
            tool="send_bulk_notification",
            required_slots=("audience", "notice", "send_via"),
        ),
    ),
    cards=(*ORDER_TOOLS, *jobs.DELIVERY_JOB_TOOLS),
    grants={
        "customer": frozenset(
            {"order:read", "order:refund", "order:urge", "order:notify", "order:cancel"}
        ),
        "agent": frozenset({"order:read", "order:urge", "order:any", "notify:bulk"}),
    },
    beyond=understanding.BEYOND,
    bare=understanding.BARE,
    extract=extract,
    wording={**WORDING, **jobs.WORDING, **confirm.WORDING},
    describe={**DESCRIBE, **jobs.DESCRIBE},
    confirm=confirm.CONFIRM,
    shown=confirm.SHOWN,
    seed=SEED,
)
