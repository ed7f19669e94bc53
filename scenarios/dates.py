"""Dates as people say them: 2024-06-20, 6月20号, June 20, 22号, the 21st, 明天, next Friday."""

from __future__ import annotations

import re
from datetime import date, timedelta

from language import LANGUAGES, lexicon

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


def _relative_days() -> tuple[tuple[str, int], ...]:
    """Words for a day counted from today, longest first: the languages' lexicons."""
    words: dict[str, int] = {}
    for code in LANGUAGES:
        words.update(lexicon(code).relative_days)
    return tuple(sorted(words.items(), key=lambda item: len(item[0]), reverse=True))


_RELATIVE = _relative_days()
"""Words for a day counted from today (a past one is read, so a booking can say it passed)."""
_ZH_DAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "末": 5}
_EN_DAYS = {
    name: number
    for number, name in enumerate(
        ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
    )
}
_ZH_WEEKDAY = re.compile(
    r"(下下|下个?|这个?|本|上个?)?\s*(?:周|星期|礼拜)([一二三四五六日天末])"
    r"(?![次遍回趟])"  # 每周一次: "once a week", no Monday
)
_EN_DAYS.update(
    {"mon": 0, "tue": 1, "tues": 1, "wed": 2, "thu": 3, "thur": 3, "thurs": 3, "fri": 4}
    | {"sat": 5, "sun": 6}
)
_EN_WEEKDAY = re.compile(
    r"\b(next|this|coming)?\s*(" + "|".join(n for n in _EN_DAYS if len(n) > 5) + r")\b"
    # abbreviations only after next/this/on: "sat down", "the sun" are no days
    r"|\b(next|this|coming|on)\s+(" + "|".join(n for n in _EN_DAYS if len(n) <= 5) + r")\b",
    re.IGNORECASE,
)


def _weekday(text: str, today: date) -> date | None:
    """Read 周五, 下周一, 这个星期三, next Monday, this Friday, on Tuesday.

    Weeks start on Monday. 下周一 / next Monday is the Monday of the next week; 这周五 /
    this Friday the Friday of this week, even if it has passed (the confirmation shows the
    date, and a booking tool refuses a past one); a weekday alone is the next one to come,
    a week ahead when it is today (today would be said 今天).
    """
    found = _ZH_WEEKDAY.search(text)
    if found:
        which, day = found.group(1) or "", _ZH_DAYS[found.group(2)]
        week = {"下下": 2, "上": -1, "上个": -1}.get(which, 1 if which.startswith("下") else 0)
        bare = not which
    else:
        english = _EN_WEEKDAY.search(text)
        if not english:
            return None
        which = (english.group(1) or english.group(3) or "").lower()
        day = _EN_DAYS[(english.group(2) or english.group(4)).lower()]
        week = 1 if which == "next" else 0
        bare = which in ("", "coming", "on")
    if bare:
        ahead = (day - today.weekday()) % 7 or 7
        return today + timedelta(days=ahead)
    monday = today - timedelta(days=today.weekday())
    return monday + timedelta(weeks=week, days=day)


_DAY_OF_MONTH = re.compile(
    r"(?<![\d月/.\-])([1-9]|[12]\d|3[01])\s*(?:[号號]|日(?!内))(?![楼线门床窗位机店桌房柜口台道])"
    r"|\b(?:on\s+)?the\s+([1-9]|[12]\d|3[01])(?:st|nd|rd|th)\b"
    r"|\bon\s+([1-9]|[12]\d|3[01])(?:st|nd|rd|th)\b",
    re.IGNORECASE,
)
"""A day of the month said alone ("22号", "21号可以吗", "the 20th"): not a building ("3号楼"),
a line ("1号线") or a span ("3日内")."""


def _day_of_month(text: str, today: date) -> date | None:
    """Read a day of the month alone as the next one to come.

    That is this month's, or next month's once it has passed (today counts as to come).
    """
    found = _DAY_OF_MONTH.search(text)
    if not found:
        return None
    day = int(next(group for group in found.groups() if group))
    year, month = today.year, today.month
    if day < today.day:
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    try:
        return date(year, month, day)
    except ValueError:  # the 31st of a 30-day month: ask rather than guess
        return None


ROLL_OVER_AFTER = timedelta(days=30)
"""A month and day without a year that passed longer ago than this is next year's."""


def _month_day(month: int, day: int, today: date) -> date:
    """Read a month and day said without a year as the one a booking means.

    This year's, unless it passed more than ``ROLL_OVER_AFTER`` ago: "6月20号" said in
    December is next June. One that passed days ago stays this year's, so the booking says
    it has passed instead of quietly moving it a year on.
    """
    this_year = date(today.year, month, day)
    if this_year < today - ROLL_OVER_AFTER:
        try:
            return date(today.year + 1, month, day)
        except ValueError:  # 29 February of a year that has none
            return this_year
    return this_year


def is_past(day: date, today: date) -> bool:
    """Tell whether ``day`` is before ``today``: nothing can be booked on it."""
    return day < today


def find_date(text: str, today: date) -> date | None:
    """Return the date ``text`` names, relative words counted from ``today``; else ``None``."""
    full = re.search(r"(20\d{2})\s*[-/年.]\s*(\d{1,2})\s*[-/月.]\s*(\d{1,2})", text)
    try:
        if full:
            return date(int(full.group(1)), int(full.group(2)), int(full.group(3)))
        short = re.search(r"(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]", text)
        if short:
            return _month_day(int(short.group(1)), int(short.group(2)), today)
        english = re.search(r"\b(" + "|".join(EN_MONTHS) + r")\s+(\d{1,2})", text, re.IGNORECASE)
        if english:
            return _month_day(EN_MONTHS[english.group(1).lower()], int(english.group(2)), today)
        # "6/21", "6-21": month first, as Chinese and American users write it; not inside a
        # longer number ("1/2/3", an ID, an amount)
        slashed = re.search(
            r"(?<![\d/.-])(1[0-2]|0?[1-9])\s*[/-]\s*(3[01]|[12]\d|0?[1-9])(?![\d/.-])", text
        )
        if slashed:
            return _month_day(int(slashed.group(1)), int(slashed.group(2)), today)
    except ValueError:
        return None
    if (alone := _day_of_month(text, today)) is not None:
        return alone
    lowered = text.lower()
    for word, offset in _RELATIVE:
        if word in lowered:
            return today + timedelta(days=offset)
    return _weekday(text, today)
