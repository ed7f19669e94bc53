"""Cancelling a booked appointment: the caller's own, confirmed first, the slot freed again.

"帮我取消预约" rarely comes with the appointment number: the caller's upcoming appointments are
looked up (``list_my_appointments``), the one the message names (its department or doctor)
or the only one there is fills the number, and the confirmation names it before anything is
cancelled. Otherwise the question lists them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field

from contract.scenario import HINT_CHARS, Offer, Speaker
from scenarios.appointment.tools import (
    AppointmentListData,
    AppointmentRow,
    CancelledData,
    ListedAppointmentData,
)
from scenarios.appointment.understanding import DEPARTMENTS
from scenarios.appointment.wording import appointment_offer
from scenarios.dates import find_date
from state import ToolResult
from tools.executor.envelope import CallRequest, result_data
from tools.executor.errors import ResourceNotFoundError
from tools.executor.failures import classify
from tools.registry.cards import ToolCard
from tools.registry.context import ToolContext

APPOINTMENT_ID_PATTERN = r"AP-[0-9A-F]{8}"
UPCOMING = 5
"""How many of the caller's upcoming appointments the list holds, the soonest first."""

_APPOINTMENT = (
    "SELECT a.appointment_id, a.slot_id, s.slot_date, s.slot_time, d.name AS doctor,"
    " p.name_zh AS department FROM appointments a"
    " JOIN appointment_slots s ON s.slot_id = a.slot_id"
    " JOIN doctors d ON d.doctor_id = s.doctor_id"
    " JOIN departments p ON p.dept_id = d.dept_id"
)


class AppointmentRef(BaseModel):
    """Arguments naming one appointment."""

    model_config = ConfigDict(extra="forbid")

    appointment_id: str = Field(
        pattern=rf"^{APPOINTMENT_ID_PATTERN}$",
        description="The appointment number (AP-XXXXXXXX) the user gave or the list found.",
    )


class AppointmentHint(BaseModel):
    """Arguments of the caller's appointment list: the message, to see which one it names."""

    model_config = ConfigDict(extra="forbid")

    hint: str = Field("", max_length=HINT_CHARS, description="The user's message.")


class ListedAppointment(BaseModel):
    """One of the caller's upcoming appointments."""

    appointment_id: str
    slot_date: str
    slot_time: str
    doctor: str
    department: str
    named: bool
    """Whether the hint names its department or doctor."""


class AppointmentList(BaseModel):
    """What ``list_my_appointments`` answers."""

    appointments: list[ListedAppointment]


class CancelResult(BaseModel):
    """What ``cancel_appointment`` answers."""

    appointment_id: str
    slot_date: str
    slot_time: str
    doctor: str
    department: str


def appointment_owner(args: Any, ctx: ToolContext) -> str | None:
    """Return who booked the appointment the arguments name, or ``None`` if nobody did."""
    row = ctx.database().query_one(
        "SELECT user_id FROM appointments WHERE appointment_id = ?", (args.appointment_id,)
    )
    return None if row is None else str(row["user_id"])


def _names(hint: str, row: AppointmentRow, today: date) -> bool:
    """Tell whether ``hint`` names the appointment: its doctor, department or day."""
    lowered = hint.lower()
    if row["doctor"] in hint or row["department"] in hint:
        return True
    said = find_date(hint, today)
    if said is not None and said.isoformat() == row["slot_date"]:
        return True
    return any(word in lowered and name == row["department"] for word, name in DEPARTMENTS.items())


def list_my_appointments(args: AppointmentHint, ctx: ToolContext) -> AppointmentListData:
    """List the caller's own upcoming appointments, each marked when the hint names it."""
    rows = cast(
        "list[AppointmentRow]",
        ctx.database().query(
            f"{_APPOINTMENT} WHERE a.user_id = ? AND s.slot_date >= ?"
            " ORDER BY s.slot_date, s.slot_time LIMIT ?",
            (ctx.user_id, ctx.today().isoformat(), UPCOMING),
        ),
    )
    listed: list[ListedAppointmentData] = [
        {
            "appointment_id": row["appointment_id"],
            "slot_date": row["slot_date"],
            "slot_time": row["slot_time"],
            "doctor": row["doctor"],
            "department": row["department"],
            "named": _names(args.hint, row, ctx.today()),
        }
        for row in rows
    ]
    return {"appointments": listed}


def cancel_appointment(args: AppointmentRef, ctx: ToolContext) -> CancelledData:
    """Cancel the caller's appointment and free its slot, in one transaction."""
    with ctx.database().transaction() as conn:
        ledger = ctx.ledger(conn, tool="cancel_appointment")
        row = conn.execute(
            f"{_APPOINTMENT} WHERE a.appointment_id = ? AND a.user_id = ?",
            (args.appointment_id, ctx.user_id),
        ).fetchone()
        if row is None:
            msg = f"appointment {args.appointment_id} not found"
            raise ResourceNotFoundError(msg, details={"appointment_id": args.appointment_id})
        found: CancelledData = {
            "appointment_id": row["appointment_id"],
            "slot_date": row["slot_date"],
            "slot_time": row["slot_time"],
            "doctor": row["doctor"],
            "department": row["department"],
        }
        conn.execute("DELETE FROM appointments WHERE appointment_id = ?", (args.appointment_id,))
        conn.execute(
            "UPDATE appointment_slots SET status = 'free', held_by = NULL, held_until = NULL"
            " WHERE slot_id = ?",
            (row["slot_id"],),
        )
        return ledger.record(found)


def suggest_appointment(
    missing: Sequence[str],
    text: str,
    run: Callable[[CallRequest], ToolResult],
    speaker: Speaker,
) -> Offer:
    """Fill the number with the appointment named, or the only one; else offer them."""
    if "appointment_id" not in missing:
        return Offer()
    listed = run({"name": "list_my_appointments", "parameters": {"hint": text}})
    if listed.get("status") != "success":  # ask for the number, and say why there is no list
        outcome = classify(listed) or "unavailable"
        why = speaker.failure(outcome, listed, task=speaker.say("step.list_my_appointments"))
        return Offer(offered={"appointment_id": why})
    rows = list(result_data(listed, AppointmentListData).get("appointments") or [])
    named = [row for row in rows if row.get("named")]
    chosen = named if len(named) == 1 else rows if len(rows) == 1 else []
    if chosen:  # the confirmation names it before anything is cancelled
        return Offer(filled={"appointment_id": chosen[0]["appointment_id"]})
    if not rows:  # nothing to cancel: say so, rather than ask which one
        return Offer(closing=speaker.say("appointments_none_to_cancel"))
    return Offer(offered={"appointment_id": appointment_offer(named or rows, speaker)})


CANCEL_TOOLS = (
    ToolCard(
        name="list_my_appointments",
        description="List the caller's own upcoming appointments: number, day, time, "
        "department and doctor.",
        when_to_use="Cancelling an appointment whose number the user did not give.",
        when_not_to_use="The user gave the appointment number; booking a new one.",
        parameters=AppointmentHint,
        returns="appointments: appointment_id, slot_date, slot_time, doctor, department, named.",
        handler=list_my_appointments,
        result_model=AppointmentList,
        idempotent=True,
        permission="appointment:cancel",
        domain="appointment",
        timeout_s=3.0,
    ),
    ToolCard(
        name="cancel_appointment",
        description="Cancel one of the caller's appointments and free its slot.",
        when_to_use="The user asks to cancel a booked appointment.",
        when_not_to_use="Booking, or anything else.",
        parameters=AppointmentRef,
        returns="The cancelled appointment: its number, day, time, department and doctor.",
        handler=cancel_appointment,
        result_model=CancelResult,
        idempotent=False,
        risk="high",
        permission="appointment:cancel",
        domain="appointment",
        owner_of=appointment_owner,
    ),
)


__all__ = ["APPOINTMENT_ID_PATTERN", "CANCEL_TOOLS", "suggest_appointment"]
