"""What each delivery tool answers, as a type and as a check.

``…Data`` is the type a handler returns and a describer reads; ``…Result`` is the model the
executor checks a successful result against (the card's ``result_model``: extra fields are
tolerated, missing ones are not). ``tests/scenarios/test_result_types.py`` keeps them agreeing.
"""

from __future__ import annotations

from typing import TypedDict

from pydantic import BaseModel


class OrderRow(TypedDict):
    """An order as ``ORDER_COLUMNS`` reads it."""

    order_id: str
    user_id: str
    status: str
    eta_minutes: int | None
    eta_date: str | None
    amount_cents: int
    item: str


class ListedOrderData(TypedDict):
    """One order in ``list_my_orders``' answer (``ListedOrder`` checks it)."""

    order_id: str
    status: str
    item: str
    named: bool


class OrderListData(TypedDict):
    """What ``list_my_orders`` answers (``OrderList``)."""

    orders: list[ListedOrderData]


class OrderStatusData(TypedDict):
    """What ``query_order_status`` answers (``OrderStatusResult``)."""

    order_id: str
    status: str
    eta_minutes: int | None
    eta_date: str | None
    item: str


class RefundData(TypedDict):
    """What ``request_refund`` and its status lookup answer (``RefundResult``)."""

    order_id: str
    refund_id: str
    amount_cents: int
    status: str
    already_requested: bool


class UrgeData(TypedDict):
    """What ``urge_delivery`` answers (``UrgeResult``)."""

    order_id: str
    status: str
    eta_minutes: int | None
    eta_date: str | None
    urge_count: int


class CancelData(TypedDict):
    """What ``cancel_order`` and its status lookup answer (``CancelResult``)."""

    order_id: str
    item: str
    amount_cents: int
    previous_status: str | None
    status: str


class NotificationData(TypedDict):
    """What ``send_notification`` answers (``NotificationResult``)."""

    order_id: str
    channel: str
    sent: bool


class OrderStatusResult(BaseModel):
    """What ``query_order_status`` promises; extra fields are tolerated, missing ones are not."""

    order_id: str
    status: str
    eta_minutes: int | None = None
    eta_date: str | None = None
    item: str


class ListedOrder(BaseModel):
    """One of the caller's orders, as the list shows it."""

    order_id: str
    status: str
    item: str
    named: bool
    """Whether the hint names the order's item ("黄焖鸡" for 黄焖鸡米饭)."""


class OrderList(BaseModel):
    """What ``list_my_orders`` answers."""

    orders: list[ListedOrder]


class RefundResult(BaseModel):
    """What ``request_refund`` (and its status lookup) answers."""

    order_id: str
    refund_id: str
    amount_cents: int
    status: str
    already_requested: bool


class UrgeResult(BaseModel):
    """What ``urge_delivery`` answers."""

    order_id: str
    status: str
    eta_minutes: int | None = None
    eta_date: str | None = None
    urge_count: int


class CancelResult(BaseModel):
    """What ``cancel_order`` answers."""

    order_id: str
    item: str
    amount_cents: int
    previous_status: str | None
    status: str


class NotificationResult(BaseModel):
    """What ``send_notification`` answers."""

    order_id: str
    channel: str
    sent: bool
