"""Identity numbers: validate them, and keep the full number out of state and messages.

A full ID-card number is needed by the booking backend but must never be stored in a
checkpoint or shown. Slot filling puts it in this vault and keeps only a token
(``pii:<hex>``) and the masked form; the tool resolves the token server-side.
"""

from __future__ import annotations

import hashlib
import re

from tools.db import Database

_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_CHECK = "10X98765432"
_ID = re.compile(r"^\d{17}[\dXx]$")
TOKEN_PREFIX = "pii:"


def id_card_problem(number: str) -> str | None:
    """Return why ``number`` is not a valid 18-digit resident ID, or ``None`` if it is."""
    if not _ID.fullmatch(number):
        return "must be 17 digits and a check digit (0-9 or X)"
    total = sum(int(digit) * weight for digit, weight in zip(number[:17], _WEIGHTS, strict=True))
    if _CHECK[total % 11] != number[17].upper():
        return "check digit does not match"
    return None


def mask_id_card(number: str) -> str:
    """Mask an ID-card number as ``110101********1234``."""
    return f"{number[:6]}{'*' * 8}{number[-4:]}"


class IdentityVault:
    """Tokens for full identity numbers, scoped to the user who gave them."""

    def __init__(self, db: Database) -> None:
        """Keep the vault in the business database (table ``pii_vault``)."""
        self.db = db

    def store(self, owner_id: str, number: str, masked: str | None = None) -> str:
        """Keep ``number`` (an ID number, or any secret) for ``owner_id``; return its token."""
        digest = hashlib.sha256(f"{owner_id}|{number.upper()}".encode()).hexdigest()[:24]
        token = f"{TOKEN_PREFIX}{digest}"
        shown = masked if masked is not None else mask_id_card(number)
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO pii_vault (token, owner_id, value, masked)"
                " VALUES (?, ?, ?, ?)",
                (token, owner_id, number.upper(), shown),
            )
        return token

    def reveal(self, owner_id: str, token: str) -> str | None:
        """Return the number behind ``token``, only to the user who stored it."""
        row = self.db.query_one(
            "SELECT value FROM pii_vault WHERE token = ? AND owner_id = ?", (token, owner_id)
        )
        return None if row is None else str(row["value"])

    def masked(self, token: str) -> str | None:
        """Return the masked form behind ``token``, for display."""
        row = self.db.query_one("SELECT masked FROM pii_vault WHERE token = ?", (token,))
        return None if row is None else str(row["masked"])
