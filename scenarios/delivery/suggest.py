"""The user's own orders, for an order task that lacks its order number.

"我点的黄焖鸡怎么还没到" names an order by its item: the caller's one order of 黄焖鸡米饭 is
the one meant, and the task goes on with its number. Otherwise the question that asks for the
number also lists the caller's newest orders, so nobody has to go and look it up. Only the
caller's own orders are read (the trusted identity, through the executor).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from contract.scenario import Offer, Speaker
from scenarios.delivery.results import OrderListData
from scenarios.delivery.wording import order_offer
from state import ToolResult
from tools.executor.envelope import CallRequest, result_data
from tools.executor.failures import classify


def suggest_order(
    missing: Sequence[str],
    text: str,
    run: Callable[[CallRequest], ToolResult],
    speaker: Speaker,
) -> Offer:
    """Fill ``order_id`` with the one order the message names, else offer the newest."""
    if "order_id" not in missing:
        return Offer()
    listed = run({"name": "list_my_orders", "parameters": {"hint": text}})
    if listed.get("status") != "success":  # the question asks for the number, and says why
        outcome = classify(listed) or "unavailable"
        why = speaker.failure(outcome, listed, task=speaker.say("step.list_my_orders"))
        return Offer(offered={"order_id": why})
    orders = list(result_data(listed, OrderListData).get("orders") or [])
    named = [order for order in orders if order.get("named")]
    if len(named) == 1:
        return Offer(filled={"order_id": named[0]["order_id"]})
    shown = named or orders
    if not shown:
        return Offer()
    return Offer(offered={"order_id": order_offer(shown, speaker)})


__all__ = ["suggest_order"]
