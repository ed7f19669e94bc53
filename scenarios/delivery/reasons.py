"""Why the user wants a refund, in their own words ("送到了但是洒了"), when they said why.

The refund was always filed as "用户申请退款", also after "订单 OD-… 送到了但是洒了，我要退款".
The reason is what the message says besides the request itself and the order number, kept
as the user wrote it, when it says what went wrong (spilled, broken, cold, missing, late…)
or gives a reason outright ("因为…", "because…"). A correction ("不对，是订单 …") or a
bare request says no reason; nothing is ever made up.
"""

from __future__ import annotations

import re

from scenarios.delivery.understanding import find_order_ids

MAX_CHARS = 200
"""The refund table's limit on a reason."""

_REQUEST = re.compile(
    r"(?:我|俺)?(?:想|要|想要|需要|申请|帮我|请|麻烦|给我)*\s*(?:退款|退钱|退费|退个款|把钱退[给还]?我?|退我钱)"
    r"(?:吧|啊|呀|了|一下)?"
    r"|\b(?:i\s+(?:want|need|would like)\s+(?:a\s+)?|please\s+|can\s+i\s+get\s+(?:a\s+)?)?"
    r"(?:refund|money\s+back)(?:\s+(?:it|this|me|please|for\s+(?:it|this|order|my\s+order)))*\b",
    re.IGNORECASE,
)
"""The request itself: not a reason."""
_MARKER = re.compile(
    r"(?:原因(?:是|为)?[:：]?|因为|由于|理由(?:是)?[:：]?|\bbecause\b|\bsince\b|\breason(?:\s+is)?:?)\s*",
    re.IGNORECASE,
)
"""Words that give a reason outright: what follows them is the reason."""
_WRONG = re.compile(
    r"洒|撒了|漏了|漏送|少送|少了|送错|拿错|坏了|破了|破损|烂了|碎了|压扁|凉了|冷了|变质|馊|过期|"
    r"不新鲜|难吃|异物|头发|虫子|没收到|没送到|没送来|太慢|超时|迟到|晚了|不想要|不要了|买错|点错|"
    r"下错|质量|有问题"
    r"|\b(?:spill(?:ed|t)?|leak(?:ed|ing)?|broken|damaged|crushed|missing|wrong|cold|stale|"
    r"spoil(?:ed|t)|rotten|late|never\s+(?:arrived|came)|didn'?t\s+(?:arrive|come)|not\s+received|"
    r"hair|bug|by\s+mistake|changed\s+my\s+mind|don'?t\s+want)\b",
    re.IGNORECASE,
)
"""What went wrong: a clause that says so is the reason."""
_CORRECTION = re.compile(r"^\s*(?:不对|不是|我是说|改成|换成|\bno\b|\bi\s+mean\b|\bactually\b)")
"""A correction of the order, not a reason."""
_FILLER = re.compile(
    r"^(?:(?:我的|我)?订单(?:号)?|单号|这单|的|(?:my\s+)?order(?:\s+(?:number|no\.?|id))?|#)\s*"
    r"|^[\s,，。.!！?？;；、:：~～-]+|[\s,，。.!！?？;；、:：~～-]+$",
    re.IGNORECASE,
)


def refund_reason(text: str) -> str | None:
    """Return the reason the message gives for a refund, in its words, or ``None``."""
    if _CORRECTION.search(text):
        return None
    found, _ = find_order_ids(text)
    rest = text
    for order_id in found:
        rest = re.sub(re.escape(order_id), " ", rest, flags=re.IGNORECASE)
    rest = re.sub(r"OD[-_ ]?\d{8}[-_ ]?\d{3}|\d{9,12}", " ", rest, flags=re.IGNORECASE)
    marker = _MARKER.search(rest)
    if marker is not None:
        said = _REQUEST.sub(" ", rest[marker.end() :])
    else:
        said = _REQUEST.sub(" ", rest)
        if not _WRONG.search(said):
            return None
    said = _trimmed(said)
    return said[:MAX_CHARS] if len(said) >= 2 else None


def _trimmed(text: str) -> str:
    """Without filler at the ends ("订单", punctuation) and doubled spaces."""
    text = " ".join(text.split())
    while True:
        cut = _FILLER.sub("", text).strip()
        if cut == text:
            return text
        text = cut


__all__ = ["MAX_CHARS", "refund_reason"]
