"""How the delivery tasks are recognized: cues, order numbers and an asked-for notification."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date

from nodes.tasks import Cues, SlotResult
from tools.pii import looks_like_phone

STRONG, WEAK = 1.0, 0.4

CUES: dict[str, Cues] = {
    "CHECK_ORDER_STATUS": (
        ("还没到", STRONG),
        ("没到", STRONG),
        ("到哪", STRONG),
        ("到了吗", STRONG),
        ("什么时候到", STRONG),
        ("啥时候到", STRONG),
        ("多久到", STRONG),
        ("状态", STRONG),
        ("进度", STRONG),
        ("查询订单", STRONG),
        ("查一下", STRONG),
        ("查查", STRONG),
        ("物流", STRONG),
        ("帮我查", STRONG),
        ("查", WEAK),
        ("送到", WEAK),
        ("where is my order", STRONG),
        ("where's my order", STRONG),
        ("where is order", STRONG),
        ("where is", WEAK),
        ("where's", WEAK),
        ("status", STRONG),
        ("track", STRONG),
        ("not arrived", STRONG),
        ("hasn't arrived", STRONG),
        ("has not arrived", STRONG),
        ("not here", STRONG),
        ("when will", STRONG),
        ("arrive", WEAK),
        ("check", WEAK),
        ("look up", STRONG),
    ),
    "REQUEST_REFUND": (
        ("退款", 1.2),
        ("退钱", 1.2),
        ("把钱退", 1.2),
        ("退费", 1.2),
        ("要求退", STRONG),
        ("不想要了", WEAK),
        ("赔偿", WEAK),
        ("refund", 1.2),
        ("money back", 1.2),
        ("reimburse", STRONG),
        ("charge back", WEAK),
        ("compensat", WEAK),
    ),
    "CANCEL_ORDER": (
        ("取消订单", 1.2),
        ("取消这个订单", 1.2),
        ("订单取消", 1.2),
        ("取消这单", 1.2),
        ("退单", 1.2),
        ("不要这个订单", STRONG),
        ("取消", WEAK),
        ("cancel my order", 1.2),
        ("cancel the order", 1.2),
        ("cancel order", 1.2),
        ("cancel", WEAK),
    ),
    "URGE_DELIVERY": (
        ("催单", 1.2),
        ("催一下", 1.2),
        ("催催", 1.2),
        ("帮我催", 1.2),
        ("加急", STRONG),
        ("快点送", STRONG),
        ("快一点", STRONG),
        ("尽快送", STRONG),
        ("太慢", WEAK),
        ("这么慢", WEAK),
        ("hurry", 1.2),
        ("speed up", 1.2),
        ("rush", STRONG),
        ("urge", STRONG),
        ("chase", STRONG),
        ("faster", STRONG),
        ("expedite", STRONG),
        ("so slow", WEAK),
        ("too slow", WEAK),
    ),
}

TOPIC_CUES = ("订单号", "订单", "单号", "外卖", "order", "delivery")
"""Words about orders in general: they raise every delivery intent equally, so they add
certainty that the message is about an order without favouring one intent over another."""

ORDER_ID_SUPPORT = {"CHECK_ORDER_STATUS": 0.3}
ORDER_ID_DEFAULT_SUPPORT = 0.2
"""A bare order id hints at a status question, barely: on its own it stays below 0.6."""

_OD_ID = re.compile(r"(?<![A-Za-z0-9])OD[-_ ]?(\d{8})[-_ ]?(\d{3})(?!\d)", re.IGNORECASE)
_DIGITS = re.compile(r"(?<![\d.])\d[\d -]*\d(?![\d.])")
_NOT_ID_AFTER_HINT = re.compile(
    r"(?:订单号|单号|订单编号|order\s*(?:number|no\.?|id|#))\s*(?:是|为|:|：|is)?\s*([A-Za-z0-9-]{3,})",
    re.IGNORECASE,
)
_NOTIFY = re.compile(
    r"通知我|短信告诉我|发短信|发个通知|提醒我|notify me|text me|send me a (?:text|notification)",
    re.IGNORECASE,
)


def find_order_ids(text: str) -> tuple[list[str], list[str]]:
    """Return (valid order ids in order of appearance, rejected candidates with reasons).

    Valid: ``OD-YYYYMMDD-NNN`` with a real date, or a run of 9–12 digits that is not a
    mobile number. Rejected candidates are things the user plausibly meant as an order id.
    """
    found: list[str] = []
    rejected: list[str] = []
    for match in _OD_ID.finditer(text):
        stamp, seq = match.group(1), match.group(2)
        if _valid_date(stamp):
            found.append(f"OD-{stamp}-{seq}")
        else:
            rejected.append(f"{match.group(0)}: bad date {stamp}")
    scrubbed = _OD_ID.sub(" ", text)
    for match in _DIGITS.finditer(scrubbed):
        raw = match.group(0)
        digits = re.sub(r"[ -]", "", raw)
        if raw != digits and not 9 <= len(digits) <= 12:
            continue
        if looks_like_phone(digits):
            rejected.append(f"{digits}: phone number")
        elif 9 <= len(digits) <= 12:
            found.append(digits)
        elif len(digits) >= 4:
            rejected.append(f"{digits}: {len(digits)} digits")
    for match in _NOT_ID_AFTER_HINT.finditer(text):
        token = match.group(1)
        if not any(token.upper().replace("_", "-") in value for value in found) and not any(
            token in reason for reason in rejected
        ):
            rejected.append(f"{token}: not an order number")
    return list(dict.fromkeys(found)), rejected


def support(text: str) -> Iterator[tuple[str, float, str]]:
    """An order number supports every delivery intent, a status question a little more."""
    found, _ = find_order_ids(text)
    if found:
        for intent in CUES:
            yield intent, ORDER_ID_SUPPORT.get(intent, ORDER_ID_DEFAULT_SUPPORT), "order id"


def extract(text: str, intent: str, *, today: date) -> SlotResult:
    """Find the order id; a malformed or ambiguous one is reported, never guessed."""
    found, rejected = find_order_ids(text)
    extra = {"notify": "sms"} if intent == "CHECK_ORDER_STATUS" and _NOTIFY.search(text) else {}
    if len(found) == 1:
        return SlotResult(slots={"order_id": found[0], **extra})
    if len(found) > 1:
        return SlotResult(invalid={"order_id": "multiple: " + ", ".join(found)})
    if rejected:
        return SlotResult(slots=extra, invalid={"order_id": rejected[0]})
    return SlotResult(slots=extra)


def _valid_date(stamp: str) -> bool:
    try:
        date(int(stamp[:4]), int(stamp[4:6]), int(stamp[6:]))
    except ValueError:
        return False
    return True
