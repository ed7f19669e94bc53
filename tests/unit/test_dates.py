"""Dates as people say them, weekdays included, counted from an injected today."""

from __future__ import annotations

from datetime import date

import pytest

from scenarios.dates import find_date, is_past

TUESDAY = date(2024, 6, 18)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-06-20", date(2024, 6, 20)),
        ("6月20号", date(2024, 6, 20)),
        ("明天", date(2024, 6, 19)),
        ("周五", date(2024, 6, 21)),  # the next one to come
        ("星期二", date(2024, 6, 25)),  # today's weekday alone: a week ahead
        ("礼拜天", date(2024, 6, 23)),
        ("周末", date(2024, 6, 22)),
        ("下周一", date(2024, 6, 24)),  # the Monday of next week
        ("下个星期三", date(2024, 6, 26)),
        ("下下周一", date(2024, 7, 1)),
        ("这周五", date(2024, 6, 21)),
        ("本周日", date(2024, 6, 23)),
        ("上周五", date(2024, 6, 14)),  # read as said; the tool refuses a past day
        ("想约下周一上午的皮肤科", date(2024, 6, 24)),
        ("每周一次的复诊，约下周三内科", date(2024, 6, 26)),  # 每周一次 is no Monday
        ("next Monday", date(2024, 6, 24)),
        ("this friday", date(2024, 6, 21)),
        ("on Tuesday", date(2024, 6, 25)),
        ("明天周三", date(2024, 6, 19)),  # the relative word first
        ("6月20号周四", date(2024, 6, 20)),  # a full date first
    ],
)
def test_dates_and_weekdays(text, expected):
    assert find_date(text, TUESDAY) == expected


@pytest.mark.parametrize("text", ["星期几都行", "一周一次", "每周一次", "周年庆", "saturdays"])
def test_no_weekday_is_read_where_none_is_named(text):
    assert find_date(text, TUESDAY) is None


def test_a_weekday_near_the_end_of_the_year_crosses_into_the_next():
    assert find_date("下周一", date(2024, 12, 31)) == date(2025, 1, 6)
    assert find_date("周五", date(2024, 12, 28)) == date(2025, 1, 3)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("next fri", date(2024, 6, 28)),
        ("on tue", date(2024, 6, 25)),
        ("this sat", date(2024, 6, 22)),
        ("can u book dermatology next fri", date(2024, 6, 28)),
    ],
)
def test_english_abbreviations_after_next_this_or_on(text, expected):
    assert find_date(text, TUESDAY) == expected


@pytest.mark.parametrize("text", ["i sat down", "the sun is out", "wed", "fri"])
def test_a_bare_abbreviation_is_no_day(text):
    assert find_date(text, TUESDAY) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("帮我挂22号内科", date(2024, 6, 22)),
        ("21号可以吗", date(2024, 6, 21)),
        ("那就20号吧", date(2024, 6, 20)),
        ("18号", date(2024, 6, 18)),  # today
        ("10号", date(2024, 7, 10)),  # passed this month: next month's
        ("皮肤科20号还有没有号啊", date(2024, 6, 20)),
        ("I need a skin doctor on the 20th", date(2024, 6, 20)),
        ("how about the 1st", date(2024, 7, 1)),
    ],
)
def test_a_day_of_the_month_alone_is_the_next_one_to_come(text, expected):
    assert find_date(text, TUESDAY) == expected


@pytest.mark.parametrize("text", ["3号楼门口", "坐1号线", "3日内送到", "订单12345号", "31号"])
def test_numbers_that_are_no_day_of_the_month(text):
    # 31号 in June (30 days): asked for rather than guessed as July's
    assert find_date(text, TUESDAY) is None


DECEMBER = date(2026, 12, 2)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("6月20号", date(2027, 6, 20)),  # said in December: next June
        ("June 20", date(2027, 6, 20)),
        ("11月25号", date(2026, 11, 25)),  # a week ago: this year's, so it can be said passed
        ("12月24号", date(2026, 12, 24)),
        ("2026-06-20", date(2026, 6, 20)),  # a year said is the year meant
        ("昨天", date(2026, 12, 1)),
        ("前天", date(2026, 11, 30)),
        ("yesterday", date(2026, 12, 1)),
    ],
)
def test_a_month_and_day_long_past_is_next_years(text, expected):
    assert find_date(text, DECEMBER) == expected


def test_29_february_of_a_year_without_one_stays_this_years():
    assert find_date("2月29号", date(2024, 12, 2)) == date(2024, 2, 29)  # 2025 has none


def test_only_days_before_today_are_past():
    assert is_past(date(2026, 12, 1), DECEMBER)
    assert not is_past(DECEMBER, DECEMBER)
