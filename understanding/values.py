"""Values said anywhere in a message, whatever words surround them.

A value is read because it is a value, not because of the words around it: "hmm, 60
instead", "send less, 60 will do" and "two hundred is enough" each hold an amount, "not the
20th, the 21st" a day. ``values_in`` finds the spans that look like values — numbers and
codes with their units ("500 yuan", "the 21st", "ACC-3001", "June 21st"), numbers in words
("fifty", "two hundred") and words that are values by themselves ("tomorrow", "afternoon")
— and says which a negator takes back ("don't send 500", "not 80"). Each span is given as
said and in digits ("two hundred" → "200"), so a task's own slot extractor reads it as the
bare answer it is.

What a value looks like is the languages' data (``language/<code>/lexicon.yaml``: numerals,
number words, units, value words); nothing here names a slot, a task or a word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import cn2an

from contract.text_match import fold, negated, normalize
from language import LANGUAGES, alternation, every, lexicon


@dataclass(frozen=True, slots=True)
class Value:
    """One value-shaped span of a normalized message."""

    text: str
    """As said (normalized)."""
    digits: str
    """With numbers in words written in digits ("two hundred yuan" → "200 yuan")."""
    start: int
    end: int
    negated: bool
    """A negator takes it back ("not 500", "not the 20th")."""


def _numbers() -> tuple[dict[str, int], dict[str, int]]:
    words: dict[str, int] = {}
    scales: dict[str, int] = {}
    for code in LANGUAGES:
        words.update(lexicon(code).number_words)
        scales.update(lexicon(code).number_scales)
    return words, scales


_WORDS, _SCALES = _numbers()
_NUMERALS = "".join(sorted({c for code in LANGUAGES for c in lexicon(code).numerals}))
_UNIT = "|".join(
    rf"{re.escape(u)}(?![a-z0-9])" if u.isascii() else re.escape(u)
    for u in sorted({normalize(u) for u in every("units")}, key=len, reverse=True)
)
_VALUE_WORD = alternation(tuple(normalize(w) for w in every("value_words")), whole=True)
_NUMBER_WORD = alternation((*_WORDS, *_SCALES), whole=True)
_AND_WORDS = frozenset(every("number_and"))
_ONE_WORDS = frozenset(every("number_one"))
"""Words that stand for one before a scale ("a hundred"); never a value on their own."""
NUMBER_WORDS = tuple(sorted((*_WORDS, *_SCALES, *_ONE_WORDS), key=len, reverse=True))
"""Every word of a number said in words, longest first (for a scenario's own patterns)."""
_NUMBER_AND = alternation(tuple(_AND_WORDS), whole=True)
_DIGITS = r"\d(?:[\d,.:/\-]*\d)?"
_CODE = r"(?<![a-z0-9])[a-z]{1,4}[-_]?\d[\d\-_]*[a-z0-9]*"
_NUMERAL_RUN = rf"[{_NUMERALS}]+" if _NUMERALS else r"(?!x)x"
_LEAD = alternation(tuple(normalize(w) for w in every("value_leads")), whole=True)
_SPAN = re.compile(
    rf"(?:(?:{_LEAD})\s+(?=\d))?"  # "the 21st"
    rf"(?:(?:{_VALUE_WORD})\s*)?"  # "june 21", "tomorrow afternoon"
    rf"(?:{_CODE}|{_DIGITS}|{_NUMERAL_RUN}"
    rf"|(?:{_NUMBER_WORD})(?:[\s-]+(?:(?:{_NUMBER_AND})[\s-]+)?(?:{_NUMBER_WORD}))*)"
    rf"(?:\s*(?:{_UNIT})(?:\s*(?:{_DIGITS}|{_NUMERAL_RUN})\s*(?:{_UNIT})?)?)?"
    rf"|(?:{_VALUE_WORD})(?:\s*(?:{_VALUE_WORD}))*",
    re.IGNORECASE,
)


@lru_cache(maxsize=4096)
def values_in(text: str) -> tuple[Value, ...]:
    """The value-shaped spans of ``text``, in order; positions are ``text``'s own."""
    lowered = fold(text)
    out: list[Value] = []
    for found in _SPAN.finditer(lowered):
        said = found.group().strip()
        if not said or not _has_value(said):
            continue
        start = found.start() + (len(found.group()) - len(found.group().lstrip()))
        out.append(
            Value(
                text=said,
                digits=_in_digits(said),
                start=start,
                end=start + len(said),
                negated=negated(lowered, start),
            )
        )
    return tuple(out)


def without_negated(text: str) -> str:
    """``text`` as written, with the values a negator takes back blanked out."""
    for value in values_in(text):
        if value.negated:
            text = text[: value.start] + " " * (value.end - value.start) + text[value.end :]
    return text


def _has_value(said: str) -> bool:
    """A span of only a unit or a numeral like "half" alone is no value."""
    if re.search(r"\d", said) or re.fullmatch(_VALUE_WORD, said):
        return True
    if re.search(_NUMBER_WORD, said, re.IGNORECASE):
        return True
    return len(said) >= 2 and bool(re.search(_NUMERAL_RUN, said))


_NUMERAL_PIECE = re.compile(_NUMERAL_RUN)
_WORD_PIECE = re.compile(
    rf"(?:{_NUMBER_WORD})(?:[\s-]+(?:(?:{_NUMBER_AND})[\s-]+)?(?:{_NUMBER_WORD}))*",
    re.IGNORECASE,
)


def _in_digits(said: str) -> str:
    """Numbers in words or numerals as digits; everything else as said."""
    said = _WORD_PIECE.sub(lambda m: _words_value(m.group()) or m.group(), said)
    return _NUMERAL_PIECE.sub(lambda m: _numeral_value(m.group()), said)


def _numeral_value(numeral: str) -> str:
    try:
        value = cn2an.cn2an(numeral, "smart")
    except (ValueError, KeyError, IndexError):
        return numeral
    number = float(value)
    return str(int(number)) if number.is_integer() else str(number)


def words_value(words: str) -> int | None:
    """The number English words say ("two hundred and five" → 205, "a hundred" → 100)."""
    total = current = 0
    for word in re.split(r"[\s-]+", words.lower().strip()):
        if not word or word in _AND_WORDS:
            continue
        if word in _ONE_WORDS:
            current = current or 1
        elif word in _WORDS:
            current += _WORDS[word]
        elif word in _SCALES and _SCALES[word] < 1000:
            current = (current or 1) * _SCALES[word]
        elif word in _SCALES:
            total += (current or 1) * _SCALES[word]
            current = 0
        else:
            return None
    value = total + current
    return value if value > 0 else None


def _words_value(words: str) -> str | None:
    value = words_value(words)
    return None if value is None else str(value)


__all__ = ["NUMBER_WORDS", "Value", "values_in", "without_negated", "words_value"]
