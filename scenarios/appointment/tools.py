"""Medical appointments: three lookups in parallel, then hold → book → notify in order.

Holding is an atomic conditional update, so two patients racing for the last slot cannot
both get it. A failed booking releases the hold; a failed notification leaves the booking.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from datetime import date
from typing import Any, TypedDict, cast

from pydantic import BaseModel, ConfigDict, Field

from storage.db import Database
from tools.executor.errors import ResourceNotFoundError, TransientToolError, UserFixableError
from tools.registry.cards import ToolCard
from tools.registry.context import ToolContext

HOLD_SECONDS = 300


class NotificationBackends:
    """Where notifications go (swappable in tests); the default records them only."""

    send: Callable[[str, str], None] = staticmethod(lambda user_id, content: None)


class DepartmentQuery(BaseModel):
    """Arguments naming a department."""

    model_config = ConfigDict(extra="forbid")

    department: str = Field(min_length=1, max_length=30, description="内科, 儿科, 皮肤科 …")


class SlotQuery(DepartmentQuery):
    """Arguments naming a department and a date."""

    day: date = Field(description="YYYY-MM-DD")


class SlotRef(BaseModel):
    """Arguments naming one slot."""

    model_config = ConfigDict(extra="forbid")

    slot_id: str = Field(pattern=r"^S-\d{3}$", description="A slot id from list_free_slots.")


class BookingRequest(SlotRef):
    """Arguments of a booking."""

    patient_name: str = Field(min_length=1, max_length=40)


class NotificationRequest(BaseModel):
    """Arguments of a notification."""

    model_config = ConfigDict(extra="forbid")

    content: str = Field(min_length=1, max_length=500)
    channel: str = Field(default="sms", pattern=r"^(sms|in_app)$")


class DepartmentRow(TypedDict):
    """A department as the tools read it."""

    dept_id: str
    name_zh: str
    name_en: str


class DepartmentsData(TypedDict):
    """What ``list_departments`` answers: every department, and the one asked for."""

    departments: list[DepartmentRow]
    match: DepartmentRow | None


class DoctorRow(TypedDict):
    """A doctor of a department."""

    doctor_id: str
    name: str
    title: str


class DoctorsData(TypedDict):
    """What ``list_doctors`` answers."""

    department: str
    doctors: list[DoctorRow]


class FreeSlotRow(TypedDict):
    """A free slot (``FreeSlot`` checks it)."""

    slot_id: str
    slot_time: str
    doctor: str
    title: str


class FreeSlotsData(TypedDict):
    """What ``list_free_slots`` answers (``FreeSlotsResult``)."""

    department: str
    day: str
    slots: list[FreeSlotRow]
    next_days: list[str]


class HoldData(TypedDict):
    """What ``hold_appointment_slot`` answers."""

    slot_id: str
    held_until: float


class ReleaseData(TypedDict):
    """What ``release_appointment_slot`` answers."""

    slot_id: str
    released: bool


class AppointmentRow(TypedDict):
    """An appointment with its slot, doctor and department, as the tools read it."""

    appointment_id: str
    slot_id: str
    slot_date: str
    slot_time: str
    doctor: str
    department: str


class BookingData(AppointmentRow):
    """What ``book_appointment`` and its status lookup answer (``BookingResult``)."""


class ListedAppointmentData(TypedDict):
    """One appointment in ``list_my_appointments``' answer (``ListedAppointment``)."""

    appointment_id: str
    slot_date: str
    slot_time: str
    doctor: str
    department: str
    named: bool


class AppointmentListData(TypedDict):
    """What ``list_my_appointments`` answers (``AppointmentList``)."""

    appointments: list[ListedAppointmentData]


class CancelledData(TypedDict):
    """What ``cancel_appointment`` answers (``CancelResult``)."""

    appointment_id: str
    slot_date: str
    slot_time: str
    doctor: str
    department: str


class NoticeData(TypedDict):
    """What ``notify_patient`` answers."""

    sent: bool
    channel: str


def patient_name(db: Database, user_id: str) -> str:
    """Return the name the booking is made in: the trusted caller's display name."""
    row = db.query_one("SELECT display_name FROM users WHERE user_id = ?", (user_id,))
    return str(row["display_name"]) if row else user_id


def _department(db: Database, name: str) -> DepartmentRow:
    row = db.query_one(
        "SELECT dept_id, name_zh, name_en FROM departments WHERE name_zh = ? OR lower(name_en) = ?",
        (name, name.lower()),
    )
    if row is None:
        msg = f"no department called {name}"
        raise ResourceNotFoundError(msg, details={"department": name})
    return cast("DepartmentRow", row)


def list_departments(args: DepartmentQuery, ctx: ToolContext) -> DepartmentsData:
    """Return the hospital's departments, and whether the asked one exists."""
    db = ctx.database()
    rows = cast(
        "list[DepartmentRow]",
        db.query("SELECT dept_id, name_zh, name_en FROM departments ORDER BY dept_id"),
    )
    match = next((r for r in rows if args.department in (r["name_zh"], r["name_en"])), None)
    return {"departments": rows, "match": match}


def list_doctors(args: DepartmentQuery, ctx: ToolContext) -> DoctorsData:
    """Return the doctors of a department."""
    db = ctx.database()
    dept = _department(db, args.department)
    doctors = cast(
        "list[DoctorRow]",
        db.query(
            "SELECT doctor_id, name, title FROM doctors WHERE dept_id = ?", (dept["dept_id"],)
        ),
    )
    return {"department": dept["name_zh"], "doctors": doctors}


_FREE = "(s.status = 'free' OR (s.status = 'held' AND s.held_until < ?))"
"""A slot anyone may hold now: free, or held past its hold."""
NEXT_DAYS = 3
"""Other days with free slots a full day's answer offers."""
PERIODS = {
    "morning": ("00:00", "12:00"),
    "afternoon": ("12:00", "18:00"),
    "evening": ("18:00", "24:00"),
}
"""The parts of a day a patient may ask for ("下午"), as [from, to) clock times."""


def in_period(slot_time: str, period: str | None) -> bool:
    """Tell whether a slot's ``HH:MM`` falls in ``period`` (any slot when none was asked)."""
    if period not in PERIODS:
        return True
    start, end = PERIODS[period]
    return start <= slot_time < end


def list_free_slots(args: SlotQuery, ctx: ToolContext) -> FreeSlotsData:
    """Return a department's free slots on a day, earliest first.

    A day without any also names the nearest other days with free slots (from today on),
    so the answer can offer them.
    """
    db = ctx.database()
    dept = _department(db, args.department)
    now = time.time()
    slots = cast(
        "list[FreeSlotRow]",
        db.query(
            "SELECT s.slot_id, s.slot_time, d.name AS doctor, d.title FROM appointment_slots s"
            " JOIN doctors d ON d.doctor_id = s.doctor_id WHERE d.dept_id = ? AND s.slot_date = ?"
            f" AND {_FREE} ORDER BY s.slot_time",
            (dept["dept_id"], args.day.isoformat(), now),
        ),
    )
    days: list[str] = []
    if not slots:
        rows = db.query(
            "SELECT DISTINCT s.slot_date FROM appointment_slots s JOIN doctors d"
            f" ON d.doctor_id = s.doctor_id WHERE d.dept_id = ? AND {_FREE}"
            " AND s.slot_date >= ? AND s.slot_date != ?"
            " ORDER BY abs(julianday(s.slot_date) - julianday(?)), s.slot_date LIMIT ?",
            (
                dept["dept_id"],
                now,
                ctx.today().isoformat(),
                args.day.isoformat(),
                args.day.isoformat(),
                NEXT_DAYS,
            ),
        )
        days = sorted(str(row["slot_date"]) for row in rows)
    return {
        "department": dept["name_zh"],
        "day": args.day.isoformat(),
        "slots": slots,
        "next_days": days,
    }


def hold_appointment_slot(args: SlotRef, ctx: ToolContext) -> HoldData:
    """Hold a slot for this user for a few minutes; exactly one racer can win it."""
    with ctx.database().transaction() as conn:
        ledger = ctx.ledger(conn, tool="hold_appointment_slot")
        won = conn.execute(
            "UPDATE appointment_slots SET status = 'held', held_by = ?, held_until = ?"
            " WHERE slot_id = ? AND (status = 'free' OR (status = 'held' AND"
            " (held_until < ? OR held_by = ?)))",
            (ctx.user_id, time.time() + HOLD_SECONDS, args.slot_id, time.time(), ctx.user_id),
        ).rowcount
        if not won:
            msg = f"slot {args.slot_id} was just taken"
            raise UserFixableError(msg, details={"reason": "slot_taken", "slot_id": args.slot_id})
        held: HoldData = {"slot_id": args.slot_id, "held_until": time.time() + HOLD_SECONDS}
        return ledger.record(held)


def release_appointment_slot(args: SlotRef, ctx: ToolContext) -> ReleaseData:
    """Give a held slot back, so a failed booking does not keep it."""
    with ctx.database().transaction() as conn:
        conn.execute(
            "UPDATE appointment_slots SET status = 'free', held_by = NULL, held_until = NULL"
            " WHERE slot_id = ? AND status = 'held' AND held_by = ?",
            (args.slot_id, ctx.user_id),
        )
    return {"slot_id": args.slot_id, "released": True}


def book_appointment(args: BookingRequest, ctx: ToolContext) -> BookingData:
    """Turn this user's hold into a booking, in one transaction."""
    appointment_id = (
        "AP-" + hashlib.sha256(f"{args.slot_id}|{ctx.user_id}".encode()).hexdigest()[:8].upper()
    )
    with ctx.database().transaction() as conn:
        ledger = ctx.ledger(conn, tool="book_appointment")
        booked = conn.execute(
            "UPDATE appointment_slots SET status = 'booked' WHERE slot_id = ? AND"
            " status = 'held' AND held_by = ?",
            (args.slot_id, ctx.user_id),
        ).rowcount
        if not booked:
            msg = f"slot {args.slot_id} is not held by this user"
            raise UserFixableError(msg, details={"reason": "hold_lost"})
        conn.execute(
            "INSERT INTO appointments (appointment_id, slot_id, user_id, patient_name)"
            " VALUES (?, ?, ?, ?)",
            (appointment_id, args.slot_id, ctx.user_id, args.patient_name),
        )
        row = conn.execute(
            "SELECT s.slot_date, s.slot_time, d.name AS doctor, p.name_zh AS department"
            " FROM appointment_slots s JOIN doctors d ON d.doctor_id = s.doctor_id"
            " JOIN departments p ON p.dept_id = d.dept_id WHERE s.slot_id = ?",
            (args.slot_id,),
        ).fetchone()
        booking: BookingData = {
            "appointment_id": appointment_id,
            "slot_id": args.slot_id,
            "slot_date": row["slot_date"],
            "slot_time": row["slot_time"],
            "doctor": row["doctor"],
            "department": row["department"],
        }
        return ledger.record(booking)


class FreeSlot(BaseModel):
    """One free slot as the agent offers it."""

    slot_id: str
    slot_time: str
    doctor: str


class FreeSlotsResult(BaseModel):
    """What ``list_free_slots`` answers; the confirmation question names the department."""

    department: str
    day: str
    slots: list[FreeSlot]
    next_days: list[str] = []
    """When ``slots`` is empty: the nearest other days with free slots."""


class BookingResult(BaseModel):
    """What ``book_appointment`` (and its status lookup) answers; the notice names all of it."""

    appointment_id: str
    slot_id: str
    slot_date: str
    slot_time: str
    doctor: str
    department: str


def booking_status(args: BookingRequest, ctx: ToolContext) -> BookingData | None:
    """Find the booking a failed ``book_appointment`` may have made, or ``None``."""
    row = ctx.database().query_one(
        "SELECT a.appointment_id, a.slot_id, s.slot_date, s.slot_time, d.name AS doctor,"
        " p.name_zh AS department FROM appointments a"
        " JOIN appointment_slots s ON s.slot_id = a.slot_id"
        " JOIN doctors d ON d.doctor_id = s.doctor_id"
        " JOIN departments p ON p.dept_id = d.dept_id"
        " WHERE a.slot_id = ? AND a.user_id = ?",
        (args.slot_id, ctx.user_id),
    )
    return cast("BookingData", dict(row)) if row is not None else None


def notify_patient(args: NotificationRequest, ctx: ToolContext) -> NoticeData:
    """Send the user a notification; only after a booking, never to reply in the chat."""
    db = ctx.database()
    if ctx.request_id:  # sent before: the backend must not be called again
        with db.transaction() as conn:
            ctx.ledger(conn, tool="notify_patient")
    try:
        NotificationBackends.send(ctx.user_id, args.content)
    except Exception as exc:
        msg = f"notification failed: {type(exc).__name__}"
        raise TransientToolError(msg, details={"reason": "notify_failed"}) from exc
    with db.transaction() as conn:
        ledger = ctx.ledger(conn, tool="notify_patient")
        conn.execute(
            "INSERT INTO notifications (user_id, channel, content) VALUES (?, ?, ?)",
            (ctx.user_id, args.channel, args.content),
        )
        notice: NoticeData = {"sent": True, "channel": args.channel}
        return ledger.record(notice)


def _card(
    name: str,
    handler: Any,
    params: type[BaseModel],
    *,
    idempotent: bool,
    description: str,
    **extra: Any,
) -> ToolCard:
    return ToolCard(
        name=name,
        description=description,
        when_to_use="Booking a medical appointment.",
        when_not_to_use="Anything else.",
        parameters=params,
        returns="See the description.",
        handler=handler,
        idempotent=idempotent,
        permission="appointment:book",
        domain="appointment",
        **extra,
    )


APPOINTMENT_TOOLS = (
    _card(
        "list_departments",
        list_departments,
        DepartmentQuery,
        idempotent=True,
        description="List departments and find the one the user named.",
    ),
    _card(
        "list_doctors",
        list_doctors,
        DepartmentQuery,
        idempotent=True,
        description="List a department's doctors.",
    ),
    _card(
        "list_free_slots",
        list_free_slots,
        SlotQuery,
        idempotent=True,
        description="List a department's free slots on a day.",
        result_model=FreeSlotsResult,
    ),
    _card(
        "hold_appointment_slot",
        hold_appointment_slot,
        SlotRef,
        idempotent=False,
        description="Hold a free slot for this user for five minutes.",
    ),
    _card(
        "release_appointment_slot",
        release_appointment_slot,
        SlotRef,
        idempotent=True,
        description="Release this user's hold on a slot.",
    ),
    _card(
        "book_appointment",
        book_appointment,
        BookingRequest,
        idempotent=False,
        risk="high",
        requires=("hold_appointment_slot",),
        description="Book the slot this user holds.",
        status_lookup=booking_status,
        result_model=BookingResult,
    ),
    _card(
        "notify_patient",
        notify_patient,
        NotificationRequest,
        idempotent=False,
        description="Send the user a notification about their booking. Never use it to "
        "reply in the conversation.",
    ),
)
