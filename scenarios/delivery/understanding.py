"""How the delivery tasks are recognized: cues, order numbers and an asked-for notification."""

from __future__ import annotations

import re
from datetime import date

from contract.scenario import Beyond, SlotResult
from scenarios.notify import asks_for_notification
from security.pii import looks_like_phone

STRONG, WEAK = 1.0, 0.4


_OD_ID = re.compile(r"(?<![A-Za-z0-9])OD[-_ ]?(\d{8})[-_ ]?(\d{3})(?!\d)", re.IGNORECASE)
_DIGITS = re.compile(r"(?<![\d.])\d[\d -]*\d(?![\d.])")
_NOT_ID_AFTER_HINT = re.compile(
    r"(?:订单号|单号|订单编号|order\s*(?:number|no\.?|id|#))\s*(?:是|为|:|：|is)?\s*([A-Za-z0-9-]{3,})",
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


BEYOND = (Beyond("address_change"), Beyond("invoice"))
"""An order's address, an invoice: no tool here changes or issues them (a person does)."""


BARE = {
    "CHECK_ORDER_STATUS": re.compile(
        r"\s*(?:(?:my\s+)?order\s*)?(?:od[-_ ]?\d{8}[-_ ]?\d{3}|\d{9,12})\s*"
        r"(?:的?(?:订单|状态|情况)|呢|吗|嘛|\?|？|。|\.|!|！|\s)*",
        re.IGNORECASE,
    )
}
"""An order number said alone ("OD-…呢", "202506001?") asks where the order is."""
