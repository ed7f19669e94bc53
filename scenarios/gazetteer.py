"""Place names every scenario shares: one list of cities, so weather and flights agree."""

from __future__ import annotations

import re
from functools import cache

CITY_NAMES = {
    "北京": "Beijing",
    "上海": "Shanghai",
    "广州": "Guangzhou",
    "深圳": "Shenzhen",
    "杭州": "Hangzhou",
    "成都": "Chengdu",
    "南京": "Nanjing",
    "武汉": "Wuhan",
    "西安": "Xi'an",
    "重庆": "Chongqing",
    "天津": "Tianjin",
    "苏州": "Suzhou",
    "香港": "Hong Kong",
}
"""Chinese city names and the names the backends know them by."""


def normalize_city(city: str) -> str:
    """Return the backends' name for ``city``: 北京 / 北京市 / beijing → Beijing."""
    name = city.strip().removesuffix("市")
    if name in CITY_NAMES:
        return CITY_NAMES[name]
    for canonical in CITY_NAMES.values():
        if canonical.lower().replace("'", "") == name.lower().replace("'", ""):
            return canonical
    return name.title() if name.isascii() else name


def known_city(text: str) -> str | None:
    """Return the first known city named in ``text``, as written (Chinese or English)."""
    for chinese in CITY_NAMES:
        if chinese in text:
            return chinese
    for english, pattern in _ENGLISH_NAMES:
        if pattern.search(text):
            return english
    return None


def known_cities(text: str) -> list[str]:
    """Return every known city named in ``text``, in the order named, each once."""
    found: list[tuple[int, str]] = []
    for chinese in CITY_NAMES:
        at = text.find(chinese)
        if at >= 0:
            found.append((at, chinese))
    for english, pattern in _ENGLISH_NAMES:
        match = pattern.search(text)
        if match:
            found.append((match.start(), english))
    return list(dict.fromkeys(name for _, name in sorted(found)))


_ENGLISH_NAMES = tuple(
    # ASCII boundaries: "Shanghai天气" names Shanghai (a CJK character is a word character to \b)
    (english, re.compile(rf"(?<![A-Za-z]){re.escape(english)}(?![A-Za-z])", re.IGNORECASE))
    for english in CITY_NAMES.values()
)


@cache
def city_pattern() -> str:
    """Return a regex alternation of every known city name, longest first."""
    names = sorted([*CITY_NAMES, *CITY_NAMES.values()], key=len, reverse=True)
    return "|".join(re.escape(name) for name in names)
