"""Food-delivery order tools: status, refund request and delivery urging.

Handlers get validated arguments and a ``ToolContext``; they never see the model's raw
output, and they read the user only from the context. Each raises a ``ToolError`` subclass
for anything the user or the executor must know about.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from difflib import SequenceMatcher
from typing import Annotated, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from contract.scenario import HINT_CHARS
from scenarios.delivery.results import (
    CancelData,
    CancelResult,
    NotificationData,
    NotificationResult,
    OrderList,
    OrderListData,
    OrderRow,
    OrderStatusData,
    OrderStatusResult,
    RefundData,
    RefundResult,
    UrgeData,
    UrgeResult,
)
from scenarios.delivery.seed import ITEM_EN
from tools.executor.errors import HandoffRequired, ResourceNotFoundError, UserFixableError
from tools.registry.cards import ToolCard
from tools.registry.context import ToolContext

ORDER_ID_PATTERN = r"^(OD-\d{8}-\d{3}|\d{9,12})$"
REFUND_HANDOFF_CENTS = 10_000
"""Refunds above 100 yuan are not the customer-service agent's to give: finance decides."""

OrderId = Annotated[
    str,
    StringConstraints(strip_whitespace=True, pattern=ORDER_ID_PATTERN),
    Field(
        description=(
            "The order number exactly as the user gave it: OD-YYYYMMDD-NNN or 9-12 digits. "
            "Never invent one; if the user has not given it, ask for it."
        ),
        examples=["OD-20240618-001", "202506001"],
    ),
]


class OrderRef(BaseModel):
    """Arguments naming one order."""

    model_config = ConfigDict(extra="forbid")

    order_id: OrderId


DEFAULT_REFUND_REASON = "用户申请退款"
"""The reason filed when the user gave none (the refund table needs one)."""


class RefundRequest(BaseModel):
    """Arguments of a refund request."""

    model_config = ConfigDict(extra="forbid")

    order_id: OrderId
    reason: str = Field(
        default=DEFAULT_REFUND_REASON,
        min_length=1,
        max_length=200,
        description="The user's reason in their own words, if they gave one.",
    )


class NotificationRequest(BaseModel):
    """Arguments of an order notification."""

    model_config = ConfigDict(extra="forbid")

    order_id: OrderId
    channel: Literal["sms", "in_app"] = Field(
        default="sms", description="sms (text message) or in_app (站内信)."
    )


def order_owner(args: Any, ctx: ToolContext) -> str | None:
    """Return the owner of the order the arguments name, or ``None`` if there is none."""
    row = ctx.database().query_one(
        "SELECT user_id FROM orders WHERE order_id = ?", (args.order_id,)
    )
    return None if row is None else str(row["user_id"])


ORDER_COLUMNS = "order_id, user_id, status, eta_minutes, eta_date, amount_cents, item"
"""What every order tool reads of an order."""


def _missing(order_id: str) -> ResourceNotFoundError:
    return ResourceNotFoundError(f"order {order_id} not found", details={"order_id": order_id})


def _load_order(args: OrderRef | RefundRequest | NotificationRequest, ctx: ToolContext) -> OrderRow:
    row = ctx.database().query_one(
        f"SELECT {ORDER_COLUMNS} FROM orders WHERE order_id = ?", (args.order_id,)
    )
    if row is None:
        raise _missing(args.order_id)
    return cast("OrderRow", row)  # the columns ORDER_COLUMNS names


def _order_in(conn: sqlite3.Connection, order_id: str) -> sqlite3.Row:
    """Read an order inside a write's transaction, so the check and the write agree."""
    row = conn.execute(
        f"SELECT {ORDER_COLUMNS} FROM orders WHERE order_id = ?", (order_id,)
    ).fetchone()
    if row is None:
        raise _missing(order_id)
    return row


class OrderHint(BaseModel):
    """Arguments of the caller's order list: the message, to see which order it names."""

    model_config = ConfigDict(extra="forbid")

    hint: str = Field(
        "", max_length=HINT_CHARS, description="The user's message, to match an item it names."
    )


RECENT_ORDERS = 5
"""How many of the caller's orders the list holds, the newest first."""
NAMED_CHARS = 2
"""Characters of an item's name a message must share in a row to name it ("耳机")."""


def names_item(hint: str, item: str) -> bool:
    """Tell whether ``hint`` says enough of ``item`` (or its English name) to mean it.

    Chinese: two characters of the name in a row ("耳机"); English: the whole name, or one
    of its words of five letters or more ("earphones").
    """
    english = ITEM_EN.get(item)
    if english is not None:
        words = set(re.findall(r"[a-z]+", hint.lower()))
        if english in hint.lower() or any(len(w) >= 5 and w in words for w in english.split()):
            return True
    lowered, name = hint.lower(), item.lower()
    match = SequenceMatcher(None, lowered, name, autojunk=False).find_longest_match(
        0, len(lowered), 0, len(name)
    )
    said = name[match.b : match.b + match.size].strip()
    wide = sum(1 for ch in said if ord(ch) > 0x2E7F)  # CJK counts per character
    return wide >= NAMED_CHARS or (not wide and len(said) >= 4 and said == name)


def list_my_orders(args: OrderHint, ctx: ToolContext) -> OrderListData:
    """List the caller's own newest orders, each marked when the hint names its item."""
    rows = ctx.database().query(
        "SELECT order_id, status, item FROM orders WHERE user_id = ?"
        " ORDER BY created_at DESC LIMIT ?",
        (ctx.user_id, RECENT_ORDERS),
    )
    return {
        "orders": [
            {
                "order_id": row["order_id"],
                "status": row["status"],
                "item": row["item"],
                "named": names_item(args.hint, str(row["item"])),
            }
            for row in rows
        ]
    }


def query_order_status(args: OrderRef, ctx: ToolContext) -> OrderStatusData:
    """Look up an order's delivery status and estimated arrival."""
    order = _load_order(args, ctx)
    return {
        "order_id": order["order_id"],
        "status": order["status"],
        "eta_minutes": order["eta_minutes"],
        "eta_date": order["eta_date"],
        "item": order["item"],
    }


def request_refund(args: RefundRequest, ctx: ToolContext) -> RefundData:
    """File a refund request for the whole order; one per order."""
    db = ctx.database()
    with db.transaction() as conn:
        ledger = ctx.ledger(conn, tool="request_refund")
        order = _order_in(conn, args.order_id)
        if order["status"] in ("cancelled", "pending_payment"):
            msg = f"order {args.order_id} is {order['status']}: nothing was paid to refund"
            raise UserFixableError(
                msg, details={"order_id": args.order_id, "reason": order["status"]}
            )
        if order["amount_cents"] > REFUND_HANDOFF_CENTS:
            msg = f"a refund of {order['amount_cents'] / 100:.2f} yuan needs the finance agent"
            raise HandoffRequired(
                msg,
                details={
                    "handoff": "finance",
                    "order_id": args.order_id,
                    "amount_cents": order["amount_cents"],
                },
            )
        existing = conn.execute(
            "SELECT refund_id, amount_cents, status FROM refunds WHERE order_id = ?",
            (args.order_id,),
        ).fetchone()
        if existing is not None:
            return {
                "order_id": args.order_id,
                "refund_id": existing["refund_id"],
                "amount_cents": existing["amount_cents"],
                "status": existing["status"],
                "already_requested": True,
            }
        refund_id = "RF-" + hashlib.sha256(args.order_id.encode()).hexdigest()[:10].upper()
        conn.execute(
            "INSERT INTO refunds (refund_id, order_id, user_id, amount_cents, reason, status)"
            " VALUES (?, ?, ?, ?, ?, 'submitted')",
            (refund_id, args.order_id, ctx.user_id, order["amount_cents"], args.reason),
        )
        result: RefundData = {
            "order_id": args.order_id,
            "refund_id": refund_id,
            "amount_cents": order["amount_cents"],
            "status": "submitted",
            "already_requested": False,
        }
        return ledger.record(result)


def refund_status(args: RefundRequest, ctx: ToolContext) -> RefundData | None:
    """Find the refund a timed-out ``request_refund`` may have filed, or ``None``."""
    row = ctx.database().query_one(
        "SELECT refund_id, amount_cents, status FROM refunds WHERE order_id = ? AND user_id = ?",
        (args.order_id, ctx.user_id),
    )
    if row is None:
        return None
    return {
        "order_id": args.order_id,
        "refund_id": row["refund_id"],
        "amount_cents": row["amount_cents"],
        "status": row["status"],
        "already_requested": False,
    }


def urge_delivery(args: OrderRef, ctx: ToolContext) -> UrgeData:
    """Ask the rider or carrier to hurry; only orders still on their way can be urged."""
    db = ctx.database()
    order = _load_order(args, ctx)
    if order["status"] not in ("delivering", "shipped"):
        msg = f"order {args.order_id} is {order['status']}: it cannot be urged"
        raise UserFixableError(msg, details={"order_id": args.order_id, "reason": order["status"]})
    with db.transaction() as conn:
        ledger = ctx.ledger(conn, tool="urge_delivery")
        conn.execute(
            "INSERT INTO delivery_urges (order_id, user_id) VALUES (?, ?)",
            (args.order_id, ctx.user_id),
        )
        urges = conn.execute(
            "SELECT COUNT(*) FROM delivery_urges WHERE order_id = ?", (args.order_id,)
        ).fetchone()[0]
        urged: UrgeData = {
            "order_id": args.order_id,
            "status": order["status"],
            "eta_minutes": order["eta_minutes"],
            "eta_date": order["eta_date"],
            "urge_count": urges,
        }
        return ledger.record(urged)


CANCELLABLE = ("pending_payment", "shipped", "delivering")
"""An order can be cancelled until it is delivered."""


def cancel_order(args: OrderRef, ctx: ToolContext) -> CancelData:
    """Cancel an order that has not been delivered yet, in one transaction."""
    with ctx.database().transaction() as conn:
        ledger = ctx.ledger(conn, tool="cancel_order")
        order = _order_in(conn, args.order_id)
        if order["status"] not in CANCELLABLE:
            msg = f"order {args.order_id} is {order['status']}: it can no longer be cancelled"
            raise UserFixableError(
                msg, details={"order_id": args.order_id, "reason": order["status"]}
            )
        conn.execute(
            "UPDATE orders SET status = 'cancelled', eta_minutes = NULL, eta_date = NULL"
            " WHERE order_id = ? AND status = ?",
            (args.order_id, order["status"]),
        )
        cancelled: CancelData = {
            "order_id": args.order_id,
            "item": order["item"],
            "amount_cents": order["amount_cents"],
            "previous_status": order["status"],
            "status": "cancelled",
        }
        return ledger.record(cancelled)


def cancel_status(args: OrderRef, ctx: ToolContext) -> CancelData | None:
    """Tell whether a timed-out ``cancel_order`` went through: the order is cancelled."""
    row = ctx.database().query_one(
        "SELECT order_id, item, amount_cents, status FROM orders WHERE order_id = ?",
        (args.order_id,),
    )
    if row is None or row["status"] != "cancelled":
        return None
    return {
        "order_id": row["order_id"],
        "item": row["item"],
        "amount_cents": row["amount_cents"],
        "status": row["status"],
        "previous_status": None,
    }


def send_notification(args: NotificationRequest, ctx: ToolContext) -> NotificationData:
    """Notify the user about an order, by text message or in-app message."""
    order = _load_order(args, ctx)
    eta = order["eta_minutes"] and f"，预计 {order['eta_minutes']} 分钟送达" or ""
    content = f"订单 {order['order_id']}（{order['item']}）当前状态：{order['status']}{eta}。"
    with ctx.database().transaction() as conn:
        ledger = ctx.ledger(conn, tool="send_notification")
        conn.execute(
            "INSERT INTO notifications (user_id, channel, content) VALUES (?, ?, ?)",
            (ctx.user_id, args.channel, content),
        )
        sent: NotificationData = {"order_id": args.order_id, "channel": args.channel, "sent": True}
        return ledger.record(sent)


def _summarize_status(data: OrderStatusData) -> str:
    eta = data.get("eta_minutes") or data.get("eta_date") or "unknown"
    return f"order {data['order_id']}: {data['status']}, eta {eta}"


def _summarize_refund(data: RefundData) -> str:
    return f"refund {data['refund_id']} for order {data['order_id']}: {data['status']}"


def _summarize_urge(data: UrgeData) -> str:
    return f"urged order {data['order_id']} ({data['urge_count']} urges so far)"


SEND_NOTIFICATION = ToolCard(
    name="send_notification",
    description="给用户发送站内信或短信通知 (send the user a text or in-app notification about "
    "an order).",
    when_to_use="Only when the user explicitly asks to be notified (e.g. 到了通知我, text me).",
    when_not_to_use="Never use it to reply in the conversation; never without being asked.",
    parameters=NotificationRequest,
    returns="sent, channel.",
    handler=send_notification,
    result_model=NotificationResult,
    idempotent=False,
    permission="order:notify",
    domain="order",
    owner_of=order_owner,
    requires=("query_order_status",),
    rate_limit="5/minute",
)

ORDER_TOOLS = (
    ToolCard(
        name="list_my_orders",
        description="List the caller's own newest orders: order number, item and status.",
        when_to_use="An order task lacks its order number: find the order the user means "
        "among their own (an item they name), or offer them to choose from.",
        when_not_to_use="The user has given an order number.",
        parameters=OrderHint,
        returns="orders: order_id, status, item, named (the message names the item).",
        handler=list_my_orders,
        result_model=OrderList,
        idempotent=True,
        permission="order:read",
        domain="order",
        timeout_s=3.0,
    ),
    ToolCard(
        name="query_order_status",
        description="Look up a food-delivery or shop order's status and estimated arrival.",
        when_to_use="The user asks where an order is, why it has not arrived, or its status, "
        "and has given the order number.",
        when_not_to_use="The user has not given an order number (ask for it instead); the "
        "user wants a refund or to hurry the delivery.",
        parameters=OrderRef,
        returns="order_id, status (delivering, delivered, shipped, pending_payment, "
        "cancelled), eta_minutes or eta_date, item.",
        handler=query_order_status,
        result_model=OrderStatusResult,
        idempotent=True,
        permission="order:read",
        domain="order",
        owner_of=order_owner,
        timeout_s=3.0,
        cache_ttl_s=10.0,
        summarize=_summarize_status,
    ),
    ToolCard(
        name="request_refund",
        description="File a refund request for a whole order on the user's behalf.",
        when_to_use="The user explicitly asks for a refund or their money back for an order "
        "whose number they have given.",
        when_not_to_use="The user only complains or asks about status; no order number yet; "
        "the order was never paid or was cancelled.",
        parameters=RefundRequest,
        returns="refund_id, amount_cents, status (submitted), already_requested.",
        handler=request_refund,
        result_model=RefundResult,
        idempotent=False,
        permission="order:refund",
        domain="order",
        risk="high",
        owner_of=order_owner,
        status_lookup=refund_status,
        timeout_s=5.0,
        summarize=_summarize_refund,
    ),
    ToolCard(
        name="urge_delivery",
        description="Ask the rider or carrier to hurry an order that is on its way.",
        when_to_use="The user asks to hurry, chase or speed up a delivery whose order number "
        "they have given.",
        when_not_to_use="The user only asks where the order is; the order is delivered or "
        "cancelled; no order number yet.",
        parameters=OrderRef,
        returns="order_id, status, eta_minutes or eta_date, urge_count.",
        handler=urge_delivery,
        result_model=UrgeResult,
        idempotent=False,
        permission="order:urge",
        domain="order",
        owner_of=order_owner,
        timeout_s=3.0,
        summarize=_summarize_urge,
    ),
    ToolCard(
        name="cancel_order",
        description="Cancel a food-delivery or shop order that has not been delivered yet.",
        when_to_use="The user explicitly asks to cancel an order whose number they have given.",
        when_not_to_use="The order is delivered (offer a refund instead); the user only "
        "complains, asks about status or wants it faster; no order number yet.",
        parameters=OrderRef,
        returns="order_id, item, amount_cents, previous_status, status (cancelled).",
        handler=cancel_order,
        result_model=CancelResult,
        idempotent=False,
        permission="order:cancel",
        domain="order",
        risk="high",
        owner_of=order_owner,
        status_lookup=cancel_status,
        timeout_s=5.0,
        summarize=lambda data: f"cancelled order {data['order_id']}",
    ),
    SEND_NOTIFICATION,
)
