"""What a booking or a cancellation at the clinic will do, said before it happens.

The booking names the patient, the day and time, the department and the doctor ("为张三预约
2024-06-20 15:00 皮肤科赵医生的号。"): the slot the agent chose, read back by its id, which
itself is never shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from contract.scenario import Confirmer, Speaker, Wording
from scenarios.appointment.wording import department_label
from tools.registry.context import ToolContext

WORDING: Wording = {
    "confirm.book_appointment": {
        "zh": "为{patient}预约 {day} {time} {department}{doctor}的号。",
        "en": "Book {department} with {doctor} on {day} at {time} for {patient}.",
    },
    "confirm.cancel_appointment": {
        "zh": "取消 {day} {time} {department}{doctor}的预约（{appointment_id}），号源将释放。",
        "en": "Cancel the {department} appointment with {doctor} on {day} at {time}"
        " ({appointment_id}); the slot is freed.",
    },
    "slot.patient_name": {"zh": "就诊人", "en": "patient"},
}

_SLOT = (
    "SELECT s.slot_date, s.slot_time, d.name AS doctor, p.name_zh AS department"
    " FROM appointment_slots s JOIN doctors d ON d.doctor_id = s.doctor_id"
    " JOIN departments p ON p.dept_id = d.dept_id WHERE s.slot_id = ?"
)


def _slot(ctx: ToolContext, slot_id: str, speaker: Speaker) -> dict[str, str]:
    row = ctx.database().query_one(_SLOT, (slot_id,))
    if row is None:
        return {"day": "", "time": "", "department": "", "doctor": ""}
    return {
        "day": str(row["slot_date"]),
        "time": str(row["slot_time"]),
        "department": department_label(row["department"], speaker),
        "doctor": str(row["doctor"]),
    }


def book(arguments: Mapping[str, Any], ctx: ToolContext, speaker: Speaker) -> str:
    """Say the booking: patient, day, time, department, doctor."""
    slot = _slot(ctx, str(arguments.get("slot_id", "")), speaker)
    return speaker.say(
        "confirm.book_appointment", patient=arguments.get("patient_name", ""), **slot
    )


def cancel(arguments: Mapping[str, Any], ctx: ToolContext, speaker: Speaker) -> str:
    """Say the cancellation: which appointment, by its day, time, department and doctor."""
    appointment_id = str(arguments.get("appointment_id", ""))
    row = ctx.database().query_one(
        "SELECT slot_id FROM appointments WHERE appointment_id = ?", (appointment_id,)
    )
    slot = _slot(ctx, str(row["slot_id"]) if row else "", speaker)
    return speaker.say("confirm.cancel_appointment", appointment_id=appointment_id, **slot)


CONFIRM: dict[str, Confirmer] = {"book_appointment": book, "cancel_appointment": cancel}
