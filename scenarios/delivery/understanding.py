"""How the delivery tasks are recognized: cues, order numbers and an asked-for notification."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date

from contract.scenario import Beyond, Cues, SlotResult
from contract.text_match import negated, normalize
from scenarios.notify import asks_for_notification
from security.pii import looks_like_phone

STRONG, WEAK = 1.0, 0.4

CUES: dict[str, Cues] = {
    "CHECK_ORDER_STATUS": (
        ("还没到", STRONG),
        ("没到", STRONG),
        ("还没送", STRONG),
        ("还不来", STRONG),
        ("还不到", STRONG),
        ("还没来", STRONG),
        ("没动静", STRONG),
        ("到哪", STRONG),
        ("在哪", STRONG),
        ("到了吗", STRONG),
        ("到了没", STRONG),
        ("送到没", STRONG),
        ("什么时候到", STRONG),
        ("啥时候到", STRONG),
        ("多久到", STRONG),
        ("什么情况", STRONG),
        ("啥情况", STRONG),
        ("状态", STRONG),
        ("进度", STRONG),
        ("进展", STRONG),
        ("发货", STRONG),
        ("出餐", STRONG),
        ("瞅", WEAK),
        ("看看", WEAK),
        ("送达时间", STRONG),
        ("查询订单", STRONG),
        ("查一下", STRONG),
        ("查查", STRONG),
        ("看一下", WEAK),
        ("看下", WEAK),
        ("物流", STRONG),
        ("帮我查", STRONG),
        ("查", WEAK),
        ("送到", WEAK),
        ("送达", WEAK),
        ("where is my order", STRONG),
        ("wheres my order", STRONG),
        ("where is order", STRONG),
        ("where is my", STRONG),
        ("wheres my", STRONG),
        ("where is", WEAK),
        ("wheres", WEAK),
        ("status", STRONG),
        ("track", STRONG),
        ("not arrived", STRONG),
        ("hasnt arrived", STRONG),
        ("havent arrived", STRONG),
        ("not arrived yet", STRONG),
        ("has not arrived", STRONG),
        ("hasnt come", STRONG),
        ("isnt here", STRONG),
        ("not here yet", STRONG),
        ("still waiting", STRONG),
        ("never arrived", STRONG),
        ("never came", STRONG),
        ("didnt arrive", STRONG),
        ("havent received", STRONG),
        ("havent got", STRONG),
        ("shipped", STRONG),
        ("dispatched", STRONG),
        ("delivered yet", STRONG),
        ("been delivered", STRONG),
        ("arrived yet", STRONG),
        ("picked up", WEAK),
        ("when is my", 0.6),
        ("coming", WEAK),
        ("not here", STRONG),
        ("still not", WEAK),
        ("when will", STRONG),
        ("how long until", STRONG),
        ("how long till", STRONG),
        ("on the way", STRONG),
        ("在路上", STRONG),
        ("shown up", STRONG),
        ("showed up", STRONG),
        ("show up", STRONG),
        ("never showed up", STRONG),  # the negation is the complaint, as in "never came"
        ("never shown up", STRONG),
        ("on its way", STRONG),
        ("any update", STRONG),
        ("update on", STRONG),
        ("eta", WEAK),
        ("get here", WEAK),
        ("gets here", WEAK),
        ("arrive", WEAK),
        ("check", WEAK),
        ("look up", STRONG),
        ("check order", STRONG),
        ("check my order", STRONG),
        ("check on my order", STRONG),
        ("check the order", STRONG),
    ),
    "REQUEST_REFUND": (
        ("退款", 1.2),
        ("退钱", 1.2),
        ("把钱退", 1.2),
        ("钱退", 1.2),
        ("退费", 1.2),
        ("退货", STRONG),
        ("退回", STRONG),
        ("退我", STRONG),
        ("帮我退", STRONG),
        ("退了吧", STRONG),
        ("退了", STRONG),
        ("要退", 0.8),
        ("钱还我", 1.2),
        ("还钱", STRONG),
        ("还我钱", 1.2),
        ("要求退", STRONG),
        ("洒了", 0.8),  # what spoiled an order: a refund is what is asked, confirmed first
        ("撒了", 0.8),
        ("漏了", 0.6),
        ("送错了", 0.8),
        ("少送", 0.8),
        ("spilled", 0.8),
        ("wrong order", 0.8),
        ("差价", WEAK),
        ("赔偿", WEAK),
        ("赔", WEAK),
        ("refund", 1.2),
        ("money back", 1.2),
        ("money returned", 1.2),
        ("return my money", 1.2),
        ("my money", 0.6),
        ("reimburse", STRONG),
        ("charge back", WEAK),
        ("chargeback", WEAK),
        ("compensat", WEAK),
    ),
    "LIST_MY_ORDERS": (
        ("所有订单", 1.2),
        ("所有的订单", 1.2),
        ("全部订单", 1.2),
        ("订单列表", 1.2),
        ("哪些订单", 1.2),
        ("哪些单", 1.2),
        ("下了哪些", 1.2),
        ("点了哪些", 1.2),
        ("买了哪些", 1.2),
        ("历史订单", 1.2),
        ("最近的订单", 1.0),
        ("最近订单", 1.0),
        ("订单都", 0.6),
        ("my orders", 1.0),
        ("all my orders", 1.2),
        ("list my orders", 1.2),
        ("recent orders", 1.0),
        ("order history", 1.2),
    ),
    "CANCEL_ORDER": (
        ("取消订单", 1.2),
        ("取消这个订单", 1.2),
        ("订单取消", 1.2),
        ("取消这单", 1.2),
        ("退单", 1.2),
        ("撤单", 1.2),
        ("撤销", STRONG),
        ("撤了", STRONG),
        ("撤回", STRONG),
        ("撤掉", STRONG),
        ("别做了", STRONG),
        ("别送了", STRONG),
        ("不用送了", STRONG),
        ("不要这个订单", STRONG),
        ("取消", 0.8),
        ("不想要了", 0.5),
        ("这单不要", 1.2),
        ("不要了", 0.5),
        ("点错了", 0.5),
        ("下错单", 0.5),
        ("cancel my order", 1.2),
        ("cancel the order", 1.2),
        ("cancel order", 1.2),
        ("cancel", STRONG),
        ("call off", STRONG),
        ("scrap", 0.6),
        ("by mistake", 0.5),
        ("changed my mind", 0.5),
        ("dont want it anymore", 0.6),
        ("dont need it anymore", 0.6),
    ),
    "URGE_DELIVERY": (
        ("催单", 1.2),
        ("催一下", 1.2),
        ("催催", 1.2),
        ("帮我催", 1.2),
        ("催", STRONG),
        ("加急", STRONG),
        ("加快", STRONG),
        ("督促", STRONG),
        ("快点送", STRONG),
        ("快一点", STRONG),
        ("快点", 0.8),
        ("快些", STRONG),
        ("赶紧", 0.8),
        ("赶快", 0.8),
        ("尽快送", STRONG),
        ("磨蹭", STRONG),
        ("磨叽", STRONG),
        ("太慢", 0.8),
        ("这么慢", 0.8),
        ("慢死", 0.8),
        ("还不来", 0.8),
        ("还没来", 0.8),
        ("饿死", 0.6),
        ("hurry", 1.2),
        ("speed up", 1.2),
        ("speed it up", 1.2),
        ("speed", 0.8),
        ("urgent", 0.6),
        ("step on it", 1.2),
        ("rush", STRONG),
        ("urge", STRONG),
        ("chase", STRONG),
        ("faster", STRONG),
        ("quicker", STRONG),
        ("more quickly", STRONG),
        ("expedite", STRONG),
        ("taking forever", 0.8),
        ("push them", 0.8),
        ("push the", 0.8),
        ("so slow", 0.8),
        ("too slow", 0.8),
    ),
}

TOPIC_CUES = (
    "订单号",
    "订单",
    "单号",
    "单子",
    "这单",
    "外卖",
    "骑手",
    "配送",
    "快递",
    "送餐",
    "order",
    "delivery",
    "package",
    "food",
    "rider",
    "courier",
    "driver",
)
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
REFUND_SPLIT_VERB = re.compile(r"退[^，,。.!！?？不]{0,3}?(?:款|钱)")
"""退…款 / 退…钱 with a word in between ("退个款", "退我点钱") is a refund."""
CHECK_SUPPORT = 0.8
"""Checking on a named order is asking its status ("check OD-…", "查查 OD-…")."""
_CHECK_AN_ORDER = re.compile(
    r"\b(?:check|look at|see|wheres|where is)\b[^,.!?]{0,12}?(?:od-|\d{9})"
)
NOTIFY_SUPPORT = 0.6
"""An asked-for notification supports a status question (the notification rides on it)."""


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
    normal = normalize(text)
    split = REFUND_SPLIT_VERB.search(normal)
    if split and split.group() not in ("退款", "退钱") and not negated(normal, split.start()):
        yield "REQUEST_REFUND", 1.2, "退…款"
    if asks_for_notification(text):
        yield "CHECK_ORDER_STATUS", NOTIFY_SUPPORT, "notify"
    if found and _CHECK_AN_ORDER.search(normal):  # "can you check OD-…": the order's status
        yield "CHECK_ORDER_STATUS", CHECK_SUPPORT, "check an order"


def extract(text: str, intent: str, *, today: date) -> SlotResult:
    """Find the order id; a malformed or ambiguous one is reported, never guessed."""
    found, rejected = find_order_ids(text)
    notify = intent == "CHECK_ORDER_STATUS" and asks_for_notification(text)
    extra = {"notify": "sms"} if notify else {}
    if len(found) == 1:
        return SlotResult(slots={"order_id": found[0], **extra})
    if len(found) > 1:  # "OD-1 和 OD-2 到哪了": a request for each
        return SlotResult(slots=extra, several={"order_id": tuple(found)})
    if rejected:
        return SlotResult(slots=extra, invalid={"order_id": rejected[0]})
    return SlotResult(slots=extra)


def _valid_date(stamp: str) -> bool:
    try:
        date(int(stamp[:4]), int(stamp[4:6]), int(stamp[6:]))
    except ValueError:
        return False
    return True


BEYOND = (
    Beyond(
        "address_change",
        re.compile(
            r"(?:改|修改|换|更改|变更)(?:一下|个)?[^，,。.!！?？]{0,6}?(?:收货|送货|配送)?地址"
            r"|地址[^，,。.!！?？]{0,4}?(?:写错|填错|错了|改)"
            r"|\b(?:change|update|correct|fix)\b[^,.!?]{0,20}?\baddress\b|\bwrong address\b"
        ),
    ),
    Beyond("invoice", re.compile(r"发票|\b(?:invoice|receipt for tax|fapiao)\b")),
)
"""An order's address, an invoice: no tool here changes or issues them (a person does)."""


BARE = {
    "CHECK_ORDER_STATUS": re.compile(
        r"\s*(?:(?:my\s+)?order\s*)?(?:od[-_ ]?\d{8}[-_ ]?\d{3}|\d{9,12})\s*"
        r"(?:的?(?:订单|状态|情况)|呢|吗|嘛|\?|？|。|\.|!|！|\s)*",
        re.IGNORECASE,
    )
}
"""An order number said alone ("OD-…呢", "202506001?") asks where the order is."""
