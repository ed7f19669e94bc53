"""Typed values for a pack's parameters, read out of a message by their type alone.

No word of a domain is written here: what a parameter accepts is read from its card.

- a ``Literal`` (or quoted choices in its description) is matched by its words, and by the
  Chinese aliases the description gives ("'annual' (年卡)");
- a ``date`` is read in the usual forms (2024-06-20, 6月20日, 20号, June 20, 6/20, today,
  明天, Monday, 周一), a month and day without a year being the next to come;
- an ``int`` or ``float`` is the one number of the message that is no part of another value
  (a code, a date, a phone), Chinese numerals included ("十四天"), when the tool has one
  such parameter;
- a code-shaped string learns its shape from the description's example values ("such as
  'C-0620-YOGA'" → a letter, four digits, letters), a phone or an email from its name.

Every value read is validated against the parameter's own type and constraints
(``Annotated[int, Field(ge=7, le=30)]``): one that fails is ``invalid``, with a reason code
whose sentence the pack's wording holds (``reason.<code>``), so the user is asked again, in
their language, before anything is put to them.
"""

from __future__ import annotations

import re
import types
import typing
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any, Literal

import annotated_types as at
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

from contract.scenario import SlotResult, Text
from packs.docs import choice_aliases, example_values, has_cjk, quoted_choices

Kind = Literal["choice", "date", "number", "shape", "free"]
RECENT_DAYS = 30
"""A month and day without a year that passed less than this long ago is this year's."""

_MONTHS = {
    m: i + 1
    for i, names in enumerate(
        [
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ]
    )
    for m in names
}
_WEEKDAYS = {
    **{d: i for i, d in enumerate(("monday", "tuesday", "wednesday", "thursday", "friday"))},
    "saturday": 5,
    "sunday": 6,
    **{f"周{c}": i for i, c in enumerate("一二三四五六")},
    **{f"星期{c}": i for i, c in enumerate("一二三四五六")},
    "周日": 6,
    "周天": 6,
    "星期日": 6,
    "星期天": 6,
}
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DATE_FORMS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?<!\d)(\d{4})\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})\s*[日号]?"), "ymd"),
    (re.compile(r"(?<!\d)(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]?"), "md"),
    (re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b", re.I), "Md"),
    (re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH})\b", re.I), "dM"),
    (re.compile(r"(?<![\d/])(\d{1,2})/(\d{1,2})(?![\d/])"), "md"),
    (re.compile(r"(?<![\d月])(\d{1,2})\s*[日号](?!\d)"), "d"),
    (re.compile(r"day after tomorrow|后天", re.I), "+2"),
    (re.compile(r"\btomorrow\b|明天|明日", re.I), "+1"),
    (re.compile(r"\btoday\b|今天|今日", re.I), "+0"),
    (
        re.compile(
            "|".join(sorted((re.escape(w) for w in _WEEKDAYS), key=len, reverse=True)), re.I
        ),
        "w",
    ),
)
_NUMBER = re.compile(r"(?<![A-Za-z0-9.\-])(\d+(?:\.\d+)?)(?![0-9]|\.\d)")
_CN_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7}
_CN_DIGITS |= {"八": 8, "九": 9}
_CN_NUMBER = re.compile(r"([零一二两三四五六七八九十百]+)(?=\s*[天日个位次人张节本件份名])")
_PHONE = re.compile(r"(?<![\d+])(?:\+?\d{1,3}[-\s]?)?1[3-9]\d{9}(?!\d)|(?<![\d+])\+\d{7,15}(?!\d)")
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
_CODE_EDGE_BEFORE = r"(?<![A-Za-z0-9_#\-])"
_CODE_EDGE_AFTER = r"(?![A-Za-z0-9_]|-[A-Za-z0-9])"


def folded(text: str) -> str:
    """Full-width forms as ASCII (Ｃ－０６２０ → C-0620), case kept."""
    return unicodedata.normalize("NFKC", text)


# ---- shapes learned from example values ---------------------------------------------------
def shape_of(examples: Sequence[str]) -> re.Pattern[str] | None:
    """A pattern for codes shaped like ``examples``; ``None`` for plain words or numbers.

    The leading letters and marks are kept as written (a type prefix: ``M-``, ``#W``), digit
    runs keep their length, later letter runs may be 1–16 letters. A code needs a digit; a
    bare number needs at least six digits to be a code (a phone, an account), not an amount.
    """
    parts: list[str] = []
    for example in examples:
        runs = re.findall(r"[A-Za-z]+|\d+|[^A-Za-z\d]", folded(example.strip()))
        if not runs or not any(r.isdigit() for r in runs):
            continue
        if all(r.isdigit() for r in runs) and sum(len(r) for r in runs) < 6:
            continue
        out: list[str] = []
        leading = True
        for run in runs:
            if run.isdigit():
                out.append(rf"\d{{{len(run)}}}")
                leading = False
            elif run.isalpha():
                out.append(re.escape(run) if leading else "[A-Za-z]{1,16}")
            elif run.isspace():
                out.append(r"\s?")
            else:
                out.append(re.escape(run))
        parts.append("".join(out))
    if not parts:
        return None
    body = "|".join(dict.fromkeys(parts))
    return re.compile(rf"{_CODE_EDGE_BEFORE}(?:{body}){_CODE_EDGE_AFTER}", re.I)


def _upper_like(value: str, examples: Sequence[str]) -> str:
    """A code written as the examples write it (upper case when they are)."""
    if examples and all(e == e.upper() for e in examples):
        return value.upper()
    return value


# ---- one parameter ------------------------------------------------------------------------
@dataclass(frozen=True)
class Reader:
    """How one parameter's value is found in a message and checked."""

    name: str
    kind: Kind
    adapter: TypeAdapter[Any]
    """The parameter's type with its constraints."""
    pattern: re.Pattern[str] | None = None
    examples: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    aliases: dict[str, str] = field(default_factory=dict)
    integer: bool = False
    limits: Text | None = None
    """What the constraints allow, said in each language (``None``: no constraint)."""

    @property
    def reason(self) -> str:
        """The reason code of a value that breaks the constraints (``reason.<code>``)."""
        return f"limits.{self.name}"

    def check(self, value: Any) -> tuple[Any, str | None]:
        """``(value as typed, None)``, or ``(value as said, reason code)`` when it fails."""
        try:
            typed = self.adapter.validate_python(value)
        except (ValidationError, TypeError, ValueError):
            return value, self.reason if self.limits else "invalid"
        if isinstance(typed, date):
            return typed.isoformat(), None
        return typed, None


def reader_of(name: str, info: FieldInfo) -> Reader:
    """The reader of one parameter, from its type, constraints and description."""
    annotation = info.annotation
    description = info.description or ""
    shape: Any = annotation  # a type form: the parameter's annotation with its constraints
    if info.metadata:
        shape = typing.Annotated[annotation, *info.metadata]
    adapter: TypeAdapter[Any] = TypeAdapter(shape)
    limits = _limits(info.metadata)
    base = _unwrapped(annotation)
    literal = [str(v) for v in typing.get_args(base)] if typing.get_origin(base) is Literal else []
    choices = tuple(literal or quoted_choices(description))
    if choices and (literal or base is str):
        aliases = choice_aliases(description)
        allowed: Text = {
            "zh": "可选：" + "、".join(aliases.get(c, c) for c in choices),
            "en": "it must be " + " or ".join(f"“{c}”" for c in choices),
        }
        return Reader(name, "choice", adapter, choices=choices, aliases=aliases, limits=allowed)
    if base is date:
        return Reader(name, "date", adapter)
    if base in (int, float):
        return Reader(name, "number", adapter, integer=base is int, limits=limits)
    if base is str:
        examples = tuple(example_values(description))
        pattern = shape_of(examples)
        hint = f"{name} {description}".casefold()
        if pattern is None and re.search(r"phone|mobile|手机|电话", hint):
            pattern = _PHONE
        if pattern is None and re.search(r"e-?mail|邮箱", hint):
            pattern = _EMAIL
        if pattern is not None:
            return Reader(name, "shape", adapter, pattern=pattern, examples=examples)
    return Reader(name, "free", adapter, limits=limits)


def _unwrapped(annotation: Any) -> Any:
    """``X | None`` → ``X``; ``Annotated[X, …]`` → ``X``."""
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return args[0] if len(args) == 1 else annotation
    return annotation


def _limits(metadata: Iterable[Any]) -> Text | None:
    low: Any = None  # the constraint's bound, as the annotation gives it
    high: Any = None
    low_open = high_open = False
    for item in metadata:
        if isinstance(item, at.Ge):
            low = item.ge
        elif isinstance(item, at.Gt):
            low, low_open = item.gt, True
        elif isinstance(item, at.Le):
            high = item.le
        elif isinstance(item, at.Lt):
            high, high_open = item.lt, True
    if low is not None and high is not None and not (low_open or high_open):
        return {"zh": f"需在 {low} 到 {high} 之间", "en": f"it must be between {low} and {high}"}
    parts_zh: list[str] = []
    parts_en: list[str] = []
    if low is not None:
        parts_zh.append(f"需{'大于' if low_open else '不小于'} {low}")
        parts_en.append(f"it must be {'more than' if low_open else 'at least'} {low}")
    if high is not None:
        parts_zh.append(f"需{'小于' if high_open else '不大于'} {high}")
        parts_en.append(
            f"{'' if parts_en else 'it '}must be {'less than' if high_open else 'at most'} {high}"
        )
    if not parts_zh:
        return None
    return {"zh": "，".join(parts_zh), "en": " and ".join(parts_en)}


# ---- a tool's parameters ------------------------------------------------------------------
class ToolValues:
    """Reads the values of one tool's parameters out of a message."""

    def __init__(self, parameters: type[BaseModel]) -> None:
        """Build a reader per parameter of ``parameters`` (a card's model)."""
        self.readers = {n: reader_of(n, info) for n, info in parameters.model_fields.items()}

    def shaped(self) -> list[Reader]:
        """The parameters read by a shape (codes, phones, emails)."""
        return [r for r in self.readers.values() if r.kind == "shape"]

    def read(self, text: str, *, today: date) -> SlotResult:
        """The values ``text`` gives this tool's parameters (see the module docstring)."""
        plain = folded(text)
        slots: dict[str, Any] = {}
        invalid: dict[str, str] = {}
        several: dict[str, tuple[Any, ...]] = {}
        claimed: list[tuple[int, int]] = []
        found_codes = _codes(plain, self.shaped())
        for name, (values, spans) in found_codes.items():
            claimed.extend(spans)
            self._put(name, values, slots, invalid, several)
        dates = _dates(plain, today)
        claimed.extend(span for _, span in dates)
        date_readers = [r for r in self.readers.values() if r.kind == "date"]
        if len(date_readers) == 1 and dates:
            self._put(
                date_readers[0].name, [d.isoformat() for d, _ in dates], slots, invalid, several
            )
        numbers = [r for r in self.readers.values() if r.kind == "number"]
        if len(numbers) == 1:
            said = _numbers(_without(plain, claimed), integer=numbers[0].integer)
            if len(set(said)) == 1:
                self._put(numbers[0].name, said[:1], slots, invalid, several)
        for reader in self.readers.values():
            if reader.kind == "choice":
                chosen = _choice(plain, reader)
                if chosen is not None:
                    self._put(reader.name, [chosen], slots, invalid, several)
        return SlotResult(slots=slots, invalid=invalid, several=several)

    def _put(
        self,
        name: str,
        values: Sequence[Any],
        slots: dict[str, Any],
        invalid: dict[str, str],
        several: dict[str, tuple[Any, ...]],
    ) -> None:
        reader = self.readers[name]
        checked = [reader.check(v) for v in dict.fromkeys(values)]
        good = [v for v, why in checked if why is None]
        bad = [(v, why) for v, why in checked if why is not None]
        if len(good) > 1:
            several[name] = tuple(good)
        elif good:
            slots[name] = good[0]
        elif bad:
            value, why = bad[0]
            invalid[name] = f"{value}: {why}"

    def check(self, name: str, value: Any) -> tuple[Any, str | None]:
        """Check a value given by other means (the model) against the parameter."""
        reader = self.readers.get(name)
        return (value, None) if reader is None else reader.check(value)


def _codes(
    text: str, readers: Sequence[Reader]
) -> dict[str, tuple[list[str], list[tuple[int, int]]]]:
    """Shaped values by parameter; a shape two parameters share names neither."""
    patterns: dict[str, list[str]] = {}
    for reader in readers:
        assert reader.pattern is not None
        patterns.setdefault(reader.pattern.pattern, []).append(reader.name)
    out: dict[str, tuple[list[str], list[tuple[int, int]]]] = {}
    for reader in readers:
        assert reader.pattern is not None
        matches = list(reader.pattern.finditer(text))
        if not matches or len(patterns[reader.pattern.pattern]) > 1:
            continue
        values = [_upper_like(re.sub(r"\s", "", m.group(0)), reader.examples) for m in matches]
        out[reader.name] = (values, [m.span() for m in matches])
    return out


def codes_in(text: str, readers: Sequence[Reader]) -> dict[str, list[str]]:
    """Every shaped value in ``text`` by parameter name (for values said in earlier turns)."""
    return {name: values for name, (values, _) in _codes(folded(text), readers).items()}


def _without(text: str, spans: Iterable[tuple[int, int]]) -> str:
    chars = list(text)
    for start, end in spans:
        for i in range(start, end):
            chars[i] = " "
    return "".join(chars)


def _numbers(text: str, *, integer: bool) -> list[float | int]:
    out: list[float | int] = []
    spans: list[tuple[int, int]] = []
    for match in _PHONE.finditer(text):
        spans.append(match.span())
    text = _without(text, spans)
    for match in _NUMBER.finditer(text):
        number = float(match.group(1))
        out.append(int(number) if number.is_integer() else number)
    for match in _CN_NUMBER.finditer(text):
        counted = chinese_number(match.group(1))
        if counted is not None:
            out.append(counted)
    if integer:
        out = [v for v in out if float(v).is_integer()]
    return out


def chinese_number(text: str) -> int | None:
    """一 … 九百九十九 as a number; ``None`` for what is not one."""
    if not text:
        return None
    total, current = 0, 0
    for char in text:
        if char in _CN_DIGITS:
            current = _CN_DIGITS[char]
        elif char == "十":
            total += (current or 1) * 10
            current = 0
        elif char == "百":
            total += (current or 1) * 100
            current = 0
        else:
            return None
    return total + current


def dates_in(text: str, today: date) -> list[date]:
    """The days ``text`` names, in order."""
    return [day for day, _ in _dates(folded(text), today)]


def _dates(text: str, today: date) -> list[tuple[date, tuple[int, int]]]:
    found: list[tuple[date, tuple[int, int]]] = []
    taken: list[tuple[int, int]] = []
    for pattern, form in _DATE_FORMS:
        for match in pattern.finditer(text):
            span = match.span()
            if any(s < span[1] and span[0] < e for s, e in taken):
                continue
            day = _date_of(form, match, today)
            if day is not None:
                found.append((day, span))
                taken.append(span)
    found.sort(key=lambda item: item[1][0])
    return found


def _date_of(form: str, match: re.Match[str], today: date) -> date | None:
    groups = match.groups()
    try:
        if form == "ymd":
            return date(int(groups[0]), int(groups[1]), int(groups[2]))
        if form == "md":
            return _next(today, int(groups[0]), int(groups[1]))
        if form == "Md":
            return _next(today, _MONTHS[groups[0].lower()], int(groups[1]))
        if form == "dM":
            return _next(today, _MONTHS[groups[1].lower()], int(groups[0]))
        if form == "d":
            return _next(today, today.month, int(groups[0]), roll_month=True)
        if form.startswith("+"):
            return today + timedelta(days=int(form[1:]))
        if form == "w":
            target = _WEEKDAYS[match.group(0).lower()]
            return today + timedelta(days=(target - today.weekday()) % 7)
    except ValueError:
        return None
    return None


def _next(today: date, month: int, day: int, *, roll_month: bool = False) -> date:
    """The next such day to come, unless it passed less than ``RECENT_DAYS`` ago."""
    candidate = date(today.year, month, day)
    if candidate >= today - timedelta(days=RECENT_DAYS) and not (roll_month and candidate < today):
        return candidate
    if roll_month:
        month = month % 12 + 1
        return date(today.year + (month == 1), month, day)
    return date(today.year + 1, month, day)


def _choice(text: str, reader: Reader) -> str | None:
    lowered = text.casefold()
    hits: list[str] = []
    for choice in reader.choices:
        words = {choice, choice.replace("_", " "), choice.replace("-", " ")}
        alias = reader.aliases.get(choice)
        for word in [*words, *([alias] if alias else [])]:
            word = word.casefold()
            if not word:
                continue
            if has_cjk(word):
                hit = word in lowered
            else:
                hit = re.search(rf"(?<![a-z0-9]){re.escape(word)}(?![a-z0-9])", lowered) is not None
            if hit:
                hits.append(choice)
                break
    return hits[0] if len(hits) == 1 else None


__all__ = [
    "Reader",
    "ToolValues",
    "chinese_number",
    "codes_in",
    "dates_in",
    "folded",
    "reader_of",
    "shape_of",
]
