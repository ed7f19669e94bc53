"""Mask personal identifiers before anything is persisted, logged or shown to a model.

The design forbids full ID-card numbers and phone numbers in protocol messages. Masking is
applied recursively to strings inside dicts and lists, so a tool result or a model argument
cannot smuggle one through a nested field.
"""

from __future__ import annotations

import re
from typing import Any

# 18-digit PRC resident ID: 6-digit region, 8-digit birth date, 3-digit sequence, check char.
_ID_CARD = re.compile(r"(?<![0-9A-Za-z])(\d{6})\d{8}(\d{3}[0-9Xx])(?![0-9A-Za-z])")
# Mainland mobile numbers, optionally with +86 / 86 prefix.
_PHONE = re.compile(r"(?<!\d)((?:\+?86[- ]?)?1[3-9]\d)\d{4}(\d{4})(?!\d)")
# Secrets typed after a keyword: payment PINs, passwords, verification codes.
_SECRET = re.compile(
    r"((?:密码|支付密码|验证码|PIN|pin|passcode|password)\s*(?:是|为|:|：|is)?\s*)(\d{4,8})"
)
# Payment card numbers: 13-19 digits, possibly grouped, masked only when Luhn-valid.
_CARD = re.compile(r"(?<![\d*])(\d{4})(?:[ -]?\d){5,11}([ -]?\d{4})(?![\d*])")


def mask_text(text: str) -> str:
    """Return ``text`` with ID-card, phone and card numbers masked.

    The ID card keeps its first six and last four characters (``110101********1234``), the
    phone its first three and last four (``138****8000``), so support staff can still tell
    which one the user meant without the full number being stored.
    """
    text = _ID_CARD.sub(lambda m: f"{m.group(1)}{'*' * 8}{m.group(2)[-4:]}", text)
    text = _PHONE.sub(lambda m: f"{m.group(1)}****{m.group(2)}", text)
    text = _SECRET.sub(lambda m: m.group(1) + "*" * len(m.group(2)), text)
    return _CARD.sub(_mask_card, text)


def _mask_card(match: re.Match[str]) -> str:
    digits = re.sub(r"\D", "", match.group(0))
    if not 13 <= len(digits) <= 19 or not _luhn_ok(digits):
        return match.group(0)
    return f"{digits[:4]}{'*' * (len(digits) - 8)}{digits[-4:]}"


def _luhn_ok(digits: str) -> bool:
    """Check the Luhn digit, so long timestamps and ids are not mistaken for cards."""
    total = 0
    for index, char in enumerate(reversed(digits)):
        digit = int(char)
        if index % 2 == 1:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


def mask_pii(value: Any) -> Any:
    """Mask identifiers in ``value`` and in every string nested inside it."""
    if isinstance(value, str):
        return mask_text(value)
    if isinstance(value, dict):
        return {key: mask_pii(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [mask_pii(item) for item in value]
    return value


def looks_like_phone(text: str) -> bool:
    """Tell whether ``text`` is exactly a mainland mobile number."""
    return bool(re.fullmatch(r"1[3-9]\d{9}", text))
