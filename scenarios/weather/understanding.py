"""How a weather question is recognized, and which city it is about."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date

from nodes.tasks import Cues, SlotResult
from scenarios.gazetteer import known_city

CUES: dict[str, Cues] = {
    "QUERY_WEATHER": (
        ("天气", 1.2),
        ("气温", 1.0),
        ("温度", 1.0),
        ("下雨", 1.0),
        ("下雪", 1.0),
        ("冷不冷", 1.0),
        ("热不热", 1.0),
        ("带伞", 1.0),
        ("weather", 1.2),
        ("temperature", 1.0),
        ("forecast", 1.0),
        ("raining", 1.0),
        ("rain", 0.4),
        ("umbrella", 0.4),
    ),
}
CITY_SUPPORT = 0.5
"""A city name supports a weather question (as an order number supports an order one)."""

_CITY_ZH = re.compile(r"([\u4e00-\u9fff]{2,6}?)(?:市)?(?:今天|明天|现在|的)?(?:天气|气温|温度)")
_ASKING = re.compile(r"^(?:请问|先|帮我|麻烦|给我)*(?:查一?下|查查|看看|查|问下)?")
_CITY_EN = re.compile(
    r"(?:weather|temperature|forecast)\s+(?:in|for|at)\s+([A-Za-z][A-Za-z' .-]{1,30})",
    re.IGNORECASE,
)
_EN_FILLERS = {"please", "today", "tomorrow", "now", "tonight", "right", "this", "week", "like"}
_NOT_CITY = ("今天", "明天", "现在", "这里", "那边", "外面", "最近")


def find_city(text: str) -> str | None:
    """Return the city named in ``text``: a known name, or the place before 天气 / after "in"."""
    known = known_city(text)
    if known:
        return known
    match = _CITY_EN.search(text)
    if match:
        words = match.group(1).strip(" .?!").split()
        while words and words[-1].lower() in _EN_FILLERS:
            words.pop()
        return " ".join(words).title() or None
    match = _CITY_ZH.search(_ASKING.sub("", text.strip()))
    if match and match.group(1) not in _NOT_CITY:
        return match.group(1)
    return None


def support(text: str) -> Iterator[tuple[str, float, str]]:
    """A city in the message supports a weather question."""
    if find_city(text):
        yield "QUERY_WEATHER", CITY_SUPPORT, "city"


def extract(text: str, intent: str, *, today: date) -> SlotResult:
    """Find the city."""
    city = find_city(text)
    return SlotResult(slots={"city": city}) if city else SlotResult()
