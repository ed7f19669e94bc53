"""How a sales question is recognized; the whole question is the slot."""

from __future__ import annotations

from datetime import date

from nodes.tasks import Cues, SlotResult

CUES: dict[str, Cues] = {
    "QUERY_SALES": (
        ("销售额", 1.2),
        ("销量", 1.2),
        ("营收", 1.2),
        ("卖得最", 1.0),
        ("最畅销", 1.0),
        ("销售", 1.0),
        ("sales", 1.2),
        ("revenue", 1.2),
        ("best-selling", 1.0),
        ("best selling", 1.0),
        ("top product", 1.0),
        ("sold", 0.4),
    ),
}


def extract(text: str, intent: str, *, today: date) -> SlotResult:
    """Take the question as it was asked; the tool turns it into checked SQL."""
    return SlotResult(slots={"question": text.strip()}) if text.strip() else SlotResult()
