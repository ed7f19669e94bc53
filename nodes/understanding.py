"""Understanding a user message: intent with a calibrated confidence, and slots.

``Understanding`` is the interface the graph depends on. ``RuleBasedUnderstanding`` is the
offline implementation; a model-backed one implements the same three methods.

Confidence is not a constant. Each intent collects weighted cues; the confidence is a
logistic function of the best score and of its margin over the runner-up, so a message with
one clear cue scores high, a message with cues for two intents scores near the 0.6
threshold, and a message with no cue scores low. ``tests/unit/test_understanding.py``
measures the calibration on a labelled set.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal, Protocol

from nodes.tasks import TASKS, UNKNOWN
from tools.clock import today
from tools.pii import looks_like_phone

Language = Literal["zh", "en"]
CONFIDENCE_THRESHOLD = 0.6


@dataclass(frozen=True)
class IntentResult:
    """The recognized intent of one message."""

    intent: str
    """An intent label from ``nodes.tasks.TASKS`` or ``UNKNOWN``."""
    confidence: float
    """Calibrated probability that ``intent`` is right."""
    language: Language | None
    """The message's language, or ``None`` when it has no words (a bare order id)."""
    evidence: tuple[str, ...] = ()
    """The cues that matched."""
    candidates: tuple[str, ...] = ()
    """Intents with any support, best first, for a clarifying question."""


@dataclass(frozen=True)
class SlotResult:
    """Slot values found in one message."""

    slots: dict[str, Any] = field(default_factory=dict)
    """Valid values by slot name."""
    invalid: dict[str, str] = field(default_factory=dict)
    """Slot name → why the value the user gave is not usable."""


class Understanding(Protocol):
    """What the intent, reflect-refine and slot-filling nodes need from a recognizer."""

    def classify(self, text: str) -> IntentResult:
        """Recognize the intent of ``text`` on its own."""
        ...

    def reconsider(
        self, text: str, *, pending_intent: str | None, missing_slots: list[str]
    ) -> IntentResult:
        """Look again at a low-confidence message, using what the conversation is waiting for."""
        ...

    def extract_slots(self, text: str, intent: str) -> SlotResult:
        """Find the slots ``intent`` needs in ``text``."""
        ...


# ---- cues --------------------------------------------------------------------------------

STRONG, WEAK = 1.0, 0.4

CUES: dict[str, tuple[tuple[str, float], ...]] = {
    "CHECK_ORDER_STATUS": (
        ("还没到", STRONG),
        ("没到", STRONG),
        ("到哪", STRONG),
        ("到了吗", STRONG),
        ("什么时候到", STRONG),
        ("啥时候到", STRONG),
        ("多久到", STRONG),
        ("状态", STRONG),
        ("进度", STRONG),
        ("查询订单", STRONG),
        ("查一下", STRONG),
        ("查查", STRONG),
        ("物流", STRONG),
        ("帮我查", STRONG),
        ("查", WEAK),
        ("送到", WEAK),
        ("where is my order", STRONG),
        ("where's my order", STRONG),
        ("where is order", STRONG),
        ("where is", WEAK),
        ("where's", WEAK),
        ("status", STRONG),
        ("track", STRONG),
        ("not arrived", STRONG),
        ("hasn't arrived", STRONG),
        ("has not arrived", STRONG),
        ("not here", STRONG),
        ("when will", STRONG),
        ("arrive", WEAK),
        ("check", WEAK),
        ("look up", STRONG),
    ),
    "REQUEST_REFUND": (
        ("退款", 1.2),
        ("退钱", 1.2),
        ("把钱退", 1.2),
        ("退费", 1.2),
        ("要求退", STRONG),
        ("不想要了", WEAK),
        ("赔偿", WEAK),
        ("refund", 1.2),
        ("money back", 1.2),
        ("reimburse", STRONG),
        ("charge back", WEAK),
        ("compensat", WEAK),
    ),
    "URGE_DELIVERY": (
        ("催单", 1.2),
        ("催一下", 1.2),
        ("催催", 1.2),
        ("帮我催", 1.2),
        ("加急", STRONG),
        ("快点送", STRONG),
        ("快一点", STRONG),
        ("尽快送", STRONG),
        ("太慢", WEAK),
        ("这么慢", WEAK),
        ("hurry", 1.2),
        ("speed up", 1.2),
        ("rush", STRONG),
        ("urge", STRONG),
        ("chase", STRONG),
        ("faster", STRONG),
        ("expedite", STRONG),
        ("so slow", WEAK),
        ("too slow", WEAK),
    ),
    "QUERY_WEATHER": (
        ("天气", 1.2),
        ("气温", STRONG),
        ("温度", STRONG),
        ("下雨", STRONG),
        ("下雪", STRONG),
        ("冷不冷", STRONG),
        ("热不热", STRONG),
        ("带伞", STRONG),
        ("weather", 1.2),
        ("temperature", STRONG),
        ("forecast", STRONG),
        ("raining", STRONG),
        ("rain", WEAK),
        ("umbrella", WEAK),
    ),
    "QUERY_SALES": (
        ("销售额", 1.2),
        ("销量", 1.2),
        ("营收", 1.2),
        ("卖得最", STRONG),
        ("最畅销", STRONG),
        ("销售", STRONG),
        ("sales", 1.2),
        ("revenue", 1.2),
        ("best-selling", STRONG),
        ("best selling", STRONG),
        ("top product", STRONG),
        ("sold", WEAK),
    ),
    "BOOK_FLIGHT": (
        ("机票", 1.2),
        ("订票", 1.2),
        ("航班", STRONG),
        ("坐飞机", STRONG),
        ("飞机", WEAK),
        ("乘客", WEAK),
        ("身份证", WEAK),
        ("book a flight", 1.2),
        ("flight", STRONG),
        ("plane ticket", 1.2),
        ("fly to", STRONG),
        ("fly from", STRONG),
        ("passenger", WEAK),
    ),
    "TRANSFER_MONEY": (
        ("转账", 1.2),
        ("转钱", 1.2),
        ("汇款", 1.2),
        ("打款", STRONG),
        ("转给", STRONG),
        ("付款给", STRONG),
        ("转", WEAK),
        ("transfer", 1.2),
        ("send money", 1.2),
        ("wire", STRONG),
        ("pay ", WEAK),
    ),
    "BOOK_APPOINTMENT": (
        ("挂号", 1.2),
        ("预约", STRONG),
        ("看病", STRONG),
        ("看医生", STRONG),
        ("门诊", STRONG),
        ("医生", WEAK),
        ("appointment", 1.2),
        ("see a doctor", 1.2),
        ("doctor", WEAK),
        ("clinic", WEAK),
    ),
}

TOPIC_CUES = ("订单号", "订单", "单号", "外卖", "order", "delivery")
"""Words about orders in general: they raise every intent equally, so they add certainty
that the message is about an order without favouring one intent over another."""

# Logistic calibration: logit = BIAS + W_SCORE * best + W_MARGIN * (best - runner_up).
BIAS, W_SCORE, W_MARGIN = -2.5, 1.5, 2.5
ORDER_ID_SUPPORT = {"CHECK_ORDER_STATUS": 0.3}
ORDER_ID_DEFAULT_SUPPORT = 0.2
CITY_SUPPORT = 0.5
ACCOUNT_SUPPORT = 0.5
"""An account number (ACC-NNNN) supports a transfer."""
"""A city name supports a weather question (as an order number supports an order one)."""
"""A bare order id hints at a status question, barely: on its own it stays below 0.6."""

_CJK = re.compile(r"[\u4e00-\u9fff]")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
_OD_ID = re.compile(r"(?<![A-Za-z0-9])OD[-_ ]?(\d{8})[-_ ]?(\d{3})(?!\d)", re.IGNORECASE)
_DIGITS = re.compile(r"(?<![\d.])\d[\d -]*\d(?![\d.])")
_ID_HINT = re.compile(r"订单号|单号|订单编号|order\s*(?:number|no\.?|id|#)", re.IGNORECASE)
_NOT_ID_AFTER_HINT = re.compile(
    r"(?:订单号|单号|订单编号|order\s*(?:number|no\.?|id|#))\s*(?:是|为|:|：|is)?\s*([A-Za-z0-9-]{3,})",
    re.IGNORECASE,
)


def detect_language(text: str) -> Language | None:
    """Return ``zh`` for Chinese, ``en`` for English words, ``None`` for neither."""
    if _CJK.search(text):
        return "zh"
    words = [w for w in _LATIN_WORD.findall(text) if w.upper() != "OD"]
    return "en" if words else None


def calibrate(best: float, runner_up: float) -> float:
    """Map cue scores to a probability that the best intent is right."""
    best = min(best, 2.0)
    margin = min(best - runner_up, 1.5)
    return 1.0 / (1.0 + math.exp(-(BIAS + W_SCORE * best + W_MARGIN * margin)))


def find_order_ids(text: str) -> tuple[list[str], list[str]]:
    """Return (valid order ids in order of appearance, rejected candidates with reasons).

    Valid: ``OD-YYYYMMDD-NNN`` with a real date, or a run of 9–12 digits that is not a
    mobile number. Rejected candidates are things the user plausibly meant as an order id.
    """
    found: list[str] = []
    rejected: list[str] = []
    for match in _OD_ID.finditer(text):
        stamp, seq = match.group(1), match.group(2)
        if _valid_date(stamp):
            found.append(f"OD-{stamp}-{seq}")
        else:
            rejected.append(f"{match.group(0)}: bad date {stamp}")
    scrubbed = _OD_ID.sub(" ", text)
    for match in _DIGITS.finditer(scrubbed):
        raw = match.group(0)
        digits = re.sub(r"[ -]", "", raw)
        if raw != digits and not 9 <= len(digits) <= 12:
            continue
        if looks_like_phone(digits):
            rejected.append(f"{digits}: phone number")
        elif 9 <= len(digits) <= 12:
            found.append(digits)
        elif len(digits) >= 4:
            rejected.append(f"{digits}: {len(digits)} digits")
    for match in _NOT_ID_AFTER_HINT.finditer(text):
        token = match.group(1)
        if not any(token.upper().replace("_", "-") in value for value in found) and not any(
            token in reason for reason in rejected
        ):
            rejected.append(f"{token}: not an order number")
    return list(dict.fromkeys(found)), rejected


_CITY_ZH = re.compile(r"([\u4e00-\u9fff]{2,6}?)(?:市)?(?:今天|明天|现在|的)?(?:天气|气温|温度)")
_ASKING = re.compile(r"^(?:请问|先|帮我|麻烦|给我)*(?:查一?下|查查|看看|查|问下)?")
_CITY_EN = re.compile(
    r"(?:weather|temperature|forecast)\s+(?:in|for|at)\s+([A-Za-z][A-Za-z' .-]{1,30})",
    re.IGNORECASE,
)
_EN_FILLERS = {"please", "today", "tomorrow", "now", "tonight", "right", "this", "week", "like"}
_NOT_CITY = ("今天", "明天", "现在", "这里", "那边", "外面", "最近")


def find_city(text: str) -> str | None:
    """Return the city named in ``text``: a known name, or the place before 天气 / after "in"."""
    from tools.weather import CITY_NAMES

    for chinese in CITY_NAMES:
        if chinese in text:
            return chinese
    for english in CITY_NAMES.values():
        if re.search(rf"\b{re.escape(english)}\b", text, re.IGNORECASE):
            return english
    match = _CITY_EN.search(text)
    if match:
        words = match.group(1).strip(" .?!").split()
        while words and words[-1].lower() in _EN_FILLERS:
            words.pop()
        return " ".join(words).title() or None
    match = _CITY_ZH.search(_ASKING.sub("", text.strip()))
    if match and match.group(1) not in _NOT_CITY:
        return match.group(1)
    return None


_ZH_DIGITS = {"一": 1, "二": 2, "两": 2, "三": 3}
_EN_MONTHS = {
    m.lower(): i
    for i, m in enumerate(
        [
            "January",
            "February",
            "March",
            "April",
            "May",
            "June",
            "July",
            "August",
            "September",
            "October",
            "November",
            "December",
        ],
        start=1,
    )
}


def _city_pattern() -> str:
    from tools.weather import CITY_NAMES

    names = sorted([*CITY_NAMES, *CITY_NAMES.values()], key=len, reverse=True)
    return "|".join(re.escape(name) for name in names)


def extract_flight_slots(text: str, now: date) -> SlotResult:
    """Find route, date, passenger name and ID number; corrections simply restate a value."""
    from tools.vault import id_card_problem, mask_id_card

    slots: dict[str, Any] = {}
    invalid: dict[str, str] = {}
    cities = _city_pattern()
    route = re.search(
        rf"(?:从|from\s+)?({cities})\s*(?:出发)?\s*(?:到|去|飞往|飞|→|->|-|to)\s*({cities})",
        text,
        re.IGNORECASE,
    )
    if route:
        slots["origin"], slots["destination"] = route.group(1), route.group(2)
    else:
        to = re.search(rf"(?:去|到|飞往|飞|\bto\s+)({cities})", text, re.IGNORECASE)
        frm = re.search(rf"(?:从|\bfrom\s+)({cities})", text, re.IGNORECASE)
        if to:
            slots["destination"] = to.group(1)
        if frm:
            slots["origin"] = frm.group(1)
    day = _find_date(text, now)
    if day is not None:
        slots["departure_date"] = day.isoformat()
    name = re.search(
        r"(?:乘客|旅客|乘机人|名字是|名字叫|姓名[是:：]?|我叫)\s*(?:是|为|叫)?\s*"
        r"([\u4e00-\u9fff]{2,4}?)(?=[，,。.\s]|身份|的|$|\d)",
        text,
    ) or re.search(
        r"passenger(?:'s name)?(?: is| name is|:)?\s+([A-Z][a-z]+(?: [A-Z][a-z]+)*)", text
    )
    if name:
        slots["passenger_name"] = name.group(1)
    number = re.search(r"(?<![0-9])(\d{17}[\dXx])(?![0-9])", text)
    if number:
        problem = id_card_problem(number.group(1))
        if problem:
            invalid["passenger_id"] = f"{mask_id_card(number.group(1))}: {problem}"
        else:
            slots["passenger_id"] = number.group(1).upper()
    return SlotResult(slots=slots, invalid=invalid)


_NOTIFY = re.compile(
    r"通知我|短信告诉我|发短信|发个通知|提醒我|notify me|text me|send me a (?:text|notification)",
    re.IGNORECASE,
)
_ACCOUNT = re.compile(r"(?<![A-Za-z0-9])ACC-\d{4}(?!\d)", re.IGNORECASE)
_AMOUNT = re.compile(
    r"(?:¥|￥|rmb\s*|cny\s*)?(\d{1,9}(?:\.\d{1,2})?)\s*(?:元|块|yuan|rmb|cny)"
    r"|(?:¥|￥)\s*(\d{1,9}(?:\.\d{1,2})?)",
    re.IGNORECASE,
)
_PIN = re.compile(
    r"(?:密码|支付密码|PIN|pin|passcode)\s*(?:是|为|:|：|is)?\s*(\d{6})(?!\d)", re.IGNORECASE
)


def extract_transfer_slots(text: str) -> SlotResult:
    """Find the payee account, the amount (to cents) and the payment PIN."""
    slots: dict[str, Any] = {}
    invalid: dict[str, str] = {}
    accounts = list(dict.fromkeys(m.group(0).upper() for m in _ACCOUNT.finditer(text)))
    if len(accounts) == 1:
        slots["to_account"] = accounts[0]
    elif len(accounts) > 1:
        invalid["to_account"] = "multiple: " + ", ".join(accounts)
    amount = _AMOUNT.search(text)
    if amount:
        value = amount.group(1) or amount.group(2)
        slots["amount_cents"] = round(float(value) * 100)
    pin = _PIN.search(text)
    if pin:
        slots["pin"] = pin.group(1)
    return SlotResult(slots=slots, invalid=invalid)


DEPARTMENTS = {
    "内科": "内科",
    "儿科": "儿科",
    "皮肤科": "皮肤科",
    "internal medicine": "内科",
    "pediatrics": "儿科",
    "dermatology": "皮肤科",
}


def extract_appointment_slots(text: str, now: date) -> SlotResult:
    """Find the department and the day of an appointment."""
    slots: dict[str, Any] = {}
    lowered = text.lower()
    for name, canonical in DEPARTMENTS.items():
        if name in lowered:
            slots["department"] = canonical
            break
    day = _find_date(text, now)
    if day is not None:
        slots["day"] = day.isoformat()
    return SlotResult(slots=slots)


def _find_date(text: str, now: date) -> date | None:
    full = re.search(r"(20\d{2})\s*[-/年.]\s*(\d{1,2})\s*[-/月.]\s*(\d{1,2})", text)
    try:
        if full:
            return date(int(full.group(1)), int(full.group(2)), int(full.group(3)))
        short = re.search(r"(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]", text)
        if short:
            return date(now.year, int(short.group(1)), int(short.group(2)))
        english = re.search(r"\b(" + "|".join(_EN_MONTHS) + r")\s+(\d{1,2})", text, re.IGNORECASE)
        if english:
            return date(now.year, _EN_MONTHS[english.group(1).lower()], int(english.group(2)))
    except ValueError:
        return None
    for word, offset in (
        ("大后天", 3),
        ("后天", 2),
        ("明天", 1),
        ("今天", 0),
        ("tomorrow", 1),
        ("today", 0),
    ):
        if word in text.lower():
            return date.fromordinal(now.toordinal() + offset)
    return None


def _valid_date(stamp: str) -> bool:
    try:
        date(int(stamp[:4]), int(stamp[4:6]), int(stamp[6:]))
    except ValueError:
        return False
    return True


class RuleBasedUnderstanding:
    """Offline, deterministic understanding of Chinese and English order requests."""

    def classify(self, text: str) -> IntentResult:
        """Score every intent's cues and calibrate the best one's confidence."""
        return self._score(text, fuzzy=False)

    def reconsider(
        self, text: str, *, pending_intent: str | None, missing_slots: list[str]
    ) -> IntentResult:
        """Re-examine with context, then with fuzzy cue matching for typos.

        A message that supplies exactly what a pending task asked for continues that task.
        """
        language = detect_language(text)
        if pending_intent in TASKS and missing_slots:
            slots = self.extract_slots(text, pending_intent)
            if any(name in slots.slots or name in slots.invalid for name in missing_slots):
                return IntentResult(
                    intent=pending_intent,
                    confidence=0.9,
                    language=language,
                    evidence=("answers the pending question",),
                    candidates=(pending_intent,),
                )
        return self._score(text, fuzzy=True)

    def extract_slots(self, text: str, intent: str) -> SlotResult:
        """Find the slots ``intent`` needs; a malformed or ambiguous value is reported."""
        if intent not in TASKS:
            return SlotResult()
        wanted = TASKS[intent].required_slots
        if "city" in wanted:
            city = find_city(text)
            return SlotResult(slots={"city": city}) if city else SlotResult()
        if "passenger_id" in wanted:
            return extract_flight_slots(text, today())
        if "pin" in wanted:
            return extract_transfer_slots(text)
        if "department" in wanted:
            return extract_appointment_slots(text, today())
        if "question" in wanted:
            return SlotResult(slots={"question": text.strip()}) if text.strip() else SlotResult()
        if "order_id" not in wanted:
            return SlotResult()
        found, rejected = find_order_ids(text)
        extra = {"notify": "sms"} if intent == "CHECK_ORDER_STATUS" and _NOTIFY.search(text) else {}
        if len(found) == 1:
            return SlotResult(slots={"order_id": found[0], **extra})
        if len(found) > 1:
            return SlotResult(invalid={"order_id": "multiple: " + ", ".join(found)})
        if rejected:
            return SlotResult(slots=extra, invalid={"order_id": rejected[0]})
        return SlotResult(slots=extra)

    def _score(self, text: str, *, fuzzy: bool) -> IntentResult:
        lowered = text.lower()
        words = re.findall(r"[a-z']+", lowered)
        scores: dict[str, float] = {}
        evidence: list[str] = []
        for intent, cues in CUES.items():
            score = 0.0
            remaining = lowered
            # Longest cues first, each match consumed, so "还没到" does not also count "没到".
            for cue, weight in sorted(cues, key=lambda item: len(item[0]), reverse=True):
                if cue in remaining:
                    score += weight
                    evidence.append(cue)
                    remaining = remaining.replace(cue, " ")
                elif fuzzy and " " not in cue and cue.isascii() and len(cue) >= 5:
                    if difflib.get_close_matches(cue, words, n=1, cutoff=0.8):
                        score += weight * 0.8
                        evidence.append(f"~{cue}")
            scores[intent] = score
        specific = {intent for intent, score in scores.items() if score > 0}
        topic, remaining = 0.0, lowered
        for cue in sorted(TOPIC_CUES, key=len, reverse=True):
            if cue in remaining:
                topic += WEAK
                evidence.append(cue)
                remaining = remaining.replace(cue, " ")
        found, _ = find_order_ids(text)
        if found:
            evidence.append("order id")
        for intent in scores:
            if not TASKS[intent].order_related:
                continue
            scores[intent] += topic
            if found:
                scores[intent] += ORDER_ID_SUPPORT.get(intent, ORDER_ID_DEFAULT_SUPPORT)
        if _ACCOUNT.search(text):
            evidence.append("account")
            scores["TRANSFER_MONEY"] += ACCOUNT_SUPPORT
        if any(name in lowered for name in DEPARTMENTS):
            evidence.append("department")
            scores["BOOK_APPOINTMENT"] += CITY_SUPPORT
        if find_city(text):
            evidence.append("city")
            scores["QUERY_WEATHER"] += CITY_SUPPORT
        ranked = sorted(scores.items(), key=lambda item: item[1], reverse=True)
        (best_intent, best), (_, runner_up) = ranked[0], ranked[1]
        candidates = tuple(intent for intent, _ in ranked if intent in specific)
        if best <= 0:
            return IntentResult(
                intent=UNKNOWN,
                confidence=round(calibrate(0.0, 0.0), 3),
                language=detect_language(text),
                evidence=(),
                candidates=(),
            )
        return IntentResult(
            intent=best_intent,
            confidence=round(calibrate(best, runner_up), 3),
            language=detect_language(text),
            evidence=tuple(evidence),
            candidates=candidates,
        )
