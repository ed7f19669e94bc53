"""Questions about the day's flights are answered before booking (issue 38).

"6月20号上海到北京最便宜的航班是哪班" started a booking and asked for a passenger. Now a search
answers with the flights, their times, seats and fares; "cheapest", "earliest", "下午的" are
answered without booking; a flight named from it is then booked on the route and day searched.
"""

from __future__ import annotations

ROUTE = "6月20号上海到北京"


def _no_booking(t) -> None:
    assert t.rows("SELECT * FROM flight_bookings") == [] and not t.pending
    assert "身份证" not in t.replies and "乘客" not in t.replies


def test_the_cheapest_is_answered_without_booking(talk, world):
    t = talk()(f"{ROUTE}最便宜的航班是哪班")
    assert t.out["intent"] == "SEARCH_FLIGHTS"
    assert "最便宜的是 MU5101" in t.replies and "980 元" in t.replies and "08:00" in t.replies
    _no_booking(t)


def test_the_days_flights_with_times_seats_and_fares(talk, world):
    t = talk()(f"{ROUTE}有哪些航班")
    for said in ("MU5101", "08:00", "10:15", "余座 12", "980 元", "CA1858", "13:30", "1,050 元"):
        assert said in t.replies, said
    for internal in ("price_cents", "98000", "None", "seats_left", "search_flights"):
        assert internal not in t.replies
    _no_booking(t)


def test_the_afternoon_and_the_earliest_follow_up_on_the_search(talk, world):
    t = talk()(f"{ROUTE}有哪些航班", "下午的")
    assert "下午共有 1 班" in t.replies and "CA1858" in t.replies and "MU5101" not in t.replies
    t("最早的呢")
    assert "最早的是 CA1858" in t.replies  # the afternoon's earliest
    _no_booking(t)


def test_a_sold_out_flight_is_said_so_and_never_picked(talk, world):
    t = talk()
    with t.db.transaction() as conn:
        conn.execute("UPDATE flights SET seats_left = 0 WHERE flight_no = 'CA1858'")
    t(f"{ROUTE}有哪些航班")
    assert "CA1858（13:30 起飞，15:45 到达，已售罄" in t.replies
    t("下午最便宜的呢")
    assert "都已售罄" in t.replies
    _no_booking(t)


def test_in_english(talk, world):
    t = talk()("what flights are there from shanghai to beijing on june 20")
    assert "Flights from Shanghai to Beijing on 2024-06-20 (2)" in t.replies
    t("the afternoon ones?")
    assert "in the afternoon (1)" in t.replies and "CA1858" in t.replies
    t("cheapest?")
    assert "The cheapest flight" in t.replies and "CA1858" in t.replies
    _no_booking(t)


def test_a_flight_named_from_the_search_is_booked_on_the_route_and_day_searched(talk, world):
    t = talk()(f"{ROUTE}有哪些航班", "订CA1858")
    assert t.out["intent"] == "BOOK_FLIGHT" and "乘客姓名" in t.replies
    assert "出发城市" not in t.replies and "出发日期" not in t.replies  # taken from the search
    t("张三，110101199001011237")
    assert t.pending
    question = t.replies
    assert "2024-06-20 上海→北京 的 CA1858 航班（13:30 起飞，15:45 到达）" in question
    assert "票价 1,050 元" in question
    assert "None" not in question and "flight_no" not in question
    t("确认")
    rows = t.rows("SELECT flight_no, flight_date FROM flight_bookings")
    assert rows == [{"flight_no": "CA1858", "flight_date": "2024-06-20"}]
