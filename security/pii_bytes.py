"""A pre-check on bytes: may a packed value hold an identifier or a secret at all?

The checkpoint masker (``graph.checkpoint.masking``) sees msgpack blobs; decoding every one to
look for PII would cost more than the rest of a checkpoint. ``could_hold_utf8`` answers from a
few C calls over the bytes (``bytes.translate`` and substring search): never "no" when a
string inside could hold something, often "no" when nothing could.
"""

from __future__ import annotations

import re

from security.pii_patterns import (
    _MIN_CARD_DIGITS,
    _MIN_NUMBER_DIGITS,
    _STEM_SPOILER,
    _SUSPECT_CLASS,
    Kind,
)


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


_NOT_SPOILER_LEADS = bytes(sorted(set(range(256)) - {c[0] for c in _utf8_chars(_SPOILERS)}))
"""Every byte but the first bytes of those characters: deleting them leaves nothing when
none is there, a C pass that spares most texts the pattern."""


_SPOILER_UTF8 = _utf8_pattern(_SPOILERS)


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
