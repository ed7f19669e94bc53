"""What a refund, a cancellation and a bulk notice will do, said before they run.

"即将执行：request_refund（order_id=…, reason=用户申请退款）" becomes "为订单 OD-20240618-002
（麻辣香锅）申请退款 36.00 元，原因：洒了。": the order as the user knows it (its item), the
amount in yuan, the user's own reason when they gave one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from contract.scenario import Confirmer, Speaker, Text, Wording
from scenarios.delivery.tools import DEFAULT_REFUND_REASON
from tools.registry.context import ToolContext

WORDING: Wording = {
    "confirm.request_refund": {
        "zh": "为订单 {order_id}（{item}）申请退款 {amount} 元{reason}。",
        "en": "Request a refund of {amount} yuan for order {order_id} ({item}){reason}.",
    },
    "confirm.refund_reason": {"zh": "，原因：{reason}", "en": ", because: {reason}"},
    "confirm.cancel_order": {
        "zh": "取消订单 {order_id}（{item}，{amount} 元）。",
        "en": "Cancel order {order_id} ({item}, {amount} yuan).",
    },
    "confirm.send_bulk_notification": {
        "zh": "通过{send_via}向{audience}发送通知：“{notice}”。",
        "en": "Send {audience} this message by {send_via}: “{notice}”.",
    },
    "confirm.recipients": {"zh": "{count} 位客户", "en": "{count} customers"},
    "slot.reason": {"zh": "退款原因", "en": "reason"},
    "audience.delivering": {
        "zh": "所有配送中订单的客户",
        "en": "every customer with an order in delivery",
    },
    "send_via.sms": {"zh": "短信", "en": "text message"},
    "send_via.in_app": {"zh": "站内信", "en": "in-app message"},
}


def _order(ctx: ToolContext, order_id: str) -> tuple[str, str]:
    """The order's item and amount in yuan, as the confirmation names them."""
    row = ctx.database().query_one(
        "SELECT item, amount_cents FROM orders WHERE order_id = ?", (order_id,)
    )
    if row is None:  # it passed its checks a moment ago; say the order by its number only
        return "", ""
    return str(row["item"]), f"{int(row['amount_cents']) / 100:,.2f}"


def refund(arguments: Mapping[str, Any], ctx: ToolContext, speaker: Speaker) -> str:
    """Say the refund: which order, how much, and the user's own reason if they gave one."""
    order_id = str(arguments.get("order_id", ""))
    item, amount = _order(ctx, order_id)
    said = str(arguments.get("reason") or "")
    reason = (
        speaker.say("confirm.refund_reason", reason=said)
        if said and said != DEFAULT_REFUND_REASON
        else ""
    )
    return speaker.say(
        "confirm.request_refund", order_id=order_id, item=item, amount=amount, reason=reason
    )


def cancel(arguments: Mapping[str, Any], ctx: ToolContext, speaker: Speaker) -> str:
    """Say the cancellation: which order, and what it was for."""
    order_id = str(arguments.get("order_id", ""))
    item, amount = _order(ctx, order_id)
    return speaker.say("confirm.cancel_order", order_id=order_id, item=item, amount=amount)


def bulk_notice(arguments: Mapping[str, Any], ctx: ToolContext, speaker: Speaker) -> str:
    """Say the bulk notice: to whom, by which channel, what."""
    audience = arguments.get("audience")
    ids = arguments.get("user_ids") or []
    recipients = (
        shown_enum("audience", audience, speaker.language)
        if audience
        else speaker.say("confirm.recipients", count=len(ids))
    )
    return speaker.say(
        "confirm.send_bulk_notification",
        audience=recipients,
        send_via=shown_enum("send_via", arguments.get("send_via", "sms"), speaker.language),
        notice=arguments.get("notice", ""),
    )


def shown_enum(kind: str, value: Any, language: str) -> str:
    """A stored choice ("delivering", "sms") as a person reads it; unknown ones as they are."""
    text: Text | None = WORDING.get(f"{kind}.{value}")
    if text is None:
        return str(value)
    return text.get(language) or text["zh"]


CONFIRM: dict[str, Confirmer] = {
    "request_refund": refund,
    "cancel_order": cancel,
    "send_bulk_notification": bulk_notice,
}

SHOWN = {
    "audience": lambda value, language: shown_enum("audience", value, language),
    "send_via": lambda value, language: shown_enum("send_via", value, language),
}
"""Choices stored as codes, as the card shows them."""
