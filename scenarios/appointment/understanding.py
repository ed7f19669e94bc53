"""How a medical appointment is recognized: the department and the day."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from typing import Any

from nodes.tasks import Cues, SlotResult
from scenarios.dates import find_date

CUES: dict[str, Cues] = {
    "BOOK_APPOINTMENT": (
        ("挂号", 1.2),
        ("预约", 1.0),
        ("看病", 1.0),
        ("看医生", 1.0),
        ("门诊", 1.0),
        ("医生", 0.4),
        ("appointment", 1.2),
        ("see a doctor", 1.2),
        ("doctor", 0.4),
        ("clinic", 0.4),
    ),
}
DEPARTMENTS = {
    "内科": "内科",
    "儿科": "儿科",
    "皮肤科": "皮肤科",
    "internal medicine": "内科",
    "pediatrics": "儿科",
    "dermatology": "皮肤科",
}
"""Department names as users say them → the clinic's name."""
DEPARTMENT_SUPPORT = 0.5
"""A department name supports an appointment."""


def support(text: str) -> Iterator[tuple[str, float, str]]:
    """A department in the message supports an appointment."""
    lowered = text.lower()
    if any(name in lowered for name in DEPARTMENTS):
        yield "BOOK_APPOINTMENT", DEPARTMENT_SUPPORT, "department"


def extract(text: str, intent: str, *, today: date) -> SlotResult:
    """Find the department and the day of an appointment."""
    slots: dict[str, Any] = {}
    lowered = text.lower()
    for name, canonical in DEPARTMENTS.items():
        if name in lowered:
            slots["department"] = canonical
            break
    day = find_date(text, today)
    if day is not None:
        slots["day"] = day.isoformat()
    return SlotResult(slots=slots)
