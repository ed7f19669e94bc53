"""What generic code reads from words, all of it from the languages' lexicons.

A plain yes or no ("confirm", "no thanks"), the clauses of a message ("…, and check the
weather in Beijing"), two names joined ("Beijing and Shanghai"), a clause that waits for the
one before it ("tell me once it's booked"), one of several values pointed at ("hurry the
first one"), and the parts of a message a negator takes back ("not 500, 300"). The words are
each language's ``language/<code>/lexicon.yaml``; no word is written here, and a new language
needs no code.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

from contract.text_match import normalize
from language import LANGUAGES, alternation, every, lexicon
from understanding.values import values_in

Answer = Literal["approve", "reject"]

_PUNCTUATION = r"[\s,，。.!！~～、;；:：]+"
_TRAILING_OFF = re.compile(r"…|\.\.\.")


def _pattern(name: str, *, whole: bool = True) -> re.Pattern[str]:
    return re.compile(alternation(every(name), whole=whole), re.IGNORECASE)


_YES = frozenset(normalize(w) for w in every("yes"))
_NO = frozenset(normalize(w) for w in every("no"))
_FIRM_NO = _pattern("firm_no")
_OPENING_YES = re.compile(rf"(?:{alternation(every('opening_yes'), whole=True)})", re.I)
_OPENING_NO = re.compile(rf"(?:{alternation(every('opening_no'), whole=True)})", re.I)
_ANY_NEGATOR = _pattern("negators")
_FILLERS = _pattern("fillers")
_QUESTION = re.compile(rf"[?？]|{alternation(every('question'), whole=True)}", re.IGNORECASE)
_WORDS = re.compile(
    rf"{alternation(tuple(_YES | _NO), whole=True)}|{_FILLERS.pattern}", re.IGNORECASE
)


@lru_cache(maxsize=4096)
def plain_answer(text: str) -> Answer | None:
    """A message that is only a yes or a no (and fillers); anything more is ``None``.

    "confirm", "sure", "yes please", "no thanks" are plain; "no, June 21" says what to do
    instead and "is that ok?" asks: both are ``None`` (understanding reads them).
    """
    lowered = normalize(text)
    if not lowered or _QUESTION.search(lowered) or _TRAILING_OFF.search(lowered):
        return None  # a question, or a voice trailing off ("hmm..."), is no answer
    if not values_in(text):  # "no, June 21" / "no, sixty" say what to do instead
        for pattern, answer in ((_OPENING_NO, "reject"), (_OPENING_YES, "approve")):
            opening = pattern.match(lowered)
            if opening and not _ANY_NEGATOR.search(lowered[opening.end() :]):
                return answer  # type: ignore[return-value]
    said = [m.group() for m in _WORDS.finditer(lowered)]
    rest = _WORDS.sub(" ", lowered)
    if re.sub(_PUNCTUATION, "", rest):
        return None
    answers = {w for w in said if w in _YES or w in _NO}
    if not answers:
        return None
    if answers <= _NO:
        return "reject"
    if answers <= _YES:
        return "approve"
    return None


_OPENING_ANY_YES = re.compile(
    rf"(?:(?:{alternation(tuple(_YES), whole=True)})[\s,，、]*)*"
    rf"(?:{alternation(every('opening_yes'), whole=True)})",
    re.IGNORECASE,
)


def opens_with_yes(text: str) -> bool:
    """The message opens with a firm yes and says nothing against it ("ok go ahead with it").

    A firm yes is the lexicon's ``opening_yes`` ("confirm", "go ahead"), after any plain yes
    words ("ok", "sure"); "hmm, let me think" opens with no firm yes.

    No value (that would be a change), no negator, no question, no voice trailing off.
    """
    lowered = normalize(text)
    if hesitant(text) or values_in(text) or _ANY_NEGATOR.search(lowered):
        return False
    return _OPENING_ANY_YES.match(lowered) is not None


def hesitant(text: str) -> bool:
    """A question or a voice trailing off ("is that ok?", "hmm..."): never read as a yes."""
    lowered = normalize(text)
    return bool(_QUESTION.search(lowered) or _TRAILING_OFF.search(lowered))


def is_firm_no(text: str) -> bool:
    """The message drops the request outright ("never mind", "cancel"), not just "no, …"."""
    return _FIRM_NO.search(normalize(text)) is not None


# ---- clauses ---------------------------------------------------------------------------------
_CJK_CONNECTORS = tuple(w for w in every("connectors") if not w.isascii())
_CUT = re.compile(
    rf"\s*(?:(?:[，,;；。!！?？\n…]|\.\.\.)+\s*(?:{alternation(every('connectors'), whole=True)})?"
    rf"|(?<=[\w)）])\s*(?:{alternation(every('connectors'), whole=True)})\s+"
    rf"|(?<=[\u4e00-\u9fff])(?:{alternation(_CJK_CONNECTORS)})"
    r"|(?<=[\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff])"  # a space between Chinese words is a pause
    r")\s*",
    re.IGNORECASE,
)
_JOIN = re.compile(rf"\s*(?:[、/&]|{alternation(every('joiners'), whole=True)})\s*", re.IGNORECASE)
MAX_CLAUSES = 6
"""A message cut into more is read whole: a list, a paste, not several requests."""


def clauses(text: str) -> list[str]:
    """The clauses of ``text`` in order, without the words that joined them.

    A cut that would leave one Chinese character on either side is no cut: a connector's
    character inside a word (the Chinese "goodbye" holds one) joins nothing.
    """
    parts: list[str] = []
    start = 0
    for cut in _CUT.finditer(text):
        if cut.start() == cut.end() == start or cut.end() == len(text) and not cut.group():
            continue
        end = cut.end()
        before, after = text[start : cut.start()].strip(), _next_piece(text, end)
        if _one_character(after):  # a comma, then such a word: the comma cuts, the word stays one
            end = cut.start() + len(_PAUSE.match(text, cut.start()).group())  # type: ignore[union-attr]
            after = _next_piece(text, end)
        if end == cut.start() or _one_character(before) or _one_character(after):
            continue
        parts.append(before)
        start = end
    parts.append(text[start:].strip())
    parts = [part for part in parts if part and re.search(r"\w", part)]
    if len(parts) > MAX_CLAUSES:
        return [text.strip()]
    return parts or [text.strip()]


_PAUSE = re.compile(r"(?:[\s，,;；。!！?？\n…]|\.\.\.)*")


def _next_piece(text: str, at: int) -> str:
    following = _CUT.search(text, at)
    return text[at : following.start() if following else len(text)].strip()


def _one_character(piece: str) -> bool:
    return len(piece) == 1 and "\u4e00" <= piece <= "\u9fff"


def entity_pieces(text: str) -> list[str]:
    """Cut ``text`` where two names are joined ("Beijing and Shanghai", "OD-1 and OD-2")."""
    return [piece for piece in _JOIN.split(text) if piece.strip()]


_AFTER = _pattern("after")


def after_previous(part: str) -> bool:
    """The clause waits for the one before it ("notify me when it's booked")."""
    return _AFTER.search(normalize(part)) is not None


def _ordinals() -> dict[str, int]:
    out: dict[str, int] = {}
    for code in LANGUAGES:
        out.update({normalize(k): v for k, v in lexicon(code).ordinals.items()})
    return out


_PLACES = _ordinals()
_ORDINAL = re.compile(alternation(tuple(_PLACES), whole=True), re.IGNORECASE)


def ordinal(part: str) -> int | None:
    """The place a clause points at ("hurry the first one" → 0, "the latter" → -1), if any."""
    found = _ORDINAL.search(normalize(part))
    return _PLACES[found.group()] if found else None


__all__ = [
    "MAX_CLAUSES",
    "Answer",
    "after_previous",
    "clauses",
    "entity_pieces",
    "hesitant",
    "is_firm_no",
    "opens_with_yes",
    "ordinal",
    "plain_answer",
]
