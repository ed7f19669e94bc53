"""Delivery customer service: status, urging, cancelling, refunds, a notification on request.

Staff (role ``agent``) can also notify many customers at once (``NOTIFY_CUSTOMERS``, a
background job); its cues and extractor live in ``jobs`` and are merged here.
"""

from __future__ import annotations

from datetime import date

from nodes.tasks import Scenario, SlotResult, TaskSpec
from scenarios.delivery import jobs, understanding
from scenarios.delivery.seed import SEED
from scenarios.delivery.suggest import suggest_order
from scenarios.delivery.tools import ORDER_TOOLS
from scenarios.delivery.wording import DESCRIBE, WORDING


def extract(text: str, intent: str, *, today: date) -> SlotResult:
    """Extract with the bulk notification's extractor for its intent, else the orders'."""
    if intent in jobs.CUES:
        return jobs.extract_notify(text, intent, today=today)
    return understanding.extract(text, intent, today=today)


SCENARIO = Scenario(
    name="delivery",
    tasks=(
        TaskSpec(
            intent="CHECK_ORDER_STATUS",
            tool="query_order_status",
            required_slots=("order_id",),
            on_request=(("notify", "send_notification"),),
            suggest=suggest_order,
        ),
        TaskSpec(
            intent="REQUEST_REFUND",
            tool="request_refund",
            required_slots=("order_id",),
            suggest=suggest_order,
        ),
        TaskSpec(
            intent="URGE_DELIVERY",
            tool="urge_delivery",
            required_slots=("order_id",),
            suggest=suggest_order,
        ),
        TaskSpec(
            intent="CANCEL_ORDER",
            tool="cancel_order",
            required_slots=("order_id",),
            suggest=suggest_order,
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
    cues={**understanding.CUES, **jobs.CUES},
    topic_cues=understanding.TOPIC_CUES,
    support=understanding.support,
    extract=extract,
    wording={**WORDING, **jobs.WORDING},
    describe={**DESCRIBE, **jobs.DESCRIBE},
    seed=SEED,
)
