"""Signed access tokens: who the caller is, decided by the server, not by the request body.

A token is an HS256 JWT with ``sub`` (the user id), ``role`` (one of the roles in
``security.permissions``), ``iat`` and ``exp``. The key is ``Settings.auth_secret`` or, when that
is unset, a random key generated into ``data_dir / "auth.key"`` (mode 0600) the first time a
token is issued or checked, so a developer gets working auth with no configuration and the
key survives restarts. Everything that reads a token goes through ``read_token``: an expired,
tampered or malformed token is never an identity.
"""

from __future__ import annotations

import os
import re
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import jwt

from config.settings import Settings, get_settings
from security.permissions import ROLES as KNOWN_ROLES

ALGORITHM = "HS256"
ISSUER = "agent-reach"
KEY_FILE = "auth.key"
MIN_SECRET_BYTES = 32
ROLES: frozenset[str] = KNOWN_ROLES
"""Roles a token may carry."""

Clock = Callable[[], float]


@dataclass(frozen=True)
class Identity:
    """The verified caller a token stands for."""

    user_id: str
    """The token's subject."""
    role: str
    """One of ``ROLES``."""
    expires_at: float
    """Unix time after which the token is refused."""


@dataclass(frozen=True)
class InvalidToken:
    """Why a token was refused, in words fit for a 401 response."""

    reason: str


_TTL = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$", re.IGNORECASE)
_UNIT_S = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_ttl(text: str) -> timedelta:
    """Read a lifetime such as ``90``, ``30m``, ``1h`` or ``2d`` (bare numbers are seconds).

    Raises:
        ValueError: the text is not a positive duration.
    """
    match = _TTL.match(text)
    if not match or float(match.group(1)) <= 0:
        msg = f"not a duration: {text!r} (use e.g. 30m, 1h, 2d)"
        raise ValueError(msg)
    return timedelta(seconds=float(match.group(1)) * _UNIT_S[match.group(2).lower()])


def signing_key(settings: Settings | None = None) -> str:
    """Return the HS256 key: the configured secret, or the generated one in the data dir.

    Raises:
        ValueError: the configured secret is too short to be a safe HS256 key.
    """
    settings = settings or get_settings()
    if settings.auth_secret is not None:
        secret = settings.auth_secret.get_secret_value()
        if len(secret.encode()) < MIN_SECRET_BYTES:
            msg = f"REACH_AUTH_SECRET must be at least {MIN_SECRET_BYTES} bytes for HS256"
            raise ValueError(msg)
        return secret
    return _key_file(Path(settings.data_dir) / KEY_FILE)


def _key_file(path: Path) -> str:
    """Read the key file, creating it atomically (0600) if it does not exist yet.

    The key is written to a private temporary file and hard-linked into place, so two
    processes starting together agree on one key and neither reads a half-written file.
    """
    if path.exists():
        return path.read_text(encoding="ascii").strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="ascii") as handle:
            handle.write(secrets.token_urlsafe(48))
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass  # another process won the race; use its key
    finally:
        temporary.unlink(missing_ok=True)
    return path.read_text(encoding="ascii").strip()


def issue_token(
    user_id: str,
    role: str = "customer",
    ttl: timedelta | float | None = None,
    *,
    settings: Settings | None = None,
    clock: Clock = time.time,
) -> str:
    """Sign a token for ``user_id`` acting as ``role``, valid for ``ttl`` (seconds or timedelta).

    Raises:
        ValueError: unknown role, empty user id or non-positive lifetime (a caller's bug).
    """
    settings = settings or get_settings()
    if role not in ROLES:
        msg = f"unknown role {role!r}; expected one of {sorted(ROLES)}"
        raise ValueError(msg)
    if not user_id.strip():
        msg = "user_id must not be empty"
        raise ValueError(msg)
    seconds = settings.token_ttl_s if ttl is None else ttl
    if isinstance(seconds, timedelta):
        seconds = seconds.total_seconds()
    if seconds <= 0:
        msg = f"ttl must be positive, got {seconds}"
        raise ValueError(msg)
    now = int(clock())
    claims = {
        "sub": user_id,
        "role": role,
        "iss": ISSUER,
        "iat": now,
        "exp": now + int(seconds),
    }
    return jwt.encode(claims, signing_key(settings), algorithm=ALGORITHM)


def read_token(
    token: str, *, settings: Settings | None = None, clock: Clock = time.time
) -> Identity | InvalidToken:
    """Verify a token and return who it names, or why it was refused."""
    if not token or not token.strip():
        return InvalidToken("no token")
    try:
        claims = jwt.decode(
            token.strip(),
            signing_key(settings),
            algorithms=[ALGORITHM],
            issuer=ISSUER,
            # Time claims are checked below against the injected clock.
            options={
                "require": ["sub", "role", "exp", "iss"],
                "verify_exp": False,
                "verify_iat": False,
                "verify_nbf": False,
            },
        )
    except jwt.InvalidSignatureError:
        return InvalidToken("token signature does not match (tampered, or signed with another key)")
    except jwt.DecodeError:
        return InvalidToken("malformed token")
    except jwt.MissingRequiredClaimError as error:
        return InvalidToken(f"token lacks the {error.claim!r} claim")
    except jwt.InvalidTokenError as error:
        return InvalidToken(f"invalid token: {error}")
    expires_at = claims["exp"]
    if not isinstance(expires_at, int | float) or clock() >= expires_at:
        return InvalidToken("token expired")
    role, user_id = claims["role"], claims["sub"]
    if role not in ROLES:
        return InvalidToken(f"token names an unknown role {role!r}")
    if not isinstance(user_id, str) or not user_id.strip():
        return InvalidToken("token names no user")
    return Identity(user_id=user_id, role=role, expires_at=float(expires_at))


def verify_token(
    token: str, *, settings: Settings | None = None, clock: Clock = time.time
) -> Identity | None:
    """Return the token's identity, or ``None`` for any token that must not be trusted."""
    result = read_token(token, settings=settings, clock=clock)
    return result if isinstance(result, Identity) else None


def _header(headers: Mapping[Any, Any], name: str) -> str | None:
    """Return one header's value whether the server passes bytes or str keys."""
    for key in (name.encode(), name):
        value = headers.get(key)
        if value is not None:
            return value.decode("latin-1") if isinstance(value, bytes) else str(value)
    return None


def token_from_headers(headers: Mapping[Any, Any]) -> str | None:
    """Find the token: ``Authorization: Bearer <token>``, else ``x-api-key: <token>``."""
    authorization = _header(headers, "authorization")
    if authorization:
        scheme, _, credentials = authorization.strip().partition(" ")
        if scheme.lower() == "bearer" and credentials.strip():
            return credentials.strip()
    api_key = _header(headers, "x-api-key")
    if api_key and api_key.strip():
        return api_key.strip()
    return None
