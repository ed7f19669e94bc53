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
from collections.abc import Callable
from typing import Any

from config.limits import pairs_before
from security.pii_patterns import (
    _ALL_KINDS,
    _ANY_DIGIT,
    _CARD,
    _ID,
    _MAX_WINDOWS,
    _NUMBER_RUN,
    _PHONE,
    _PHONE_RUN,
    _PIN_STRICT,
    _PIN_WORDS,
    _RUN,
    _SECRET_AFTER,
    _SECRET_BEFORE,
    _STEM_RE,
    _STEM_SPOILER,
    _STEMS,
    _SUSPECT,
    ZERO_WIDTH,
    Finding,
    Kind,
    _fold,
    _Normalized,
    normalize,
)

# 18-digit resident ID: region (6), birth date (8, checked below), sequence (3), check char.
# Payment cards: 13-19 digits, possibly grouped; masked only when the Luhn digit holds.
# Mainland mobile numbers, optionally with a +86 / 86 prefix, optionally grouped.

# For masking, be generous: up to 24 non-digit characters between keyword and digits
# ("支付密码我告诉你吧 123456", "password for my account: 1234"), or digits then keyword.


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
