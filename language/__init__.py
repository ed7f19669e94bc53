"""The languages the agent speaks, as data: a lexicon, dialogue-act examples and sentences each.

Owns ``language/<code>/lexicon.yaml`` (yes and no words, negators, clause connectors,
homophones …), ``language/<code>/acts.yaml`` (example sentences of each dialogue act:
affirm, deny, never mind, greet, thanks, bye, a person, a complaint, a correction, resume,
follow-up, out of scope) and ``language/<code>/say.yaml`` (the sentences generic code says:
key → format string, the same keys and placeholders in every language). Generic code reads
words only through here, so a language is added by adding a folder, and no natural-language
word is written in code.

May import nothing of the project (it sits on ``config``'s level: only ``yaml``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import MappingProxyType

import yaml

ROOT = Path(__file__).parent
LANGUAGES = ("zh", "en")


@dataclass(frozen=True)
class Lexicon:
    """The words of one language that generic code reads."""

    code: str
    yes: tuple[str, ...] = ()
    no: tuple[str, ...] = ()
    firm_no: tuple[str, ...] = ()
    opening_yes: tuple[str, ...] = ()
    opening_no: tuple[str, ...] = ()
    fillers: tuple[str, ...] = ()
    question: tuple[str, ...] = ()
    negators: tuple[str, ...] = ()
    not_negators: tuple[str, ...] = ()
    negation_scope: int = 3
    clause_breaks: tuple[str, ...] = ()
    connectors: tuple[str, ...] = ()
    joiners: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    ordinals: Mapping[str, int] = field(default_factory=dict)
    homophones: Mapping[str, str] = field(default_factory=dict)
    numerals: str = ""
    """Characters of numbers written in the language's own script."""
    number_words: Mapping[str, int] = field(default_factory=dict)
    number_scales: Mapping[str, int] = field(default_factory=dict)
    number_and: tuple[str, ...] = ()
    number_one: tuple[str, ...] = ()
    """Words that stand for one before a scale ("a hundred")."""
    """Words that join the parts of a number said in words ("two hundred and five")."""
    units: tuple[str, ...] = ()
    """Words that may follow a number as part of its value ("元", "号", "yuan", "st")."""
    value_words: tuple[str, ...] = ()
    """Words that are a value on their own (tomorrow, Monday, afternoon, June)."""
    months: Mapping[str, int] = field(default_factory=dict)
    value_leads: tuple[str, ...] = ()
    """Words that belong to the value after them ("the 21st")."""
    relative_days: Mapping[str, int] = field(default_factory=dict)
    """Words for a day counted from today, with the count."""
    date_marks: Mapping[str, str] = field(default_factory=dict)
    """``year``, ``month``, ``day`` → the characters that follow each in a written date."""
    greetings: tuple[str, ...] = ()
    """Words that open a message with a greeting ("hi", "你好")."""
    value_intros: tuple[str, ...] = ()
    """Words that introduce a value said on its own ("this is", "我是"); "…" stands for a
    few words ("my … is": "my phone number is"), a trailing ":" for a colon."""
    value_trails: tuple[str, ...] = ()
    """Words that may close a message of one value ("please", "谢谢", "呢")."""


@cache
def lexicon(code: str) -> Lexicon:
    """The lexicon of ``code`` (``zh``, ``en``)."""
    raw = _read(ROOT / code / "lexicon.yaml")
    values: dict[str, object] = {"code": code}
    for name, value in raw.items():
        if isinstance(value, list):
            values[name] = tuple(str(v) for v in value)
        elif name in _NUMBERED and isinstance(value, dict):
            values[name] = {str(k): int(str(v)) for k, v in value.items()}
        elif isinstance(value, dict):
            values[name] = {str(k): str(v) for k, v in value.items()}
        elif name == "negation_scope":
            values[name] = int(str(value))
        else:
            values[name] = value
    return Lexicon(**values)  # type: ignore[arg-type]


@cache
def acts(code: str) -> Mapping[str, tuple[str, ...]]:
    """Dialogue act → example sentences in ``code``."""
    raw = _read(ROOT / code / "acts.yaml")
    out: dict[str, tuple[str, ...]] = {}
    for act, texts in raw.items():
        if not isinstance(texts, list):
            msg = f"{code}/acts.yaml: {act} must be a list of sentences"
            raise ValueError(msg)
        out[str(act)] = tuple(str(text) for text in texts)
    return out


def sentences(code: str) -> Mapping[str, str]:
    """Key → sentence that generic code says in ``code`` (``language/<code>/say.yaml``).

    Each sentence is a format string (``{task}``; a literal brace is doubled). A language not
    spoken (not in ``LANGUAGES``) has none.
    """
    return _sentences(code) if code in LANGUAGES else _NONE


def sentence(key: str, code: str, *, default: str = "zh") -> str:
    """The sentence ``key`` in ``code``, else in ``default`` (``KeyError`` if neither has it)."""
    return sentences(code).get(key) or sentences(default)[key]


@cache
def catalog() -> Mapping[str, Mapping[str, str]]:
    """Key → language → sentence: every language's ``say.yaml`` at once."""
    keys = dict.fromkeys(key for code in LANGUAGES for key in sentences(code))
    return MappingProxyType(
        {
            key: MappingProxyType(
                {code: sentences(code)[key] for code in LANGUAGES if key in sentences(code)}
            )
            for key in keys
        }
    )


@cache
def _sentences(code: str) -> Mapping[str, str]:
    raw = _read(ROOT / code / "say.yaml")
    out: dict[str, str] = {}
    for key, text in raw.items():
        if not isinstance(text, str):
            msg = f"{code}/say.yaml: {key} must be one sentence"
            raise ValueError(msg)
        out[str(key)] = text
    return MappingProxyType(out)


def words(*lists: tuple[str, ...]) -> tuple[str, ...]:
    """Words of several lists, longest first (so an alternation prefers the longer word)."""
    return tuple(sorted({w for words in lists for w in words}, key=len, reverse=True))


def alternation(items: tuple[str, ...], *, whole: bool = False) -> str:
    """A regular expression matching any of ``items`` (escaped, longest first).

    ``whole``: a Latin item only as a whole word (Chinese has no word boundaries).
    """
    parts = []
    for item in words(items):
        escaped = re.escape(item)
        if whole and item[:1].isascii() and item[:1].isalnum():
            escaped = rf"(?<![a-z0-9]){escaped}(?![a-z0-9])"
        parts.append(escaped)
    return "|".join(parts) if parts else r"(?!x)x"


def every(name: str) -> tuple[str, ...]:
    """One list of the lexicon, over every language."""
    out: list[str] = []
    for code in LANGUAGES:
        value = getattr(lexicon(code), name)
        out.extend(value)
    return tuple(out)


def read_yaml(path: Path) -> dict[str, object]:
    """Read a data file with every scalar as a string ("yes", "no", "on" stay words)."""
    if not path.exists():
        return {}
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER) or {}  # noqa: S506 - BaseLoader builds only strings, lists and mappings
    if not isinstance(data, dict):
        msg = f"{path}: expected a mapping"
        raise ValueError(msg)
    return data


_NUMBERED = frozenset({"ordinals", "number_words", "number_scales", "months", "relative_days"})
_NONE: Mapping[str, str] = MappingProxyType({})
_LOADER = getattr(yaml, "CBaseLoader", yaml.BaseLoader)
_read = read_yaml

__all__ = [
    "LANGUAGES",
    "Lexicon",
    "acts",
    "alternation",
    "catalog",
    "every",
    "lexicon",
    "read_yaml",
    "sentence",
    "sentences",
    "words",
]
