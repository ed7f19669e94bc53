"""Medical appointments: parallel lookups, one confirmation, hold → book → notify, races."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from langgraph.types import Command

from scenarios.appointment.tools import (
    NotificationBackends,
    list_departments,
    list_doctors,
    list_free_slots,
)
from state import Context
from tests.conftest import ALICE, BOB, registry_with, say
from tests.helpers import set_env
from tools.executor.errors import PermanentToolError
from tools.executor.failures import said

pytestmark = pytest.mark.integration

ASK = "帮我预约6月20号的皮肤科"
CONFIG = {"configurable": {"thread_id": "t1"}}


@pytest.fixture(autouse=True)
def june_18(monkeypatch):
    set_env(monkeypatch, "REACH_TODAY", "2024-06-18")


def slot(db, slot_id="S-005"):
    return db.query_one(
        "SELECT status, held_by FROM appointment_slots WHERE slot_id = ?", (slot_id,)
    )


def appointments(db):
    return db.query("SELECT slot_id, user_id, patient_name FROM appointments")


def test_happy_path_books_notifies_and_leaves_the_right_rows(make_app, db):
    app = make_app()
    say(app, ASK)
    payload = app.get_state(CONFIG).tasks[0].interrupts[0].value
    assert "15:00" in payload["question"] and "赵医生" in payload["question"]
    assert slot(db)["status"] == "free"  # nothing held before the confirmation
    out = app.invoke(Command(resume="确认"), CONFIG, context=ALICE)
    assert "预约成功" in out["messages"][-1].content and "已短信通知" in out["messages"][-1].content
    assert slot(db)["status"] == "booked"
    assert appointments(db) == [{"slot_id": "S-005", "user_id": "u_10001", "patient_name": "张三"}]
    notices = db.query("SELECT user_id, content FROM notifications")
    assert len(notices) == 1 and "S-005" not in notices[0]["content"]
    tools = [r["tool"] for r in out["tool_results"]]
    assert tools == [
        "list_departments",
        "list_doctors",
        "list_free_slots",
        "hold_appointment_slot",
        "book_appointment",
        "notify_patient",
    ]


def test_lookups_run_concurrently(make_app, db):
    def slow(args, ctx):
        time.sleep(0.3)
        return list_free_slots(args, ctx)

    def slow_departments(args, ctx):
        time.sleep(0.3)
        return list_departments(args, ctx)

    def slow_doctors(args, ctx):
        time.sleep(0.3)
        return list_doctors(args, ctx)

    registry = registry_with("list_free_slots", handler=slow)
    for name, handler in (("list_departments", slow_departments), ("list_doctors", slow_doctors)):
        registry.register(
            registry.get(name).__class__(**{**registry.get(name).__dict__, "handler": handler}),
            replace_existing=True,
        )
    app = make_app(registry=registry)
    started = time.perf_counter()
    say(app, ASK)
    assert time.perf_counter() - started < 0.85  # three 0.3 s lookups side by side


def test_two_patients_racing_for_the_last_slot(make_app, db):
    app = make_app()
    for user, thread in ((ALICE, "a"), (BOB, "b")):
        say(app, ASK, thread=thread, context=user)
    with ThreadPoolExecutor(max_workers=2) as pool:
        outs = list(
            pool.map(
                lambda pair: app.invoke(
                    Command(resume="确认"),
                    {"configurable": {"thread_id": pair[0]}},
                    context=pair[1],
                ),
                [("a", ALICE), ("b", BOB)],
            )
        )
    replies = [out["messages"][-1].content for out in outs]
    assert sum("预约成功" in r for r in replies) == 1
    assert sum("刚被其他人约走" in r for r in replies) == 1
    loser = next(out for out in outs if "刚被其他人约走" in out["messages"][-1].content)
    assert loser["missing_slots"] == ["day"]  # asked for another day: the answer goes on
    assert len(appointments(db)) == 1 and slot(db)["status"] == "booked"


def test_failed_notification_keeps_the_booking(make_app, db, monkeypatch):
    def down(user_id, content):
        raise ConnectionError("sms gateway down")

    monkeypatch.setattr(NotificationBackends, "send", staticmethod(down))
    app = make_app()
    say(app, ASK)
    out = app.invoke(Command(resume="确认"), CONFIG, context=ALICE)
    reply = out["messages"][-1].content
    assert "预约成功" in reply
    # the notice's own failure, in the generic sentence of its class, after the booking
    assert "暂时无法发送预约短信" in reply and said(reply, "zh") == {"unavailable"}
    assert slot(db)["status"] == "booked" and len(appointments(db)) == 1


def test_failed_booking_releases_the_hold(make_app, db):
    def broken(args, ctx):
        raise PermanentToolError("booking service error")

    app = make_app(registry=registry_with("book_appointment", handler=broken))
    say(app, ASK)
    out = app.invoke(Command(resume="确认"), CONFIG, context=ALICE)
    reply = out["messages"][-1].content
    assert said(reply, "zh") == {"unavailable"} and "预约挂号" in reply
    assert "预约成功" not in reply
    assert slot(db) == {"status": "free", "held_by": None}
    assert appointments(db) == []


def test_declined_appointment_holds_nothing(make_app, db):
    app = make_app()
    say(app, ASK)
    out = app.invoke(Command(resume="取消"), CONFIG, context=ALICE)
    assert "已取消" in out["messages"][-1].content
    assert slot(db)["status"] == "free" and appointments(db) == []


def test_missing_details_are_asked_for_and_a_full_day_is_said(make_app, db):
    app = make_app()
    first = say(app, "我想挂号")
    assert first["missing_slots"] == ["department", "day"]
    say(app, "皮肤科，6月20号")
    app.invoke(Command(resume="确认"), CONFIG, context=ALICE)
    again = say(app, ASK, thread="t2", context=Context(user_id="u_10002", user_role="customer"))
    assert "没有可预约的号" in again["messages"][-1].content


def test_a_department_the_clinic_lacks_is_named_and_the_ones_it_has_offered(make_app, db):
    app = make_app()
    first = say(app, "帮我约个6月20号下午的牙科")
    reply = first["messages"][-1].content
    assert "没有牙科" in reply and "内科、儿科、皮肤科" in reply
    assert first["invalid_slots"] == {"department": "牙科: not_offered"}
    assert appointments(db) == []  # nothing held or booked for a department that is not here
    # the day is kept; naming a department the clinic has goes on to the confirmation
    second = say(app, "那就皮肤科吧")
    assert second["invalid_slots"] == {}
    assert second["slots"]["day"] == "2024-06-20" and second["slots"]["department"] == "皮肤科"
    payload = app.get_state(CONFIG).tasks[0].interrupts[0].value
    assert "皮肤科" in payload["question"] and "赵医生" in payload["question"]


def test_a_full_day_offers_the_nearest_free_days_and_the_answer_books_one(make_app, db):
    app = make_app()
    first = say(app, "帮我挂6月22号的内科")
    reply = first["messages"][-1].content
    assert "2024-06-22 内科没有可预约的号了" in reply
    assert "最近有号的日子：2024-06-20、2024-06-21" in reply and "请问换哪一天" in reply
    assert first["missing_slots"] == ["day"] and "day" not in first["slots"]
    say(app, "那6月21号呢")  # no intent of its own: it answers the question
    payload = app.get_state(CONFIG).tasks[0].interrupts[0].value
    assert "2024-06-21 09:00" in payload["question"] and "王医生" in payload["question"]
    out = app.invoke(Command(resume="确认"), CONFIG, context=ALICE)
    assert "预约成功：2024-06-21 09:00 内科王医生" in out["messages"][-1].content
    assert appointments(db) == [{"slot_id": "S-006", "user_id": "u_10001", "patient_name": "张三"}]


def test_another_day_without_a_date_is_asked_for_and_no_free_day_ends_the_task(make_app, db):
    app = make_app()
    say(app, "帮我挂6月22号的内科")
    again = say(app, "换一天吧")
    assert again["missing_slots"] == ["day"] and again["slots"] == {"department": "内科"}
    assert "就诊日期" in again["messages"][-1].content
    # the clinic's only dermatology slot booked: no other day to offer, so nothing is asked
    say(app, ASK, thread="skin")
    app.invoke(Command(resume="确认"), {"configurable": {"thread_id": "skin"}}, context=ALICE)
    full = say(app, "帮我挂6月21号的皮肤科", thread="late", context=BOB)
    assert "近期也都约满了" in full["messages"][-1].content
    assert full["missing_slots"] == []


def test_a_day_of_the_month_alone_books_and_answers_a_full_day(make_app, db):
    app = make_app()
    first = say(app, "帮我挂22号内科")
    assert "2024-06-22 内科没有可预约的号了" in first["messages"][-1].content
    say(app, "21号可以吗")
    payload = app.get_state(CONFIG).tasks[0].interrupts[0].value
    assert "2024-06-21 09:00" in payload["question"]


def test_a_day_that_has_passed_is_asked_again_and_nothing_is_booked(app, db):
    out = say(app, "帮我挂6月17号的内科")  # yesterday
    assert "2024-06-17 已经过去了" in out["messages"][-1].content
    assert not app.get_state(CONFIG).interrupts
    out = say(app, "那就6月20号")
    assert app.get_state(CONFIG).interrupts  # the new day goes on to the confirmation
    assert appointments(db) == []


def booked_slots(db):
    return [row["slot_id"] for row in appointments(db)]


def test_the_afternoon_asked_for_books_the_afternoon_slot(app, db):
    out = say(app, "帮我挂20号下午的内科")
    assert "14:00" in out["__interrupt__"][0].value["question"]
    say(app, "确认")
    assert booked_slots(db) == ["S-003"]  # 14:00, not the earlier 10:00


def test_no_slot_in_the_part_of_the_day_offers_the_days_other_times(app, db):
    out = say(app, "帮我挂20号晚上的内科")
    reply = out["messages"][-1].content
    assert "晚上没有号了" in reply and "10:00（王医生）" in reply and "14:00（陈医生）" in reply
    assert not app.get_state(CONFIG).interrupts and booked_slots(db) == []
    out = say(app, "下午吧")  # the answer continues the booking
    assert "14:00" in out["__interrupt__"][0].value["question"]


def test_any_time_takes_the_first_free_slot_of_the_day(app, db):
    say(app, "帮我挂20号晚上的内科")
    out = say(app, "可以")
    assert "10:00" in out["__interrupt__"][0].value["question"]
    say(app, "确认")
    assert booked_slots(db) == ["S-002"]


def test_the_part_of_the_day_in_english(app):
    out = say(app, "book internal medicine on the 20th in the evening")
    assert "in the evening" in out["messages"][-1].content
    assert (
        "internal medicine" in out["messages"][-1].content
        and "内科" not in out["messages"][-1].content
    )
    out = say(app, "the afternoon then")
    assert "14:00" in out["__interrupt__"][0].value["question"]


def book(app, ask, thread="t1"):
    say(app, ask, thread=thread)
    app.invoke(Command(resume="确认"), {"configurable": {"thread_id": thread}}, context=ALICE)


def test_the_only_appointment_is_cancelled_after_a_confirmation_and_its_slot_freed(app, db):
    book(app, ASK)
    out = say(app, "帮我取消预约")
    question = out["__interrupt__"][0].value["question"]
    assert "取消 2024-06-20 15:00 皮肤科赵医生的预约" in question
    assert "cancel_appointment" not in question
    assert booked_slots(db) == ["S-005"]  # nothing is cancelled before the yes
    out = app.invoke(Command(resume="确认"), CONFIG, context=ALICE)
    assert "已取消 2024-06-20 15:00 皮肤科赵医生的预约" in out["messages"][-1].content
    assert booked_slots(db) == [] and slot(db)["status"] == "free"


def test_two_appointments_are_offered_and_the_day_named_picks_one(app, db):
    book(app, "帮我挂20号下午的内科")
    book(app, "帮我预约6月21号的内科")
    out = say(app, "取消内科的预约")
    question = out["messages"][-1].content
    assert "2024-06-20 14:00" in question and "2024-06-21 09:00" in question
    out = say(app, "21号那个")
    assert "取消 2024-06-21 09:00 内科王医生的预约" in out["__interrupt__"][0].value["question"]
    app.invoke(Command(resume="确认"), CONFIG, context=ALICE)
    assert booked_slots(db) == ["S-003"]


def test_nobody_cancels_another_patients_appointment(app, db):
    book(app, ASK)
    number = appointments(db)[0]["slot_id"] and db.query_one(
        "SELECT appointment_id FROM appointments"
    )
    out = say(app, f"取消预约 {number['appointment_id']}", thread="bob", context=BOB)
    assert "没有找到" in out["messages"][-1].content
    assert booked_slots(db) == ["S-005"]


def test_with_no_appointment_the_answer_says_so_and_the_task_ends(app):
    out = say(app, "帮我取消预约")
    assert "没有待就诊的预约，不需要取消" in out["messages"][-1].content
    values = app.get_state(CONFIG).values
    assert values["missing_slots"] == [] and values["pending_tool_calls"] == []
    assert values["intent"] == "CANCEL_APPOINTMENT" and not app.get_state(CONFIG).next
    # the next message starts afresh, not as the number of an appointment to cancel
    assert "配送中" in say(app, "OD-20240618-001 到哪了")["messages"][-1].content


def test_cancelling_in_english_names_the_appointment_or_the_booking(app, db):
    book(app, ASK)
    out = say(app, "I want to cancel my doctor's appointment", thread="t1")
    assert "Cancel the dermatology appointment" in out["__interrupt__"][0].value["question"]
    out = say(app, "cancel my booking", thread="t2")
    assert "Cancel the dermatology appointment" in out["__interrupt__"][0].value["question"]
    out = say(app, "cancel my booking", thread="bob", context=BOB)
    assert "nothing to cancel" in out["messages"][-1].content
    for number, typed in enumerate(("i wanna cancel my apointment", "cancel my appt")):
        out = say(app, typed, thread=f"typo-{number}", context=BOB)
        assert "nothing to cancel" in out["messages"][-1].content, typed
