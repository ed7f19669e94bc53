"""How a medical appointment is recognized: the department and the day."""

from __future__ import annotations

import re
from datetime import date

from contract.scenario import SlotResult
from scenarios.appointment.seed import DOCTOR_LATIN, SEED_DEPARTMENTS, SEED_DOCTORS
from scenarios.dates import find_date, is_past
from state import SlotValues

DEPARTMENTS = {
    "内科": "内科",
    "儿科": "儿科",
    "皮肤科": "皮肤科",
    "internal medicine": "内科",
    "pediatrics": "儿科",
    "dermatology": "皮肤科",
    "dermatologist": "皮肤科",
    "pediatrician": "儿科",
    "paediatric": "儿科",
    "pediatric": "儿科",
    "skin doctor": "皮肤科",
    "儿童": "儿科",
    "小孩看病": "儿科",
}
"""Department names as users say them → the clinic's name."""
_SEE = r"(?:看|挂|约|预约|book|make|schedule|see|get)[^，,。.!！?？]{0,8}?"
_ANY_DEPARTMENT = re.compile(
    _SEE
    + r"[\u4e00-\u9fff]{1,3}科(?:室)?(?=$|[^\u4e00-\u9fff]|的|号|门诊|医生|大夫|吗|呢|吧|啊|么)"
)
"""Booking a department this clinic may not have ("约个牙科", "看眼科的号"): an appointment
still, and the clinic's own list answers which departments there are. "科" must end the
word, so "看一下科技新闻" is no department."""
ELSEWHERE = (
    "妇产科",
    "耳鼻喉科",
    "口腔科",
    "神经科",
    "精神科",
    "心理科",
    "康复科",
    "急诊科",
    "肿瘤科",
    "泌尿科",
    "消化科",
    "呼吸科",
    "中医科",
    "整形科",
)
"""Departments of more than one character before 科 that other hospitals have; any other
department the user names is read as one character and 科 ("约个周三下午的牙科" → 牙科:
the words before it are the day)."""
_DEPARTMENT_ASKED = re.compile(
    r"[\u4e00-\u9fff]{1,4}科(?:室)?(?=(?:还|今天|明天|后天)?有号|的号|能挂|可以挂|能约|可以约)"
)
"""A department asked about with no verb before it ("眼科有号没", "骨科明天有号吗")."""
ELSEWHERE_WORDS = {"牙医": "牙科", "看牙": "牙科", "dentist": "dentistry", "dental": "dentistry"}
"""Words for a department this clinic does not have, said without naming it."""




def _doctors() -> dict[str, tuple[str, str]]:
    """The clinic's doctors as people name them → (doctor, department).

    A gazetteer built from the clinic's own data: "王医生" or "Dr. Wang" books internal
    medicine.
    """
    departments = {dept_id: name for dept_id, name, _ in SEED_DEPARTMENTS}
    names: dict[str, tuple[str, str]] = {}
    for doctor_id, dept_id, name, _title in SEED_DOCTORS:
        entry = (name, departments[dept_id])
        names[name] = entry
        latin = DOCTOR_LATIN.get(doctor_id)
        if latin:
            for form in (f"dr. {latin}", f"dr {latin}", f"doctor {latin}"):
                names[form.lower()] = entry
    return names


DOCTORS = _doctors()


def find_doctor(lowered: str) -> tuple[str, str] | None:
    """The one doctor of the clinic the message names, as (doctor, department)."""
    named = {entry for said, entry in DOCTORS.items() if said in lowered}
    return next(iter(named)) if len(named) == 1 else None


PERIOD_WORDS = (
    ("morning", re.compile(r"上午|早上|早晨|清早|\bmorning\b|\bam\b", re.IGNORECASE)),
    ("afternoon", re.compile(r"下午|午后|\bafternoon\b|\bpm\b", re.IGNORECASE)),
    ("evening", re.compile(r"晚上|傍晚|\bevening\b|\btonight\b", re.IGNORECASE)),
)
"""How a part of the day is said; the first named wins ("下午或者晚上": the afternoon)."""
ANY_TIME = re.compile(
    r"都行|都可以|随便|无所谓|哪个都行|什么时候都|\bany ?time\b|\bwhenever\b|\bany is fine\b"
    r"|^\s*(?:可以|好|好的|行|ok|okay|sure|fine|yes)\s*[吧啊呀的。.!！~]*\s*$",
    re.IGNORECASE,
)
"""Any time of the day will do: said alone, a yes to "that day still has 10:00"."""


_APPOINTMENT_ID = re.compile(r"(?<![A-Za-z0-9])AP-[0-9A-Fa-f]{8}(?![0-9A-Za-z])")


def extract(text: str, intent: str, *, today: date) -> SlotResult:
    """Find the department, the day and the part of the day (optional) of an appointment.

    For a cancellation, the appointment number; the department named finds it otherwise
    (``cancel.suggest_appointment``).
    """
    if intent == "CANCEL_APPOINTMENT":
        number = _APPOINTMENT_ID.search(text)
        return SlotResult(slots={"appointment_id": number.group(0).upper()} if number else {})
    slots: SlotValues = {}
    lowered = text.lower()
    for name, canonical in DEPARTMENTS.items():
        if name in lowered:
            slots["department"] = canonical
            break
    doctor = find_doctor(lowered)
    if doctor is not None:
        slots["doctor"] = doctor[0]
        slots.setdefault("department", doctor[1])
    invalid: dict[str, str] = {}
    if "department" not in slots and (elsewhere := department_not_here(lowered)):
        invalid["department"] = f"{elsewhere}: not_offered"
    day = find_date(text, today)
    if day is not None and is_past(day, today):
        invalid["day"] = f"{day.isoformat()}: past"
    elif day is not None:
        slots["day"] = day.isoformat()
    said = [(found.start(), name) for name, word in PERIOD_WORDS if (found := word.search(text))]
    if said:
        slots["period"] = min(said)[1]
    elif ANY_TIME.search(text):
        slots["period"] = "any"
    return SlotResult(slots=slots, invalid=invalid)


def department_not_here(lowered: str) -> str | None:
    """Return the department a booking names that this clinic does not have, if any."""
    found = _ANY_DEPARTMENT.search(lowered) or _DEPARTMENT_ASKED.search(lowered)
    if found is None:
        return next((name for word, name in ELSEWHERE_WORDS.items() if word in lowered), None)
    named = found.group(0)[: found.group(0).rindex("科") + 1]
    for name in ELSEWHERE:
        if named.endswith(name):
            return name
    return named[-2:]
