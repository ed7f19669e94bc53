"""Flight booking: slots over several turns, ID checksum, corrections, confirmation, and the
database and storage left behind."""

from __future__ import annotations

import json

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from graph import time_travel
from observability.audit import AuditLog
from tests.conftest import ALICE, fast_executor, say
from tests.helpers import set_env

pytestmark = pytest.mark.integration

VALID_ID = "110101199001011237"
DESIGN_ID = "110101199001011234"  # the design's example: its check digit is wrong
FULL = f"帮我订一张2024-06-20从上海去北京的机票，乘客张三，身份证号{VALID_ID}"
CONFIG = {"configurable": {"thread_id": "t1"}}


@pytest.fixture(autouse=True)
def june_18(monkeypatch):
    set_env(monkeypatch, "REACH_TODAY", "2024-06-18")


def seats(db, flight="MU5101", day="2024-06-20") -> int:
    return db.query(
        "SELECT seats_left FROM flights WHERE flight_no = ? AND flight_date = ?", (flight, day)
    )[0]["seats_left"]


def bookings(db):
    return db.query(
        "SELECT booking_id, user_id, flight_no, flight_date, passenger_name,"
        " passenger_masked FROM flight_bookings ORDER BY booking_id"
    )


def confirm(app, answer="确认"):
    return app.invoke(Command(resume=answer), CONFIG, context=ALICE)


def test_happy_path_books_one_seat(make_app, db):
    app = make_app()
    say(app, FULL)
    payload = app.get_state(CONFIG).tasks[0].interrupts[0].value
    assert payload["actions"][0]["arguments"]["passenger_id"] == "110101********1237"
    before = seats(db)
    out = confirm(app)
    reply = out["messages"][-1].content
    assert "FL-20240620001" in reply and "08:00" in reply and "10:15" in reply
    assert seats(db) == before - 1
    assert bookings(db) == [
        {
            "booking_id": "FL-20240620001",
            "user_id": "u_10001",
            "flight_no": "MU5101",
            "flight_date": "2024-06-20",
            "passenger_name": "张三",
            "passenger_masked": "110101********1237",
        }
    ]


def test_english_booking(make_app, db):
    app = make_app()
    say(
        app,
        f"book a flight from Shanghai to Beijing on June 21, passenger Zhang San, id {VALID_ID}",
    )
    out = confirm(app, "yes")
    assert "Booked MU5101" in out["messages"][-1].content
    assert bookings(db)[0]["flight_date"] == "2024-06-21"


def test_asks_only_for_what_is_missing_in_few_turns(make_app, db):
    app = make_app()
    first = say(app, "帮我订一张去北京的机票")
    assert first["missing_slots"] == ["origin", "departure_date", "passenger_name", "passenger_id"]
    assert "出发城市、出发日期、乘客姓名、乘客身份证号" in first["messages"][-1].content
    second = say(app, "6月20号从上海出发")
    assert second["missing_slots"] == ["passenger_name", "passenger_id"]
    assert "出发城市" not in second["messages"][-1].content
    say(app, f"乘客张三，身份证{VALID_ID}")
    assert app.get_state(CONFIG).next == ("tool",)
    confirm(app)
    assert len(bookings(db)) == 1


def test_invalid_id_number_is_refused_and_asked_again(make_app, db):
    app = make_app()
    out = say(app, FULL.replace(VALID_ID, DESIGN_ID))
    assert out["missing_slots"] == ["passenger_id"]
    assert "校验位不正确" in out["messages"][-1].content
    assert "110101********1234" in out["messages"][-1].content
    again = say(app, f"身份证号是{VALID_ID}")
    assert again["missing_slots"] == []
    confirm(app)
    assert bookings(db)[0]["passenger_masked"] == "110101********1237"


def test_correction_instead_of_confirmation_changes_the_booking(make_app, db):
    app = make_app()
    say(app, FULL)
    revised = confirm(app, "不对，是 6 月 21 号")
    payload = app.get_state(CONFIG).tasks[0].interrupts[0].value
    assert payload["actions"][0]["arguments"]["departure_date"] == "2024-06-21"
    assert revised["slots"]["departure_date"] == "2024-06-21"
    assert bookings(db) == []  # nothing booked before the new confirmation
    confirm(app)
    assert [b["flight_date"] for b in bookings(db)] == ["2024-06-21"]


def test_rejection_books_nothing(make_app, db):
    app = make_app()
    say(app, FULL)
    before = seats(db)
    out = confirm(app, "取消")
    assert "已取消" in out["messages"][-1].content
    assert bookings(db) == [] and seats(db) == before


def test_sold_out_and_missing_route(make_app, db):
    with db.transaction() as conn:
        conn.execute("UPDATE flights SET seats_left = 0 WHERE flight_date = '2024-06-20'")
    app = make_app()
    say(app, FULL)
    out = confirm(app)
    assert "已售罄" in out["messages"][-1].content
    say(app, f"帮我订2024-06-20从上海到深圳的机票，乘客张三，身份证号{VALID_ID}", thread="t2")
    out = app.invoke(Command(resume="确认"), {"configurable": {"thread_id": "t2"}}, context=ALICE)
    assert "无此航线" in out["messages"][-1].content
    assert bookings(db) == []


def test_the_full_id_number_is_never_stored(make_app, db, tmp_path):
    saver = InMemorySaver()
    audit = AuditLog(tmp_path / "audit.jsonl")
    app = make_app(
        checkpointer=saver, executor_factory=lambda registry: fast_executor(registry, audit=audit)
    )
    say(app, FULL)
    out = confirm(app)
    audit.flush()
    stored = repr(saver.storage) + repr(saver.writes) + repr(saver.blobs)
    assert VALID_ID not in stored  # no checkpoint, not even the turn's input
    assert "110101********1237" in stored
    assert VALID_ID not in json.dumps(out["protocol"], ensure_ascii=False)
    assert VALID_ID not in (tmp_path / "audit.jsonl").read_text()
    assert VALID_ID not in json.dumps(bookings(db), ensure_ascii=False)
    assert VALID_ID not in out["messages"][-1].content
    assert out["slots"]["passenger_id"].startswith("pii:")


def test_replaying_the_booking_does_not_book_twice(make_app, db):
    app = make_app()
    say(app, FULL)
    confirm(app)
    before_tool = next(e for e in reversed(time_travel.history(app, "t1")) if e.next == ("tool",))
    replayed = time_travel.replay(app, "t1", before_tool.checkpoint_id, ALICE)
    assert replayed["tool_results"][-1]["duplicated"] is True
    assert len(bookings(db)) == 1


def test_clarification_turns_are_measured(make_app, db, capsys):
    """Average clarification turns needed before a booking can be confirmed."""
    conversations = [
        [FULL],
        ["帮我订一张去北京的机票", "6月20号从上海出发", f"乘客张三，身份证{VALID_ID}"],
        ["我要订机票，从上海到北京", f"6月20号，乘客李四，身份证号{VALID_ID}"],
        [
            "book a flight to Beijing",
            "from Shanghai on June 20",
            f"passenger Zhang San, id {VALID_ID}",
        ],
    ]
    turns = []
    app = make_app()
    for index, script in enumerate(conversations):
        thread = {"configurable": {"thread_id": f"c{index}"}}
        asked = 0
        for text in script:
            out = app.invoke({"messages": [("user", text)]}, thread, context=ALICE)
            if app.get_state(thread).next == ("tool",):
                break
            asked += 1
            assert out["missing_slots"]
        assert app.get_state(thread).next == ("tool",), script
        turns.append(asked)
    average = sum(turns) / len(turns)
    with capsys.disabled():
        print(
            f"\nflight booking: clarification turns per conversation {turns}, average {average:.2f}"
        )
    assert average <= 2


def test_returning_to_an_unfinished_booking_after_another_topic(
    make_app, db, httpserver, monkeypatch
):
    set_env(monkeypatch, "REACH_WEATHER_URL", httpserver.url_for(""))
    httpserver.expect_request("/weather").respond_with_json(
        {"city": "Beijing", "temp_c": 30, "condition": "晴", "humidity": 20}
    )
    app = make_app()
    first = say(app, "帮我订一张去北京的机票")
    weather = say(app, "北京天气怎么样")
    assert "北京现在晴" in weather["messages"][-1].content
    assert weather["slots"] == {"city": "北京"}  # the booking's slots did not leak in
    back = say(app, "继续订机票，6月20号从上海出发")
    assert back["task_id"] == first["task_id"]
    assert back["slots"]["destination"] == "北京"  # what was gathered before is back
    assert back["missing_slots"] == ["passenger_name", "passenger_id"]
    say(app, f"乘客张三，身份证{VALID_ID}")
    confirm(app)
    assert bookings(db)[0]["flight_date"] == "2024-06-20"


def test_a_travel_date_that_has_passed_is_asked_again(app):
    out = say(app, "我要订昨天上海到北京的机票")
    assert "2024-06-17 已经过去了" in out["messages"][-1].content
    out = say(app, "6月20号")
    assert "已经过去" not in out["messages"][-1].content
    assert (
        app.get_state({"configurable": {"thread_id": "t1"}}).values["slots"]["departure_date"]
        == "2024-06-20"
    )
