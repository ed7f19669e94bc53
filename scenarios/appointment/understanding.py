"""How a medical appointment is recognized: the department and the day."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date

from contract.scenario import Cues, SlotResult
from contract.text_match import normalize
from scenarios.dates import find_date, is_past
from state import SlotValues

CUES: dict[str, Cues] = {
    "CANCEL_APPOINTMENT": (
        ("取消预约", 2.0),
        ("取消挂号", 2.0),
        ("取消就诊", 2.0),
        ("退号", 2.0),
        ("不去看了", 1.2),
        ("预约取消", 2.0),
        ("cancel my appointment", 2.0),
        ("cancel the appointment", 2.0),
        ("cancel an appointment", 2.0),
        ("cancel appointment", 2.0),
    ),
    "BOOK_APPOINTMENT": (
        ("挂号", 1.2),
        ("预约", 1.0),
        ("看病", 1.0),
        ("看医生", 1.0),
        ("门诊", 1.0),
        ("就诊", 1.0),
        ("就医", 1.0),
        ("专家号", 1.2),
        ("还有号", 1.0),
        ("有号吗", 1.0),
        ("有号没", 1.0),
        ("有没有号", 1.0),
        ("牙医", 1.0),
        ("看牙", 1.0),
        ("挂一个", 0.6),
        ("挂个", 0.6),
        ("医院", 0.6),
        ("医生", 0.4),
        ("大夫", 0.4),
        ("约个", 0.4),
        ("约一下", 0.4),
        ("appointment", 1.2),
        ("see a doctor", 1.2),
        ("skin doctor", 1.0),
        ("doctor", 0.4),
        ("dentist", 0.6),
        ("schedule", 0.4),
        ("clinic", 0.4),
    ),
}
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
DEPARTMENT_SUPPORT = 0.5
"""A department name supports an appointment."""
SEE_DEPARTMENT_SUPPORT = 0.5
"""Going to see a department, or booking it ("看个内科", "约明天的儿科", "book a pediatrics
visit"), is an appointment."""
SPLIT_VERB_SUPPORT = 1.2
"""挂…号 with words in between ("挂一个皮肤科的号", "挂个明天上午的内科号") is 挂号."""
_SPLIT_VERB = re.compile(r"挂[^，,。.!！?？]{0,12}?号")
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


_CANCEL = re.compile(
    r"(?:取消|退掉?|不要)(?:了|掉)?(?:\s*ap-?\w+\s*)?.{0,8}?(?:预约|挂号|的号|这个号)"
    r"|(?:预约|挂号|号|科)(?:的)?.{0,2}?取消"
    r"|\b(?:cancel|call off|drop)\b[^,.!?]{0,30}?"
    r"\b(?:ap+oi?nt?ments?|appts?|bookings?|reservations?|visit)\b"
    r"|\b(?:ap+oi?nt?ment|appt|booking|reservation)\b[^,.!?]{0,12}?\bcancel"
)
"""取消 with the appointment it names, words between, either way round ("取消内科的预约",
"退掉明天的号", "把明天的皮肤科取消掉", "cancel my doctor's appointment tomorrow", "cancel my
booking", misspelt "apointment" or cut to "appt": the clinic's are the only bookings this agent
cancels; a flight's goes to a person, ``scenarios.flights``)."""
CANCEL_SUPPORT = 2.0
"""As strong as 取消预约 itself: a department named in it is the one to cancel, not to book."""


def support(text: str) -> Iterator[tuple[str, float, str]]:
    """A department in the message supports an appointment; 取消 … 预约 its cancellation."""
    lowered = normalize(text)
    if _CANCEL.search(lowered):
        yield "CANCEL_APPOINTMENT", CANCEL_SUPPORT, "取消…预约"
        return
    named = [name for name in DEPARTMENTS if name in lowered]
    if named:
        yield "BOOK_APPOINTMENT", DEPARTMENT_SUPPORT, "department"
        if any(re.search(_SEE + re.escape(name), lowered) for name in named):
            yield "BOOK_APPOINTMENT", SEE_DEPARTMENT_SUPPORT, "see a department"
    elif _ANY_DEPARTMENT.search(lowered):  # as much as seeing a department it knows
        yield "BOOK_APPOINTMENT", DEPARTMENT_SUPPORT, "department"
        yield "BOOK_APPOINTMENT", SEE_DEPARTMENT_SUPPORT, "see a department"
    if _SPLIT_VERB.search(lowered) and "挂号" not in lowered:
        yield "BOOK_APPOINTMENT", SPLIT_VERB_SUPPORT, "挂…号"


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
