"""Identity numbers: validate them, and keep the full number out of state and messages.

A full ID-card number is needed by the booking backend but must never be stored in a
checkpoint or shown. Slot filling puts it in this vault and keeps only a token
(``pii:<hex>``) and the masked form; the tool resolves the token server-side.

Tokens are HMAC-SHA256 of owner and value under a secret key, never a plain hash: a
checkpoint holds the user id and the masked ID (``110101********1237``) next to the token,
and with an unkeyed hash the rest falls to brute force in a second (a PIN in 0.2 s). The key
comes from ``REACH_VAULT_SECRET``, or is generated once into ``<data_dir>/vault.key`` with
mode 0600. Tokens stay deterministic (same owner and value, same token), so a replayed slot
filling yields the same token and the same request id: idempotency is unaffected.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import re
import secrets
import stat
import threading
import unicodedata
from pathlib import Path

from config.settings import Settings, get_settings
from storage.db import Database

_log = logging.getLogger(__name__)
KEY_FILE = "vault.key"
_KEYS: dict[Path, bytes] = {}
_KEYS_LOCK = threading.Lock()

_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_CHECK = "10X98765432"
_ID = re.compile(r"^\d{17}[\dXx]$")
TOKEN_PREFIX = "pii:"


def id_number(typed: str) -> str:
    """An ID number as stored and checked: full-width digits made ASCII, the X upper-case."""
    return unicodedata.normalize("NFKC", typed).upper()


def id_card_problem(number: str) -> str | None:
    """Return why ``number`` is not a valid 18-digit resident ID, or ``None`` if it is."""
    number = id_number(number)  # "１１０１…" typed on a phone's Chinese keyboard is the same
    if not _ID.fullmatch(number):
        return "must be 17 digits and a check digit (0-9 or X)"
    total = sum(int(digit) * weight for digit, weight in zip(number[:17], _WEIGHTS, strict=True))
    if _CHECK[total % 11] != number[17].upper():
        return "check digit does not match"
    return None


def mask_id_card(number: str) -> str:
    """Mask an ID-card number as ``110101********1234``."""
    return f"{number[:6]}{'*' * 8}{number[-4:]}"


def vault_key(settings: Settings | None = None) -> bytes:
    """Return the vault's HMAC key: the configured secret, else the data directory's key file.

    The file is created on first use with ``O_EXCL`` and mode 0600, so two processes starting
    together agree on one key and no other user can read it.
    """
    settings = settings or get_settings()
    if settings.vault_secret is not None and settings.vault_secret.get_secret_value():
        return settings.vault_secret.get_secret_value().encode("utf-8")
    given = settings.data_dir / KEY_FILE
    with _KEYS_LOCK:
        # by the path as given first: resolving it (an lstat per part) on every call cost
        # more than the rest of slot filling
        cached = _KEYS.get(given)
        if cached is None:
            path = given.resolve()
            cached = _KEYS.get(path) or _load_or_create_key(path)
            _KEYS[path] = _KEYS[given] = cached
        return cached


def _load_or_create_key(path: Path) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return _read_key(path)
    key = secrets.token_bytes(32)
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(key.hex())
    return key


def _read_key(path: Path) -> bytes:
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        _log.warning("vault key %s was readable by others (mode %o); made 0600", path, mode)
        path.chmod(0o600)
    key = bytes.fromhex(path.read_text(encoding="ascii").strip())
    if len(key) < 32:
        msg = f"vault key {path} is shorter than 32 bytes"
        raise ValueError(msg)
    return key


class IdentityVault:
    """Tokens for full identity numbers, scoped to the user who gave them."""

    def __init__(self, db: Database, key: bytes | None = None) -> None:
        """Keep the vault in the business database (table ``pii_vault``).

        ``key`` defaults to ``vault_key()`` (settings, or the data directory's key file).
        """
        self.db = db
        self._key = key if key is not None else vault_key()

    def token_for(self, owner_id: str, number: str) -> str:
        """Return the token ``store`` gives ``number``: keyed, so not recomputable offline."""
        message = f"{owner_id}|{number.upper()}".encode()
        # 24 hex digits (96 bits) as before: the tools' patterns expect that shape
        digest = hmac.new(self._key, message, hashlib.sha256).hexdigest()[:24]
        return f"{TOKEN_PREFIX}{digest}"

    def store(self, owner_id: str, number: str, masked: str | None = None) -> str:
        """Keep ``number`` (an ID number, or any secret) for ``owner_id``; return its token."""
        token = self.token_for(owner_id, number)
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
