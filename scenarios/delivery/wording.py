"""What the delivery agent says: task names, questions, and every order result in zh and en."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

from contract.scenario import Describer, Speaker, Wording
from scenarios.delivery.results import (
    CancelData,
    ListedOrderData,
    OrderListData,
    OrderStatusData,
    RefundData,
    UrgeData,
)
from state import AgentState, ToolResult
from tools.executor.envelope import result_data

WORDING: Wording = {
    "slot.order_id": {"zh": "订单号", "en": "order number"},
    "beyond.address_change": {
        "zh": "订单的收货地址暂时不能在这里修改，正在为您转接人工客服，请稍候。",
        "en": "I can't change an order's address here; I'm passing you to a human agent, please hold on.",
    },
    "beyond.invoice": {
        "zh": "发票暂时不能在这里开具，正在为您转接人工客服，请稍候。",
        "en": "I can't issue an invoice here; I'm passing you to a human agent, please hold on.",
    },
    "intent.CHECK_ORDER_STATUS": {"zh": "查询订单状态", "en": "check an order's status"},
    "intent.REQUEST_REFUND": {"zh": "申请退款", "en": "request a refund"},
    "intent.CANCEL_ORDER": {"zh": "取消订单", "en": "cancel an order"},
    "intent.URGE_DELIVERY": {"zh": "催单", "en": "hurry a delivery"},
    "intent.LIST_MY_ORDERS": {"zh": "查看我的订单", "en": "list your orders"},
    "order_cancelled": {
        "zh": "订单 {order_id}（{item}）已取消。",
        "en": "Order {order_id} ({item}) has been cancelled.",
    },
    "cannot_cancel": {
        "zh": "订单 {order_id} 当前为“{status}”状态，已无法取消。如需退款请告诉我。",
        "en": "Order {order_id} is {status}, so it can no longer be cancelled. Ask me for a refund instead.",
    },
    "offer.order_id": {"zh": "您最近的订单：{orders}。", "en": " Your latest orders: {orders}."},
    "orders_none": {
        "zh": "您名下暂时没有订单。",
        "en": "There are no orders on your account.",
    },
    "offered_order": {
        "zh": "{order_id}（{item}，{status}）",
        "en": "{order_id} ({item}, {status})",
    },
    "status.delivering": {"zh": "配送中", "en": "out for delivery"},
    "status.delivered": {"zh": "已送达", "en": "delivered"},
    "status.shipped": {"zh": "已发货", "en": "shipped"},
    "status.pending_payment": {"zh": "待付款", "en": "awaiting payment"},
    "status.cancelled": {"zh": "已取消", "en": "cancelled"},
    "refund_status.submitted": {"zh": "已提交，等待审核", "en": "submitted, awaiting approval"},
    "refund_status.approved": {"zh": "已批准", "en": "approved"},
    "refund_status.pending_review": {"zh": "人工审核中", "en": "under review by a person"},
    "refund_status.rejected": {"zh": "未通过", "en": "declined"},
    "refund_status.refunded": {"zh": "已退回", "en": "paid back"},
    "refund_status.unknown": {"zh": "处理中", "en": "being processed"},
    "ask.order_id": {
        "zh": "好的，我来帮您{task}。请提供您的订单号（格式：OD-YYYYMMDD-XXX，或 9–12 位数字）。",
        "en": "Sure, I can help you {task}. Please give me your order number (OD-YYYYMMDD-XXX, or 9–12 digits).",
    },
    "invalid.order_id": {
        "zh": "“{value}”不是有效的订单号。请提供订单号（格式：OD-YYYYMMDD-XXX，或 9–12 位数字）。",
        "en": "“{value}” is not a valid order number. Please give me the order number (OD-YYYYMMDD-XXX, or 9–12 digits).",
    },
    "multiple.order_id": {
        "zh": "您提到了多个订单号（{value}），请问是哪一个？",
        "en": "You mentioned several order numbers ({value}). Which one?",
    },
    "status_delivering": {
        "zh": "您的订单 {order_id}（{item}）正在配送中，预计 {eta_minutes} 分钟送达，请耐心等待。",
        "en": "Your order {order_id} ({item}) is out for delivery and should arrive in about {eta_minutes} minutes.",
    },
    "status_shipped": {
        "zh": "您的订单 {order_id}（{item}）已发货，预计 {eta_date} 送达。",
        "en": "Your order {order_id} ({item}) has shipped; expected on {eta_date}.",
    },
    "status_delivered": {
        "zh": "您的订单 {order_id}（{item}）已送达。如未收到，请联系骑手或告诉我，我帮您处理。",
        "en": "Your order {order_id} ({item}) has been delivered. If you did not receive it, tell me and I'll help.",
    },
    "status_other": {
        "zh": "您的订单 {order_id}（{item}）当前状态：{status}。",
        "en": "Your order {order_id} ({item}) is {status}.",
    },
    "refund_submitted": {
        "zh": "已为订单 {order_id} 提交退款申请（退款单号 {refund_id}，金额 {amount} 元），审核通过后原路退回。",
        "en": "I've filed a refund request for order {order_id} (refund {refund_id}, {amount} yuan). It goes back to your original payment method once approved.",
    },
    "refund_exists": {
        "zh": "订单 {order_id} 已有退款申请（退款单号 {refund_id}，状态：{refund_status}），无需重复提交。",
        "en": "Order {order_id} already has a refund request (refund {refund_id}, {refund_status}); no need to file another.",
    },
    "urged_minutes": {
        "zh": "已帮您催促骑手加快配送订单 {order_id}，预计 {eta_minutes} 分钟内送达。",
        "en": "I've asked the rider to hurry with order {order_id}; it should arrive within {eta_minutes} minutes.",
    },
    "urged_date": {
        "zh": "已帮您催促物流加快配送订单 {order_id}，预计 {eta_date} 送达。",
        "en": "I've asked the carrier to hurry order {order_id}; expected on {eta_date}.",
    },
    "step.list_my_orders": {"zh": "列出您最近的订单", "en": "list your latest orders"},
    "step.send_notification": {"zh": "发送短信通知", "en": "send you the text message"},
    "notification_sent": {
        "zh": "已按您的要求发送短信通知。",
        "en": "As you asked, I've sent you a text message with this.",
    },
    "order_not_found": {
        "zh": "没有找到订单 {order_id}。请核对订单号后再试，或告诉我正确的订单号。",
        "en": "I couldn't find order {order_id}. Please check the number, or tell me the right one.",
    },
    "cannot_refund": {
        "zh": "订单 {order_id} 当前为“{status}”状态，无需退款。",
        "en": "Order {order_id} is {status}, so there is nothing to refund.",
    },
    "cannot_urge": {
        "zh": "订单 {order_id} 当前为“{status}”状态，无法催单。",
        "en": "Order {order_id} is {status}, so it can't be hurried.",
    },
}


def status_label(status: str, speaker: Speaker) -> str:
    """Name an order status for the user."""
    return speaker.say(f"status.{status}") if status in _STATUSES else status


_STATUSES = {key.removeprefix("status.") for key in WORDING if key.startswith("status.")}


def refund_status_label(status: str, speaker: Speaker) -> str:
    """Name a refund's state for the user ("submitted" → "已提交，等待审核"), never the code."""
    key = f"refund_status.{status}"
    return speaker.say(key if key in WORDING else "refund_status.unknown")


_REFUSALS = {
    "request_refund": "cannot_refund",
    "cancel_order": "cannot_cancel",
    "urge_delivery": "cannot_urge",
}
"""The order tools that refuse an order in the wrong state, and how each says so."""


class OrderNamed(TypedDict, total=False):
    """What every order tool's data holds, success or refusal: the order, and why it refused."""

    order_id: str
    reason: str
    """A refusal's reason: the order's status (``ToolError`` details)."""


def describe_order(result: ToolResult, state: AgentState, speaker: Speaker) -> str | None:
    """Say an order tool's success, a missing order, or the order state that refuses it.

    Any other failure is not the order's to explain: ``None``, the generic sentence.
    """
    data = result_data(result, OrderNamed)
    order_id = data.get("order_id") or (state.get("slots") or {}).get("order_id", "")
    error_type = result.get("error_type")
    if result.get("status") == "success":
        return _describe_success(result.get("tool", ""), result, speaker)
    if error_type == "not_found":
        return speaker.say("order_not_found", order_id=order_id)
    name = _REFUSALS.get(result.get("tool", ""))
    reason = str(data.get("reason", ""))
    if error_type == "user_fixable" and name is not None and reason in _STATUSES:
        return speaker.say(name, order_id=order_id, status=status_label(reason, speaker))
    return None


def _describe_success(tool: str, result: ToolResult, speaker: Speaker) -> str:
    if tool == "send_notification":
        return speaker.say("notification_sent")
    if tool == "query_order_status":
        data = result_data(result, OrderStatusData)
        status = data["status"]
        name = {
            "delivering": "status_delivering",
            "shipped": "status_shipped",
            "delivered": "status_delivered",
        }.get(status, "status_other")
        return speaker.say(name, **{**data, "status": status_label(status, speaker)})
    if tool == "request_refund":
        refund = result_data(result, RefundData)
        amount = f"{refund['amount_cents'] / 100:.2f}"
        if refund.get("already_requested"):
            return speaker.say(
                "refund_exists",
                order_id=refund["order_id"],
                refund_id=refund["refund_id"],
                refund_status=refund_status_label(str(refund["status"]), speaker),
            )
        return speaker.say("refund_submitted", amount=amount, **refund)
    if tool == "cancel_order":
        return speaker.say("order_cancelled", **result_data(result, CancelData))
    urged = result_data(result, UrgeData)  # urge_delivery
    name = "urged_minutes" if urged.get("eta_minutes") else "urged_date"
    return speaker.say(name, **urged)


def describe_orders(result: ToolResult, state: AgentState, speaker: Speaker) -> str | None:
    """List the caller's orders; a failure is the generic sentence's to say (``None``)."""
    orders = result_data(result, OrderListData).get("orders") or []
    if result.get("status") != "success":
        return None
    if not orders:
        return speaker.say("orders_none")
    return order_offer(orders, speaker).strip()


def order_offer(orders: Sequence[ListedOrderData], speaker: Speaker) -> str:
    """Name the orders (number, item, status) in one sentence that offers them."""
    items = ("、" if speaker.language == "zh" else "; ").join(
        speaker.say(
            "offered_order",
            order_id=order["order_id"],
            item=order["item"],
            status=status_label(str(order["status"]), speaker),
        )
        for order in orders
    )
    return speaker.say("offer.order_id", orders=items)


DESCRIBE: dict[str, Describer] = {
    **dict.fromkeys(
        (
            "query_order_status",
            "request_refund",
            "urge_delivery",
            "cancel_order",
            "send_notification",
        ),
        describe_order,
    ),
    "list_my_orders": describe_orders,
}
