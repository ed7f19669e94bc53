"""What the PII detector looks for: its patterns, and the normalized view it reads.

The regular expressions of ID numbers, payment cards, mobile numbers and keyword-announced
secrets, the characters an attacker may hide between digits, and ``_Normalized``: the text
NFKC-folded and without zero-width characters, with a map back to the original's spans.
Only ``security.pii`` (the detector and maskers) reads these.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

Kind = Literal["id_card", "bank_card", "phone", "secret"]


ZERO_WIDTH = frozenset(
    "\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064\ufeff\u00ad\u180e\u034f"
)
"""Invisible characters an attacker can put between digits or inside a keyword."""


_SEP = r"[ \t\-]?"
"""At most one separator between two digits: a space, a tab or a dash."""


_LEFT = r"(?<![0-9A-Za-z*+])(?<![0-9A-Za-z][\-_./])(?<![0-9][ \t])"
"""Not inside a longer run: no digit or letter just before, nor a dash-joined word (UUIDs)."""


_RIGHT = r"(?![0-9A-Za-z*])(?![\-_./][0-9A-Za-z])(?![ \t][0-9])"


_ID = re.compile(rf"{_LEFT}\d(?:{_SEP}\d){{16}}{_SEP}[\dXx]{_RIGHT}", re.ASCII)


_CARD = re.compile(rf"{_LEFT}\d(?:{_SEP}\d){{12,18}}{_RIGHT}", re.ASCII)


_PHONE = re.compile(rf"{_LEFT}(?:\+?86{_SEP})?1[3-9]\d(?:{_SEP}\d){{8}}{_RIGHT}", re.ASCII)


_KEYWORDS = (
    r"支付密码|交易密码|取款密码|银行卡密码|登录密码|登陆密码|密码|验证码|校验码|动态码|口令"
    r"|payment\s*pin|pin\s*code|pincode|pin\s*number|pin\s*no|pin"
    r"|pass\s*code|password|passwd|pwd|pass\s*word"
    r"|verification\s*code|security\s*code|one[\s-]*time\s*code|otp|cvv|cvc"
)


_KEYWORD = rf"(?<![a-z])(?:{_KEYWORDS})(?![a-z])"


_CONNECT_STRICT = r"(?:码|号)?[\s:=#\-]*(?:(?:is|was|是|为)[\s:=#\-]*)?"
"""Between a keyword and its digits, as the transfer extractor accepts them."""


_DIGITS = r"(\d(?: ?\d){3,31})(?! ?\d)(?![a-z])"


_GAP = r"(?:[^\d\n\x00-\x1f\udc80-\udcff]{0,24}?(?<![a-z]))?"
"""Keyword to digits: nothing, or a few characters not ending in a letter (so the digits of
a token such as ``pii:3f2a1234`` are never taken for a secret); never a control or framing
byte, so two msgpack strings cannot join into one match."""


_PIN_STRICT = re.compile(rf"{_KEYWORD}{_CONNECT_STRICT}(\d{{6}})(?!\d)", re.IGNORECASE | re.ASCII)


_SECRET_AFTER = re.compile(rf"{_KEYWORD}{_GAP}{_DIGITS}", re.IGNORECASE | re.ASCII)


_SECRET_BEFORE = re.compile(
    rf"(?<![0-9a-z])(?<!\d )(\d(?: ?\d){{3,31}})\s*(?:is|was|是|为|就是)?\s*(?:my|the|我的|我)?\s*"
    rf"(?:{_KEYWORDS})(?![a-z])",
    re.IGNORECASE | re.ASCII,
)


_PIN_WORDS = re.compile(r"pin|pass|pwd|密码|口令", re.IGNORECASE | re.ASCII)


_ANY_DIGIT = re.compile(r"\d")


_RUN = re.compile(r"\d(?:[ \t\-]?\d){10,}", re.ASCII)
"""A run of 11 or more digits: the only places an ID, a card or a phone number can be."""


_STEMS = tuple("pin pass pwd code otp cvv cvc 密码 验证码 校验码 动态码 口令".split())
"""Substrings every secret keyword contains; the secret patterns run only around them."""


_MAX_WINDOWS = 64
"""More keyword or digit spans than this: one pass over the whole text is cheaper."""


_MIN_NUMBER_DIGITS = 11
"""The fewest digits of an identifier found without a keyword (a mobile number; ``_RUN``)."""


_MIN_CARD_DIGITS = 13
"""The fewest digits of a payment card; an ID number has 18."""


@dataclass(frozen=True)
class Finding:
    """One identifier or secret, located in the original text."""

    kind: Kind
    """What it is."""
    start: int
    """Index of its first character in the original text."""
    end: int
    """Index after its last character in the original text."""
    digits: str
    """Its characters normalized and without separators (``110101199001011237``)."""
    keyword: str = ""
    """For a secret: the keyword that announced it (normalized, lower case)."""


_CHANGED_BY_NFKC = (
    "\u00a0\u00b2\u00b3\u00b9\u00bc-\u00be\u2000-\u200a\u2024\u2070-\u209f\u2100-\u218f"
    "\u2460-\u24ff\u2776-\u2793\u3000\u3200-\u33ff\uf900-\ufaff\ufe10-\ufe19\ufe30-\ufe6f"
    "\uff00-\uffef\U0001d400-\U0001d7ff\U0001f100-\U0001f1ff"
)


_SUSPECT_CLASS = f"{_CHANGED_BY_NFKC}{''.join(sorted(ZERO_WIDTH))}"


_SUSPECT = re.compile(f"[{_SUSPECT_CLASS}]")
"""Characters NFKC maps to ASCII digits, letters, spaces or punctuation (full-width forms,
circled and mathematical digits, odd spaces), and invisible ones. Only these are rewritten,
so normalizing a long checkpoint blob costs a regex scan, not a loop over every character."""


_START = r"(?<![0-9A-Za-z])(?<![0-9A-Za-z][\-_./])"
"""Where a number can start (as ``_LEFT``): not glued to a word, so hex ids are passed over."""


_FIRST = f"{_START}[0-9+{_SUSPECT_CLASS}]"


_NEXT = rf"(?:[ \t\-+Xx]*[0-9{_SUSPECT_CLASS}])"


_NUMBER_RUN = re.compile(f"{_FIRST}{_NEXT}{{{_MIN_CARD_DIGITS - 1}}}")
"""Thirteen digit-like characters (NFKC candidates count as digits) with any separators
between: where a card or an ID number could be."""


_PHONE_RUN = re.compile(f"{_FIRST}{_NEXT}{{{_MIN_NUMBER_DIGITS - 1}}}")
"""The same with eleven: where a mobile number could be."""


_STEM_RE = re.compile("|".join(map(re.escape, _STEMS)))


_STEM_SPOILER = re.compile(
    "[\uff21-\uff3a\uff41-\uff5a\u2070-\u209f\u2100-\u218f\u2460-\u24ff\u3200-\u33ff"
    "\uf900-\ufaff\U0001d400-\U0001d7ff\U0001f100-\U0001f1ff"
    f"{''.join(sorted(ZERO_WIDTH))}]"
)
"""Characters that can hide a keyword stem: NFKC folds them into one of its letters
(full-width, circled, mathematical, letterlike, compatibility ideographs), or they are
invisible. A few blocks, not the full-width punctuation Chinese text is full of; a unit test
checks that every such character of ``_CHANGED_BY_NFKC`` is covered."""


def _fold(match: re.Match[str]) -> str:
    """NFKC of one suspect character; nothing for an invisible one."""
    char = match.group()
    return "" if char in ZERO_WIDTH else unicodedata.normalize("NFKC", char)


_ALL_KINDS: frozenset[Kind] = frozenset(("id_card", "bank_card", "phone", "secret"))


class _Normalized:
    """A normalized copy of a text, with a map from each of its characters to the original."""

    def __init__(self, text: str) -> None:
        self.origin: list[int] | None = None
        if text.isascii() or not _SUSPECT.search(text):
            self.text = text  # nothing to normalize: spans map one to one
            return
        chars: list[str] = []
        origin: list[int] = []
        cursor = 0
        for match in _SUSPECT.finditer(text):
            index = match.start()
            chars.append(text[cursor:index])
            origin.extend(range(cursor, index))
            char = text[index]
            if char not in ZERO_WIDTH:
                folded = unicodedata.normalize("NFKC", char)
                folded = "".join(piece for piece in folded if piece not in ZERO_WIDTH)
                chars.append(folded)
                origin.extend([index] * len(folded))
            cursor = index + 1
        chars.append(text[cursor:])
        origin.extend(range(cursor, len(text)))
        self.text = "".join(chars)
        self.origin = origin

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Map a span of the normalized text back to the original."""
        if self.origin is None:
            return start, end
        return self.origin[start], self.origin[end - 1] + 1


def normalize(text: str) -> str:
    """Return ``text`` in the form the detectors see: NFKC, zero-width characters removed."""
    return _Normalized(text).text
