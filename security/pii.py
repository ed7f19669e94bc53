"""The one detector of personal identifiers and secrets, and the maskers built on it.

Extraction (the transfer PIN), protocol-message masking and checkpoint masking all use
``find_pii``, so a spelling one of them knows can never slip past another. Detection runs on
a normalized view of the text (NFKC, so full-width digits and letters become ASCII; zero-width
characters removed; keywords matched case-insensitively) while every finding keeps its span in
the *original* text: masking then replaces exactly what the user typed, and the checkpoint
masker can keep the byte length that msgpack framing needs.

Found: 18-digit resident ID numbers (GB 11643; any separators, any digit width), Luhn-valid
bank-card numbers, mainland mobile numbers, and secrets announced by a keyword (PINs,
passwords, passcodes, verification codes) in Chinese or English, in either order
("密码是123456", "Passcode is 123456", "123456 is my PIN").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from config.limits import pairs_before

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
# 18-digit resident ID: region (6), birth date (8, checked below), sequence (3), check char.
_ID = re.compile(rf"{_LEFT}\d(?:{_SEP}\d){{16}}{_SEP}[\dXx]{_RIGHT}", re.ASCII)
# Payment cards: 13-19 digits, possibly grouped; masked only when the Luhn digit holds.
_CARD = re.compile(rf"{_LEFT}\d(?:{_SEP}\d){{12,18}}{_RIGHT}", re.ASCII)
# Mainland mobile numbers, optionally with a +86 / 86 prefix, optionally grouped.
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
# For masking, be generous: up to 24 non-digit characters between keyword and digits
# ("支付密码我告诉你吧 123456", "password for my account: 1234"), or digits then keyword.
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


def find_pii(text: str, kinds: frozenset[Kind] | None = None) -> list[Finding]:
    """Return every identifier and secret in ``text``, in order, without overlaps.

    ``kinds`` restricts what is looked for; IDs win over cards, cards over phones, and those
    over keyword-announced secrets when two findings overlap.
    """
    wanted = kinds or _ALL_KINDS
    if len(text) < _SHORTEST_FINDING and text.isascii():
        return []
    clean = _CLEAN.get(wanted)
    if clean is not None and text in clean:
        return []
    found = _find_all(text, wanted) if _digits_possible(text) and could_hold(text, wanted) else []
    if not found and len(text) <= CLEAN_MEMO_TEXT_CHARS:
        _remember_clean(wanted, text)
    return found


_SHORTEST_FINDING = len("pin1234")
"""No ASCII text shorter than this holds anything: a secret is a keyword of three letters or
more and four digits or more, a number eleven digits or more (NFKC leaves ASCII as it is)."""

CLEAN_MEMO_ENTRIES = 16384
"""How many texts found clean are remembered per set of kinds (0 turns the memo off)."""

CLEAN_MEMO_TEXT_CHARS = 2048
"""Longer texts are not remembered: rarely repeated, and they would make the memo large."""

CLEAN_MEMO_TOTAL_CHARS = 1_000_000
"""The characters a memo may hold in all (a few MB at most) before it is cleared."""

_CLEAN_CHARS: dict[frozenset[Kind], int] = {}

_CLEAN: dict[frozenset[Kind], dict[str, None]] = {}
"""Texts the detectors found nothing in, per set of kinds.

A turn checks the same strings many times: the user's message and the tool's fields go into
protocol messages, trace records and checkpoint blobs, each masked on its own. The detectors
are pure functions of the text, so a text once found clean is clean: the memo answers in one
hash lookup. Only clean texts are kept, so the memo never holds an identifier or a secret;
it is cleared when full (bounded memory, no bookkeeping per hit).
"""


def note_clean(text: str, kinds: frozenset[Kind] | None = None) -> None:
    """Tell the memo that ``text`` holds nothing of ``kinds``: only for texts proved clean.

    The checkpoint serializer passes LangGraph's channel versions over without the detectors
    (they cannot hold a finding); remembered, each later checkpoint finds them in one look-up.
    """
    if len(text) <= CLEAN_MEMO_TEXT_CHARS:
        _remember_clean(kinds or _ALL_KINDS, text)


def _remember_clean(wanted: frozenset[Kind], text: str) -> None:
    clean = _CLEAN.get(wanted)
    if clean is None:
        clean = _CLEAN.setdefault(wanted, {})
    held = _CLEAN_CHARS.get(wanted, 0) + len(text)
    if len(clean) >= CLEAN_MEMO_ENTRIES or held > CLEAN_MEMO_TOTAL_CHARS:
        clean.clear()
        held = len(text)
        if not CLEAN_MEMO_ENTRIES:
            return
    clean[text] = None
    _CLEAN_CHARS[wanted] = held


def _find_all(text: str, wanted: frozenset[Kind]) -> list[Finding]:
    """Run every detector of ``wanted`` over ``text`` (``find_pii`` without its pre-check)."""
    norm = _Normalized(text)
    found: list[Finding] = []
    taken: list[tuple[int, int]] = []

    def add(kind: Kind, start: int, end: int, keyword: str = "") -> None:
        if any(start < t_end and t_start < end for t_start, t_end in taken):
            return
        digits = re.sub(r"[^0-9Xx]", "", norm.text[start:end]).upper()
        o_start, o_end = norm.span(start, end)
        taken.append((start, end))
        found.append(Finding(kind, o_start, o_end, digits, keyword))

    text_n = norm.text
    runs = [(m.start(), m.end()) for m in _RUN.finditer(text_n)]
    if "id_card" in wanted:
        for match in _scan(_ID, text_n, runs, 4, 4):
            digits = re.sub(r"[^0-9Xx]", "", match.group(0))
            if _plausible_birth_date(digits[6:14]):
                add("id_card", match.start(), match.end())
    if "bank_card" in wanted:
        for match in _scan(_CARD, text_n, runs, 4, 4):
            digits = re.sub(r"\D", "", match.group(0))
            if 13 <= len(digits) <= 19 and luhn_ok(digits):
                add("bank_card", match.start(), match.end())
    if "phone" in wanted:
        for match in _scan(_PHONE, text_n, runs, 4, 4):
            add("phone", match.start(), match.end())
    if "secret" in wanted:
        stems = _stem_spans(text_n)
        for match in _scan(_SECRET_AFTER, text_n, stems, 24, 100):
            keyword = match.group(0)[: match.start(1) - match.start()].strip().lower()
            add("secret", match.start(1), match.end(1), keyword)
        for match in _scan(_SECRET_BEFORE, text_n, stems, 100, 24):
            keyword = match.group(0)[match.end(1) - match.start() :].strip().lower()
            add("secret", match.start(1), match.end(1), keyword)
    return sorted(found, key=lambda finding: finding.start)


def _digits_possible(text: str) -> bool:
    """Say whether ``text`` has a digit, or a character NFKC could turn into one ("①")."""
    return bool(_ANY_DIGIT.search(text)) or (not text.isascii() and bool(_SUSPECT.search(text)))


def could_hold(text: str, kinds: frozenset[Kind]) -> bool:
    """Say, with C-speed scans only, whether ``text`` may hold something of ``kinds``.

    A superset of what the detectors find, so answering ``False`` never hides a finding: an
    ID, card or phone number starts where ``_LEFT`` allows and has at least
    ``_MIN_NUMBER_DIGITS`` digit-like characters (``_MIN_CARD_DIGITS`` when phones are not
    wanted), counting anything NFKC could turn into a digit, with any separators between
    (one regex, classes disjoint, so no backtracking blow-up); a secret needs a keyword
    stem in the NFKC-folded, zero-width-free, lower-cased text. Checkpoint blobs and
    protocol fields are mostly ids and short sentences: masking them was a third of a turn.
    """
    numbers = kinds - {"secret"}
    if numbers:
        run = _PHONE_RUN if "phone" in numbers else _NUMBER_RUN
        if run.search(text):
            return True
    if "secret" in kinds:
        folded = _SUSPECT.sub(_fold, text) if _STEM_SPOILER.search(text) else text
        if _STEM_RE.search(folded.lower()):  # lower() then a plain regex: 6x faster than re.I
            return True
    return False


def _class_ranges(body: str) -> list[tuple[int, int]]:
    """Return the code-point ranges of a character class written as literal characters."""
    ranges: list[tuple[int, int]] = []
    index = 0
    while index < len(body):
        if index + 2 < len(body) and body[index + 1] == "-":
            ranges.append((ord(body[index]), ord(body[index + 2])))
            index += 3
        else:
            ranges.append((ord(body[index]), ord(body[index])))
            index += 1
    return ranges


def _utf8_chars(ranges: list[tuple[int, int]]) -> list[bytes]:
    return [
        chr(code).encode("utf-8")
        for low, high in ranges
        for code in range(low, high + 1)
        if not 0xD800 <= code <= 0xDFFF
    ]


def _utf8_pattern(ranges: list[tuple[int, int]]) -> re.Pattern[bytes]:
    """Return a bytes pattern matching the UTF-8 encoding of any character in ``ranges``."""
    last_bytes: dict[bytes, set[int]] = {}
    for encoded in _utf8_chars(ranges):
        last_bytes.setdefault(encoded[:-1], set()).add(encoded[-1])
    parts = [
        re.escape(prefix) + b"[" + b"".join(b"\\x%02x" % byte for byte in sorted(ends)) + b"]"
        for prefix, ends in sorted(last_bytes.items())
    ]
    return re.compile(b"|".join(parts))


def _digit_image() -> bytes:
    """Map a byte to ``0`` when it is an ASCII digit or begins a digit-like character."""
    table = bytearray(b"." * 256)
    for byte in b"0123456789":
        table[byte] = 0x30
    for encoded in _utf8_chars(_class_ranges(_SUSPECT_CLASS)):
        table[encoded[0]] = 0x30
    return bytes(table)


_DIGIT_IMAGE = _digit_image()
_DIGIT_IMAGE_DROPS = b" \t-+Xx" + bytes(range(0x80, 0xC0))
"""Separators ``_NEXT`` allows, and UTF-8 continuation bytes (a character counts once)."""
_SPOILERS = [*_class_ranges(_STEM_SPOILER.pattern[1:-1]), (0x130, 0x130)]
"""Characters NFKC or ``lower`` could turn into a keyword stem's letter, and invisible ones
(``_STEM_SPOILER``, and "İ", which lower-cases to two characters)."""
_SPOILER_UTF8 = _utf8_pattern(_SPOILERS)
_NOT_SPOILER_LEADS = bytes(sorted(set(range(256)) - {c[0] for c in _utf8_chars(_SPOILERS)}))
"""Every byte but the first bytes of those characters: deleting them leaves nothing when
none is there, a C pass that spares most texts the pattern."""
_STEM_PARTS = tuple(part.encode("utf-8") for part in "pin pas pwd cod otp cv 码 口令".split())
"""A part of every stem of ``_STEMS``: fewer and shorter (码 ends four of them)."""


def could_hold_utf8(data: bytes, kinds: frozenset[Kind]) -> bool:
    """Say whether some string encoded in ``data`` may hold something of ``kinds``.

    A superset of ``could_hold`` for every string whose UTF-8 bytes lie anywhere in
    ``data`` (a packed value, whatever its framing), decided by a few C calls over the
    bytes, without unpacking anything. Each step maps or drops bytes one by one, or looks
    for a substring, so bytes around a string can add a match but never take one away:

    - digits: an ASCII digit, and the first byte of any character ``_SUSPECT`` matches,
      become ``0``, the separators ``_NEXT`` allows and continuation bytes go, any other
      byte becomes ``.``: where ``_NUMBER_RUN`` (or ``_PHONE_RUN``) matches, its digits'
      zeros end up side by side (one fewer when the run starts with ``+``);
    - keywords: a character NFKC or ``lower`` could turn into a stem's letter means yes;
      without one, the ASCII-lowered bytes hold a part of the stem itself.
    """
    numbers = kinds - {"secret"}
    if numbers:
        run = (_MIN_NUMBER_DIGITS if "phone" in numbers else _MIN_CARD_DIGITS) - 1
        if b"0" * run in data.translate(_DIGIT_IMAGE, _DIGIT_IMAGE_DROPS):
            return True
    if "secret" not in kinds:
        return False
    if data.translate(None, _NOT_SPOILER_LEADS) and _SPOILER_UTF8.search(data) is not None:
        return True
    lowered = data.lower()  # ASCII only: the stems' other bytes are not letters
    pin, pas, pwd, cod, otp, cv, ma, kouling = _STEM_PARTS
    return (
        pin in lowered
        or pas in lowered
        or pwd in lowered
        or cod in lowered
        or otp in lowered
        or cv in lowered
        or ma in lowered
        or kouling in lowered
    )


def _scan(
    pattern: re.Pattern[str], text: str, spans: list[tuple[int, int]], before: int, after: int
) -> list[re.Match[str]]:
    """Run ``pattern`` only in windows around ``spans`` (merged), so long texts stay cheap.

    Lookbehinds still see the text before a window (``finditer``'s ``pos`` does not hide it).
    """
    if len(spans) > _MAX_WINDOWS:  # windows would cost more than one pass over the text
        return list(pattern.finditer(text))
    matches: list[re.Match[str]] = []
    seen: set[tuple[int, int]] = set()
    windows: list[list[int]] = []
    for start, end in spans:
        low, high = max(0, start - before), min(len(text), end + after)
        if windows and low <= windows[-1][1]:
            windows[-1][1] = max(windows[-1][1], high)
        else:
            windows.append([low, high])
    for low, high in windows:
        for match in pattern.finditer(text, low, high):
            if match.span() not in seen:
                seen.add(match.span())
                matches.append(match)
    return matches


def _stem_spans(text: str) -> list[tuple[int, int]]:
    """Where a secret keyword may be: cheap substring search on the lower-cased text."""
    lowered = text.lower() if len(text.lower()) == len(text) else text
    spans: list[tuple[int, int]] = []
    for stem in _STEMS:
        index = lowered.find(stem)
        while index != -1:
            spans.append((index, index + len(stem)))
            index = lowered.find(stem, index + 1)
    return sorted(spans)


def find_pin(text: str, length: int = 6) -> str | None:
    """Return the payment PIN the user typed after a keyword, as ASCII digits, or ``None``.

    Accepts what the masker masks ("Passcode is 123456", "Pin: 123456", "支付密码：１２３４５６",
    "PIN\u200b123456"), but only a keyword-announced group of exactly ``length`` digits, so an
    order number is never taken for a PIN.
    """
    norm = normalize(text)
    match = _PIN_STRICT.search(norm)
    if match and _PIN_WORDS.search(match.group(0)):
        return match.group(1)
    for finding in find_pii(text, frozenset(("secret",))):
        if len(finding.digits) == length and _PIN_WORDS.search(finding.keyword):
            return finding.digits
    return None


def mask_text(text: str, kinds: frozenset[Kind] | None = None) -> str:
    """Return ``text`` with identifiers and secrets masked.

    The ID card keeps its first six and last four characters (``110101********1234``), the
    phone its first three and last four (``138****8000``), a card its first and last four, so
    support staff can still tell which one the user meant; a secret keeps nothing.
    """
    findings = find_pii(text, kinds)
    if not findings:
        return text
    out: list[str] = []
    cursor = 0
    for finding in findings:
        out.append(text[cursor : finding.start])
        out.append(_shown(finding))
        cursor = finding.end
    out.append(text[cursor:])
    return "".join(out)


def _shown(finding: Finding) -> str:
    digits = finding.digits
    if finding.kind == "id_card":
        return f"{digits[:6]}{'*' * 8}{digits[-4:]}"
    if finding.kind == "bank_card":
        return f"{digits[:4]}{'*' * (len(digits) - 8)}{digits[-4:]}"
    if finding.kind == "phone":
        prefix = f"+{digits[:-11]} " if len(digits) > 11 else ""
        return f"{prefix}{digits[-11:-8]}****{digits[-4:]}"
    return "*" * len(digits)


def kept_positions(finding: Finding) -> tuple[int, int]:
    """Return how many leading and trailing digits a masked ``finding`` still shows."""
    if finding.kind == "id_card":
        return 6, 4
    if finding.kind == "bank_card":
        return 4, 4
    if finding.kind == "phone":
        return len(finding.digits) - 8, 4
    return 0, 0


def luhn_ok(digits: str) -> bool:
    """Check the Luhn digit, so long timestamps and ids are not mistaken for cards."""
    total = 0
    for index, char in enumerate(reversed(digits)):
        digit = int(char)
        if index % 2 == 1:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


def _plausible_birth_date(text: str) -> bool:
    if len(text) != 8 or not text.isdigit():
        return False
    year, month, day = int(text[:4]), int(text[4:6]), int(text[6:])
    return 1900 <= year <= 2099 and 1 <= month <= 12 and 1 <= day <= 31


def mask_pii(
    value: Any,
    kinds: frozenset[Kind] | None = None,
    *,
    on_miss: Callable[[str], str] | None = None,
    on_bytes: Callable[[bytes], bytes] | None = None,
) -> Any:
    """Mask identifiers in ``value`` and in every string nested inside it (keys included).

    Nothing is copied unless something is masked: a clean value comes back as the very same
    object, and only the containers on the way to a masked string are new (a changed tuple
    becomes a list). Callers must copy before mutating what they get. A string that is short
    and ASCII, or that the clean-text memo knows, costs no call; ``on_miss`` (default
    ``mask_text`` for ``kinds``) masks the rest; ``on_bytes`` masks ``bytes`` values (left as
    they are by default). Checkpoints hold a few thousand strings per turn, almost all seen
    before: the walk, not the detectors, is what a turn pays for.
    """
    wanted = kinds or _ALL_KINDS
    clean = _CLEAN.setdefault(wanted, {})
    slow = on_miss or (lambda text: mask_text(text, wanted))
    return _mask_nested(value, clean, slow, on_bytes or _same)


def _same(value: bytes) -> bytes:
    return value


_CONTAINERS = (str, dict, list, tuple)
_ATOMS = frozenset((int, float, bool, type(None)))
"""Types that hold no text: passed over without a call."""


def _mask_nested(
    value: Any,
    clean: dict[str, None],
    slow: Callable[[str], str],
    raw: Callable[[bytes], bytes],
) -> Any:
    kind = type(value)
    if kind not in _CONTAINERS:  # subclasses (a str enum, a dict subclass) as their base
        kind = next((base for base in _CONTAINERS if isinstance(value, base)), kind)
    if kind is str:
        if (len(value) < _SHORTEST_FINDING and value.isascii()) or value in clean:
            return value
        return slow(value)
    if kind is dict:
        changed: dict[Any, Any] | None = None
        for key, item in value.items():
            new_key = key
            if isinstance(key, str) and not (
                (len(key) < _SHORTEST_FINDING and key.isascii()) or key in clean
            ):
                new_key = slow(key)
            new = item
            item_kind = type(item)
            if item_kind is str:
                if not ((len(item) < _SHORTEST_FINDING and item.isascii()) or item in clean):
                    new = slow(item)
            elif item_kind not in _ATOMS:
                new = _mask_nested(item, clean, slow, raw)
            if changed is None and (new_key is not key or new is not item):
                changed = pairs_before(value, key)  # the clean ones before this pair
            if changed is not None:
                changed[new_key] = new
        return value if changed is None else changed
    if kind is list or kind is tuple:
        out: list[Any] | None = None
        for index, item in enumerate(value):
            item_kind = type(item)
            if item_kind is str:
                if (len(item) < _SHORTEST_FINDING and item.isascii()) or item in clean:
                    continue
                new = slow(item)
            elif item_kind in _ATOMS:
                continue
            else:
                new = _mask_nested(item, clean, slow, raw)
            if new is not item:
                if out is None:
                    out = list(value)
                out[index] = new
        return value if out is None else out
    if kind is bytes:
        return raw(value)
    return value


def contains_pii(value: Any, kinds: frozenset[Kind] | None = None) -> bool:
    """Tell whether ``value`` or any string nested in it holds an identifier or secret."""
    if isinstance(value, str):
        return bool(find_pii(value, kinds))
    if isinstance(value, dict):
        return any(contains_pii(k, kinds) or contains_pii(v, kinds) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(contains_pii(item, kinds) for item in value)
    return False


_BARE_CODE = re.compile(r"\s*(\d(?:[ -]?\d){5})\s*[。.!！]?\s*")
_BARE_CODE_CHARS = re.compile(r"[\s\d０-９\-。.!！]+")
"""The only characters a bare code may be written with (before NFKC): a cheap first test."""
BARE_CODE_MAX_CHARS = 24
"""Longer texts are never a bare code (a cheap first test)."""


def bare_code(text: str) -> str | None:
    """Return the six digits ``text`` is made of alone ("123456", "１２３ ４５６"), else ``None``.

    What a user types when asked for a PIN: the keyword is in the question, not the answer,
    so ``find_pii`` keeps it. The places that hold what a user typed (intake, the user's
    messages in a checkpoint) take it for a secret; other text (a count, a dict key) keeps
    its numbers.
    """
    if not text or len(text) > BARE_CODE_MAX_CHARS or not _BARE_CODE_CHARS.fullmatch(text):
        return None
    found = _BARE_CODE.fullmatch(normalize(text))
    return None if found is None else re.sub(r"[ -]", "", found.group(1))


def looks_like_phone(text: str) -> bool:
    """Tell whether ``text`` is exactly a mainland mobile number."""
    return bool(re.fullmatch(r"1[3-9]\d{9}", normalize(text)))


__all__ = [
    "ZERO_WIDTH",
    "Finding",
    "Kind",
    "contains_pii",
    "find_pii",
    "find_pin",
    "kept_positions",
    "luhn_ok",
    "mask_pii",
    "mask_text",
    "normalize",
]
