"""How a weather question is recognized, and which city it is about."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date

from contract.scenario import Cues, SlotResult
from scenarios.dates import find_date
from scenarios.gazetteer import known_cities, known_city

CUES: dict[str, Cues] = {
    "QUERY_WEATHER": (
        ("天气", 1.2),
        ("气温", 1.0),
        ("温度", 1.0),
        ("下雨", 1.0),
        ("下不下雨", 1.0),
        ("会不会下雨", 1.0),
        ("有没有雨", 1.0),
        ("有雨", 0.8),
        ("下雪", 1.0),
        ("冷不冷", 1.0),
        ("热不热", 1.0),
        ("带伞", 1.0),
        ("打伞", 1.0),
        ("天儿", 1.0),
        ("的天", 0.6),
        ("刮风", 1.0),
        ("风大", 1.0),
        ("晴天", 1.0),
        ("出太阳", 1.0),
        ("太阳", 0.6),
        ("阴天", 1.0),
        ("雾霾", 1.0),
        ("几度", 1.0),
        ("多少度", 1.0),
        ("热吗", 0.8),
        ("热死", 0.8),
        ("冷死", 0.8),
        ("冷吗", 0.8),
        ("热不", 0.8),
        ("冷不", 0.8),
        ("weather", 1.2),
        ("temperature", 1.0),
        ("forecast", 1.0),
        ("raining", 1.0),
        ("sunny", 1.0),
        ("windy", 1.0),
        ("snow", 1.0),
        ("snowing", 1.0),
        ("cold", 0.4),
        ("hot", 0.4),
        ("warm", 0.4),
        ("how hot", 1.0),
        ("how cold", 1.0),
        ("degrees", 0.6),
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
_TRAVEL = r"(?:去|到|飞往?|从|前往|回|\bto|\bfrom)"
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
    """A city in the message supports a weather question, unless it is where one goes.

    "去北京", "飞上海", "to Beijing", "from Shanghai" name a route, not a place to ask about.
    """
    city = find_city(text)
    if city and not re.search(rf"{_TRAVEL}\s*{re.escape(city)}", text, re.IGNORECASE):
        yield "QUERY_WEATHER", CITY_SUPPORT, "city"


def extract(text: str, intent: str, *, today: date) -> SlotResult:
    """Find the city; two cities named ("北京和上海") are a question about each.

    A day other than today ("明天下雨吗") is kept as ``day``: the API knows only the weather
    now, and the answer must say so rather than pass today's weather off as tomorrow's.
    """
    found = find_date(text, today)
    day = {"day": found.isoformat()} if found is not None and found != today else {}
    cities = [
        c for c in known_cities(text) if not re.search(rf"{_TRAVEL}\s*{re.escape(c)}", text, re.I)
    ]
    if len(cities) > 1:
        return SlotResult(slots=day, several={"city": tuple(cities)})
    city = find_city(text)
    return SlotResult(slots={"city": city, **day}) if city else SlotResult(slots=day)
