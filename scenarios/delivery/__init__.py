"""Delivery customer service: status, urging, cancelling, refunds, a notification on request."""

from __future__ import annotations

from nodes.tasks import Scenario, TaskSpec
from scenarios.delivery import understanding
from scenarios.delivery.seed import SEED
from scenarios.delivery.tools import ORDER_TOOLS
from scenarios.delivery.wording import DESCRIBE, WORDING

SCENARIO = Scenario(
    name="delivery",
    tasks=(
        TaskSpec(
            intent="CHECK_ORDER_STATUS",
            tool="query_order_status",
            required_slots=("order_id",),
            on_request=(("notify", "send_notification"),),
        ),
        TaskSpec(intent="REQUEST_REFUND", tool="request_refund", required_slots=("order_id",)),
        TaskSpec(intent="URGE_DELIVERY", tool="urge_delivery", required_slots=("order_id",)),
        TaskSpec(intent="CANCEL_ORDER", tool="cancel_order", required_slots=("order_id",)),
    ),
    cards=ORDER_TOOLS,
    grants={
        "customer": frozenset(
            {"order:read", "order:refund", "order:urge", "order:notify", "order:cancel"}
        ),
        "agent": frozenset({"order:read", "order:urge", "order:any"}),
    },
    cues=understanding.CUES,
    topic_cues=understanding.TOPIC_CUES,
    support=understanding.support,
    extract=understanding.extract,
    wording=WORDING,
    describe=DESCRIBE,
    seed=SEED,
)
