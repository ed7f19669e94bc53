"""How a sales question is recognized; the whole question is the slot."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date

from contract.scenario import Cues, SlotResult
from contract.text_match import normalize

CUES: dict[str, Cues] = {
    "QUERY_SALES": (
        ("销售额", 1.2),
        ("销量", 1.2),
        ("营收", 1.2),
        ("卖得最", 1.0),
        ("卖的最", 1.0),  # 的 for 得, as people type it
        ("最畅销", 1.0),
        ("销售", 1.0),
        ("营业额", 1.2),
        ("流水", 1.0),
        ("业绩", 1.0),
        ("排行", 0.6),
        ("排名", 0.6),
        ("sales", 1.2),
        ("revenue", 1.2),
        ("best-selling", 1.0),
        ("best selling", 1.0),
        ("top product", 1.0),
        ("selling", 1.0),
        ("sold", 0.8),
        ("did we sell", 1.2),
        ("we sell", 0.8),
        ("turnover", 1.0),
    ),
}


SOLD_SUPPORT = 1.0
"""卖了 / 卖得 / 卖出 ask how something sold; 外卖 (takeout) is not selling."""
_SOLD = re.compile(r"(?<!外)卖(?:了|得|出|的怎么样|多少)")


def support(text: str) -> Iterator[tuple[str, float, str]]:
    """How much something sold ("黄焖鸡卖了几份") is a sales question."""
    if _SOLD.search(normalize(text)):
        yield "QUERY_SALES", SOLD_SUPPORT, "sold"


def extract(text: str, intent: str, *, today: date) -> SlotResult:
    """Take the question as it was asked; the tool turns it into checked SQL."""
    return SlotResult(slots={"question": text.strip()}) if text.strip() else SlotResult()
