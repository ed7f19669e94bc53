"""The evidence a model's reading must have: slot values found in the text, and confidence.

A model's slot value counts only when the message supports it (``slot_supported``: the value
occurs after normalization, the rules found it, it is a date the message can mean, or a number
written in it); its confidence comes from the label's log-probability and the rules' reading
(``evidence_confidence``), not from the model's say-so. Used by ``model_recognizer``.
"""

from __future__ import annotations

import math
import re
import unicodedata
from datetime import date, timedelta
from typing import Any

from contract.scenario import UNKNOWN
from language import LANGUAGES, lexicon
from understanding.recognizer import IntentResult

P_NO_LOGPROBS = 0.7
"""The label's probability when the endpoint returns no logprobs."""
THRESHOLD = 0.6
"""The rules are sure of their own label from this confidence on."""


def normalize(text: str) -> str:
    """NFKC, case-folded, without spaces, dashes, underscores and common punctuation."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return re.sub(r"[\s\-_.,:;'\"，。：；、()（）#]", "", folded)


def _lexicons() -> tuple[dict[str, int], list[tuple[str, int]], dict[str, str]]:
    months: dict[str, int] = {}
    relative: dict[str, int] = {}
    marks: dict[str, str] = {"year": "", "month": "", "day": ""}
    for code in LANGUAGES:
        words = lexicon(code)
        months.update({name.lower(): n for name, n in words.months.items()})
        relative.update(words.relative_days)
        for part, chars in words.date_marks.items():
            marks[part] = marks.get(part, "") + chars
    longest_first = sorted(relative.items(), key=lambda item: len(item[0]), reverse=True)
    return months, longest_first, marks


_MONTHS, _RELATIVE, _MARKS = _lexicons()
_YEAR_MARK = re.escape(_MARKS["year"])
_MONTH_MARK = re.escape(_MARKS["month"])
_DAY_MARK = re.escape(_MARKS["day"])


def resolvable_dates(text: str, today: date) -> set[date]:
    """Every date the text can reasonably mean: absolute dates, month-day, relative words."""
    found: set[date] = set()
    lowered = text.lower()

    def add(year: int, month: int, day: int) -> None:
        try:
            found.add(date(year, month, day))
        except ValueError:
            pass

    full = rf"(20\d{{2}})\s*[-/.{_YEAR_MARK}]\s*(\d{{1,2}})\s*[-/.{_MONTH_MARK}]\s*(\d{{1,2}})"
    for y, m, d in re.findall(full, text):
        add(int(y), int(m), int(d))
    if _MONTH_MARK:
        days = rf"[{_DAY_MARK}]?" if _DAY_MARK else ""
        for m, d in re.findall(rf"(\d{{1,2}})\s*[{_MONTH_MARK}]\s*(\d{{1,2}})\s*{days}", text):
            add(today.year, int(m), int(d))
    for m, d in re.findall(r"(?<![\d/])(\d{1,2})/(\d{1,2})(?![\d/])", text):
        add(today.year, int(m), int(d))
    months = "|".join(sorted(_MONTHS, key=len, reverse=True))
    for name, d in re.findall(rf"\b({months})\.?\s+(\d{{1,2}})", lowered):
        add(today.year, _MONTHS[name], int(d))
    for d, name in re.findall(rf"\b(\d{{1,2}})[a-z]{{0,2}}\s+(?:\w+\s+)?({months})\b", lowered):
        add(today.year, _MONTHS[name], int(d))
    remaining = lowered
    for word, offset in _RELATIVE:
        if word in remaining:
            found.add(today + timedelta(days=offset))
            remaining = remaining.replace(word, " ")
    return found


def _numbers(text: str) -> set[float]:
    return {float(n) for n in re.findall(r"\d+(?:\.\d+)?", unicodedata.normalize("NFKC", text))}


def slot_supported(
    name: str, value: Any, text: str, *, today: date, rules_value: Any = None
) -> bool:
    """Whether ``text`` is evidence for ``value``; a value without evidence is invented."""
    if value is None or value == "":
        return False
    if rules_value is not None and str(rules_value) == str(value):
        return True
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float) or re.fullmatch(r"\d+(?:\.\d+)?", str(value)):
        number = float(value)
        numbers = _numbers(text)
        return number in numbers or (name.endswith("_cents") and number / 100 in numbers)
    value_text = str(value)
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value_text):
        try:
            return date.fromisoformat(value_text) in resolvable_dates(text, today)
        except ValueError:
            return False
    needle = normalize(value_text)
    return bool(needle) and needle in normalize(text)


def label_probability(logprobs: Any, label: str) -> float | None:
    """exp(Σ logprob) of the tokens that spell ``label``, from an OpenAI ``logprobs`` payload.

    The tokens are matched by text: the first run of consecutive tokens whose concatenation
    (leading spaces and quotes stripped) equals the label. ``None`` when the payload has no
    such run (no logprobs returned, or a server that reports a different token stream).
    """
    tokens = logprobs.get("content") if isinstance(logprobs, dict) else logprobs
    if not tokens:
        return None
    for start, first in enumerate(tokens):
        head = str(first.get("token", "")).lstrip(' "')
        if not head or not label.startswith(head):
            continue
        text, total = head, float(first.get("logprob", 0.0))
        for token in tokens[start + 1 :]:
            if text == label:
                break
            piece = str(token.get("token", ""))
            if not label.startswith(text + piece):
                break
            text += piece
            total += float(token.get("logprob", 0.0))
        if text == label:
            return math.exp(total)
    return None


def evidence_confidence(
    p_label: float | None,
    model_intent: str,
    rules: IntentResult,
    *,
    slot_evidence: bool = False,
    refused_slots: int = 0,
) -> float:
    """Combine the label's probability, the rules' view and slot evidence (module docstring)."""
    p = P_NO_LOGPROBS if p_label is None else min(max(p_label, 0.0), 1.0)
    r = rules.confidence
    if rules.intent == model_intent:
        c = 1 - (1 - p) * (1 - r)
    elif rules.intent != UNKNOWN and r >= THRESHOLD:
        c = p * (1 - r / 2)
    else:
        c = p * 0.85
    if slot_evidence and model_intent != UNKNOWN:
        c += (1 - c) * 0.25
    c *= 0.7**refused_slots
    return round(min(max(c, 0.02), 0.99), 3)
