"""Dates as people say them: 2024-06-20, 6月20号, June 20, 明天, tomorrow."""

from __future__ import annotations

import re
from datetime import date, timedelta

EN_MONTHS = {
    name: number
    for number, name in enumerate(
        (
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ),
        start=1,
    )
}
_RELATIVE = (("大后天", 3), ("后天", 2), ("明天", 1), ("今天", 0), ("tomorrow", 1), ("today", 0))


def find_date(text: str, today: date) -> date | None:
    """Return the date ``text`` names, relative words counted from ``today``; else ``None``."""
    full = re.search(r"(20\d{2})\s*[-/年.]\s*(\d{1,2})\s*[-/月.]\s*(\d{1,2})", text)
    try:
        if full:
            return date(int(full.group(1)), int(full.group(2)), int(full.group(3)))
        short = re.search(r"(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]", text)
        if short:
            return date(today.year, int(short.group(1)), int(short.group(2)))
        english = re.search(r"\b(" + "|".join(EN_MONTHS) + r")\s+(\d{1,2})", text, re.IGNORECASE)
        if english:
            return date(today.year, EN_MONTHS[english.group(1).lower()], int(english.group(2)))
    except ValueError:
        return None
    lowered = text.lower()
    for word, offset in _RELATIVE:
        if word in lowered:
            return today + timedelta(days=offset)
    return None
