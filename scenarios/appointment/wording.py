"""What the appointment agent says, in zh and en."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from contract.scenario import Describer, Speaker, Wording
from scenarios.appointment.tools import (
    PERIODS,
    AppointmentListData,
    BookingData,
    CancelledData,
    FreeSlotRow,
    FreeSlotsData,
    ListedAppointmentData,
)
from state import AgentState, ToolResult
from tools.executor.envelope import result_data

WORDING: Wording = {
    "intent.BOOK_APPOINTMENT": {"zh": "预约挂号", "en": "book a medical appointment"},
    "slot.department": {
        "zh": "科室（内科、儿科、皮肤科）",
        "en": "department (internal medicine, pediatrics, dermatology)",
    },
    "invalid.department": {
        "zh": "我们这里没有{value}，可以预约的科室有：内科、儿科、皮肤科。请问挂哪个科？",
        "en": "There is no {value} here; you can book internal medicine, pediatrics or"
        " dermatology. Which one?",
    },
    "invalid.day": {
        "zh": "{value} 已经过去了，请换一个今天以后的就诊日期。",
        "en": "{value} has already passed; please choose a day from today on.",
    },
    "department.内科": {"zh": "内科", "en": "internal medicine"},
    "department.儿科": {"zh": "儿科", "en": "pediatrics"},
    "department.皮肤科": {"zh": "皮肤科", "en": "dermatology"},
    "intent.CANCEL_APPOINTMENT": {"zh": "取消预约", "en": "cancel an appointment"},
    "slot.appointment_id": {"zh": "预约号（AP- 开头）", "en": "appointment number (AP-…)"},
    "ask.appointment_id": {
        "zh": "好的，我来帮您取消预约。请告诉我预约号（AP- 开头），或是哪个科室的预约。",
        "en": "Sure, I can cancel an appointment. Which one: its number (AP-…) or its department?",
    },
    "offer.appointment_id": {"zh": "您的预约：{appointments}。", "en": " Yours: {appointments}."},
    "offered_appointment": {
        "zh": "{appointment_id}（{slot_date} {slot_time} {department}{doctor}）",
        "en": "{appointment_id} ({department}, {doctor}, {slot_date} {slot_time})",
    },
    "appointments_none": {
        "zh": "您目前没有待就诊的预约。",
        "en": "You have no upcoming appointments.",
    },
    "appointments_none_to_cancel": {
        "zh": "您目前没有待就诊的预约，不需要取消。如果要挂号，告诉我科室就可以。",
        "en": (
            "You have no upcoming appointments, so there is nothing to cancel. To book one, "
            "just tell me the department."
        ),
    },
    "appointment_cancelled": {
        "zh": "已取消 {slot_date} {slot_time} {department}{doctor}的预约（{appointment_id}），号源已释放。",
        "en": "Cancelled: {department} with {doctor} on {slot_date} at {slot_time} ({appointment_id}).",
    },
    "appointment_not_found": {
        "zh": "没有找到您的预约 {appointment_id}，请核对预约号。",
        "en": "There is no appointment {appointment_id} of yours; please check the number.",
    },
    "slot.period": {
        "zh": "就诊时段（上午、下午、晚上，或“都行”）",
        "en": "part of the day (morning, afternoon, evening, or “any”)",
    },
    "slot.day": {
        "zh": "就诊日期",
        "en": "day",
    },
    "appointment_notice": {
        "zh": "您已预约 {slot_date} {slot_time} {department}{doctor}，预约号 {appointment_id}。",
        "en": "Your appointment: {department}, {doctor}, {slot_date} {slot_time} ({appointment_id}).",
    },
    "appointment_booked": {
        "zh": "预约成功：{slot_date} {slot_time} {department}{doctor}，预约号 {appointment_id}。{notice}",
        "en": "Booked: {department} with {doctor} on {slot_date} at {slot_time} ({appointment_id}). {notice}",
    },
    "step.list_my_appointments": {"zh": "列出您的预约", "en": "list your appointments"},
    "step.notify_patient": {"zh": "发送预约短信", "en": "send the appointment text message"},
    "step.release_appointment_slot": {"zh": "释放暂留的号源", "en": "release the held slot"},
    "appointment_notified": {
        "zh": "已短信通知您。",
        "en": "A text message is on its way.",
    },
    "appointment_none": {
        "zh": "{day} {department}没有可预约的号了。最近有号的日子：{days}。请问换哪一天？",
        "en": "There are no free {department} slots on {day}. The nearest days with free"
        " slots: {days}. Which day would you like?",
    },
    "appointment_none_period": {
        "zh": "{day} {department}{period}没有号了，当天还有：{times}。要约其中一个，请说“上午”“下午”或“可以”；也可以换一天。",
        "en": "There are no free {department} slots on {day} in the {period}; that day still"
        " has: {times}. Say which part of the day, or “ok”, or pick another day.",
    },
    "period.morning": {"zh": "上午", "en": "morning"},
    "period.afternoon": {"zh": "下午", "en": "afternoon"},
    "period.evening": {"zh": "晚上", "en": "evening"},
    "appointment_none_soon": {
        "zh": "{day} {department}没有可预约的号了，近期也都约满了，请过几天再来看看。",
        "en": "There are no free {department} slots on {day}, nor on any other day soon."
        " Please check again in a few days.",
    },
    "appointment_taken_day": {
        "zh": "抱歉，这个号刚被其他人约走了。请问换哪一天？",
        "en": "Sorry, that slot was just taken. Which day would you like instead?",
    },
    "appointment_no_department": {
        "zh": "没有找到“{department}”这个科室。",
        "en": "There is no department called {department}.",
    },
    "appointment_failed": {
        "zh": "抱歉，预约没有成功，号源已释放，请稍后再试。",
        "en": "Sorry, the booking failed; the slot was released. Please try later.",
    },
}


_LOOKUPS = ("list_departments", "list_doctors", "list_free_slots")
"""The agent's concurrent lookups: a department that does not exist is not found by them."""


def describe_appointment(result: ToolResult, state: AgentState, speaker: Speaker) -> str | None:
    """Report the booking (and whether the notice went out), or why there is none.

    Failures it words are the clinic's own: no such department, the slot just taken, a
    booking refused after its hold was released. Others are the generic sentence's.
    """
    by_tool = {r.get("tool"): r for r in state.get("tool_results") or []}
    slots = state.get("slots") or {}
    tool = result.get("tool")
    error_type = result.get("error_type")
    if result.get("status") != "success":
        if error_type == "not_found" and tool in _LOOKUPS:
            return speaker.say(
                "appointment_no_department",
                department=department_label(slots.get("department"), speaker),
            )
        if error_type == "user_fixable" and tool == "hold_appointment_slot":
            return speaker.say("appointment_taken_day")
        released = by_tool.get("release_appointment_slot")
        if error_type == "user_fixable" and tool == "book_appointment" and released:
            if released.get("status") == "success":
                return speaker.say("appointment_failed")
        return None
    booking = by_tool.get("book_appointment")
    if tool != "list_free_slots":
        if not booking or booking.get("status") != "success":
            return None
        notify = by_tool.get("notify_patient")
        notified = notify is not None and notify.get("status") == "success"
        # a notice that did not go out is said by the generic sentence of its failure
        notice = speaker.say("appointment_notified") if notified else ""
        booked: BookingData = booking["data"]
        data = {**booked, "department": department_label(booked.get("department"), speaker)}
        return speaker.say("appointment_booked", notice=notice, **data)
    lookup = result
    other_times = _free(lookup) if slots.get("period") in PERIODS else []
    if other_times:  # free slots that day, none in the part of the day asked for
        return speaker.say(
            "appointment_none_period",
            day=slots.get("day", ""),
            department=department_label(slots.get("department"), speaker),
            period=speaker.say(f"period.{slots.get('period')}") if slots.get("period") else "",
            times=("、" if speaker.language == "zh" else ", ").join(
                f"{s['slot_time']}（{s['doctor']}）"
                if speaker.language == "zh"
                else f"{s['slot_time']} ({s['doctor']})"
                for s in other_times
            ),
        )
    days = _next_days(lookup)
    return speaker.say(
        "appointment_none" if days else "appointment_none_soon",
        day=slots.get("day", ""),
        department=department_label(slots.get("department"), speaker),
        days="、".join(days) if speaker.language == "zh" else ", ".join(days),
    )


def department_label(name: Any, speaker: Speaker) -> str:
    """Name a department (stored in Chinese) in the user's language; an unknown one as said."""
    if f"department.{name}" not in WORDING:
        return str(name or "")
    return speaker.say(f"department.{name}")


def appointment_offer(rows: Sequence[ListedAppointmentData], speaker: Speaker) -> str:
    """Name the appointments (number, day, time, department, doctor) in one offering sentence."""
    items = ("、" if speaker.language == "zh" else "; ").join(
        speaker.say(
            "offered_appointment",
            appointment_id=row["appointment_id"],
            slot_date=row["slot_date"],
            slot_time=row["slot_time"],
            department=department_label(row["department"], speaker),
            doctor=row["doctor"],
        )
        for row in rows
    )
    return speaker.say("offer.appointment_id", appointments=items)


def describe_cancel(result: ToolResult, state: AgentState, speaker: Speaker) -> str | None:
    """Say which appointment was cancelled, or list the caller's, or that it is not theirs."""
    if result.get("tool") == "list_my_appointments":
        if result.get("status") != "success":
            return None
        rows = result_data(result, AppointmentListData).get("appointments") or []
        return (
            appointment_offer(rows, speaker).strip() if rows else speaker.say("appointments_none")
        )
    if result.get("status") == "success":
        data = result_data(result, CancelledData)
        department = department_label(data.get("department"), speaker)
        return speaker.say("appointment_cancelled", **{**data, "department": department})
    if result.get("error_type") == "not_found":
        number = (state.get("slots") or {}).get("appointment_id", "")
        return speaker.say("appointment_not_found", appointment_id=number)
    return None


def _free(lookup: ToolResult | None) -> list[FreeSlotRow]:
    """The free slots a lookup found on the day asked (none fit the part of the day asked)."""
    if lookup is None or lookup.get("status") != "success":
        return []
    return list(result_data(lookup, FreeSlotsData).get("slots") or [])


def _next_days(lookup: ToolResult | None) -> list[str]:
    """The other days with free slots a full day's lookup found."""
    if lookup is None or lookup.get("status") != "success":
        return []
    return list(result_data(lookup, FreeSlotsData).get("next_days") or [])


def slot_to_reask(results: Sequence[ToolResult]) -> str | None:
    """Reopen the slot the user must answer again, if any.

    That is the day when it is full (and others are not) or its slot was just taken, and the
    part of the day when the day has slots only at other times. Then "那6月21号呢", "上午也行" or "可以" continues the booking instead of starting over.
    """
    by_tool = {r.get("tool"): r for r in results}
    if "book_appointment" in by_tool:
        return None
    hold = by_tool.get("hold_appointment_slot")
    if hold is not None:
        return "day" if hold.get("status") != "success" else None
    lookup = by_tool.get("list_free_slots")
    if _free(lookup) and all(r.get("status") == "success" for r in results):
        return "period"  # that day has slots, at other times: "可以" takes the first
    return "day" if _next_days(lookup) else None


def offered_day(results: Sequence[ToolResult]) -> dict[str, str]:
    """The one other day a full day's question names: "可以" / "ok" books it."""
    if slot_to_reask(results) != "day":
        return {}
    days = _next_days(next((r for r in results if r.get("tool") == "list_free_slots"), None))
    return {"day": days[0]} if len(days) == 1 else {}


DESCRIBE: dict[str, Describer] = {
    "list_my_appointments": describe_cancel,
    "cancel_appointment": describe_cancel,
} | dict.fromkeys(
    (
        "list_departments",
        "list_doctors",
        "list_free_slots",
        "hold_appointment_slot",
        "book_appointment",
        "release_appointment_slot",
        "notify_patient",
    ),
    describe_appointment,
)
