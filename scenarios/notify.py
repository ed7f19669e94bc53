"""Asking to be told when something is done ("到了通知我", "订好了通知我", "text me"): shared.

Several scenarios let the user ask for a notification with the request; the words are the
same whatever the request is, so they live here, like the cities and the dates.
"""

from __future__ import annotations

import re

from contract.text_match import negated, normalize

_NOTIFY = re.compile(
    r"通知(?:我|本人|一下|一声)|提醒(?:我|本人|一下)|短信|(?:发|来)(?:个|条|一条|一个)?(?:消息|信息|微信)"
    r"|notify|notification|text me|text我|a text|ping me|message me|alert me|buzz me|call me|call我"
    r"|打(?:个)?电话给我|给我打(?:个)?电话"
    r"|send me an? (?:text|message|sms|note|notification)"
)
"""Asking to be told when it arrives, in words that say so on their own."""
_TELL = re.compile(
    r"告诉我|告知|(?:跟|和|给|同)我(?:说|讲)一?声|说一声|知会"
    r"|let me know|tell me|give me a (?:call|shout|heads up)"
)
"""Words that ask for a notification only after a condition ("到了告诉我", not "告诉我状态")."""
_ARRIVAL = re.compile(
    r"到了|送到|送达|到的时候|到时|完成后|之后|后(?:请|烦请|麻烦)?|好了|订好|办好|\bwhen\b|\bonce\b"
    r"|as soon as"
)
"""A condition: once it arrives, once it is done."""


def asks_for_notification(text: str) -> bool:
    """Say whether ``text`` asks to be notified when it is done ("不用通知我" does not)."""
    normal = normalize(text)
    for match in _NOTIFY.finditer(normal):
        if not negated(normal, match.start()):
            return True
    for match in _TELL.finditer(normal):
        arrival = _ARRIVAL.search(normal)
        if arrival is None or negated(normal, match.start()):
            continue
        if arrival.start() < match.start() or arrival.group().strip().isascii():
            return True
    return False
