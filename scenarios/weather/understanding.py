"""How a weather question is recognized, and which city it is about."""

from __future__ import annotations

import re
from datetime import date

from contract.scenario import SlotResult
from scenarios.dates import find_date
from scenarios.gazetteer import known_cities, known_city

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
