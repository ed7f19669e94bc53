"""Tokens: signed, expiring, bound to a known role; the key is generated once, privately."""

from __future__ import annotations

import stat
from datetime import timedelta

import jwt
import pytest

from config.settings import SecretStr, Settings
from security.tokens import (
    Identity,
    InvalidToken,
    issue_token,
    parse_ttl,
    read_token,
    signing_key,
    verify_token,
)

SECRET = "s" * 48
NO_TIME_CHECKS = {"verify_exp": False, "verify_iat": False}


class Clock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(REACH_DATA_DIR=tmp_path, REACH_AUTH_SECRET=SECRET)


def test_a_token_names_its_user_and_role(settings):
    clock = Clock()
    token = issue_token("u_10001", "agent", 3600, settings=settings, clock=clock)
    assert verify_token(token, settings=settings, clock=clock) == Identity(
        "u_10001", "agent", clock.now + 3600
    )
    claims = jwt.decode(token, SECRET, algorithms=["HS256"], options=NO_TIME_CHECKS)
    assert claims["sub"] == "u_10001" and claims["role"] == "agent"


def test_an_expired_token_is_refused_with_a_reason(settings):
    clock = Clock()
    token = issue_token(
        "u_10001", "customer", timedelta(minutes=30), settings=settings, clock=clock
    )
    clock.now += 30 * 60 - 1
    assert verify_token(token, settings=settings, clock=clock) is not None
    clock.now += 1
    assert verify_token(token, settings=settings, clock=clock) is None
    assert read_token(token, settings=settings, clock=clock) == InvalidToken("token expired")


def test_a_tampered_token_is_refused(settings):
    clock = Clock()
    token = issue_token("u_10002", "customer", 3600, settings=settings, clock=clock)
    header, payload, signature = token.split(".")
    claims = jwt.decode(token, SECRET, algorithms=["HS256"], options=NO_TIME_CHECKS)
    forged_payload = jwt.encode({**claims, "sub": "u_10001"}, "o" * 48, algorithm="HS256").split(
        "."
    )[1]
    forged = f"{header}.{forged_payload}.{signature}"
    result = read_token(forged, settings=settings, clock=clock)
    assert isinstance(result, InvalidToken) and "signature" in result.reason
    other_key = jwt.encode({**claims, "role": "admin"}, "k" * 48, algorithm="HS256")
    assert verify_token(other_key, settings=settings, clock=clock) is None


@pytest.mark.parametrize("token", ["", "   ", "not-a-jwt", "a.b.c"])
def test_garbage_is_refused(settings, token):
    assert verify_token(token, settings=settings) is None


def test_unsigned_and_unknown_role_tokens_are_refused(settings):
    clock = Clock()
    claims = {"sub": "u_1", "role": "customer", "iss": "agent-reach", "exp": clock.now + 60}
    unsigned = jwt.encode(claims, None, algorithm="none")
    assert verify_token(unsigned, settings=settings, clock=clock) is None
    boss = jwt.encode({**claims, "role": "boss"}, SECRET, algorithm="HS256")
    assert read_token(boss, settings=settings, clock=clock) == InvalidToken(
        "token names an unknown role 'boss'"
    )
    no_exp = jwt.encode({k: v for k, v in claims.items() if k != "exp"}, SECRET, algorithm="HS256")
    assert verify_token(no_exp, settings=settings, clock=clock) is None


def test_issuing_for_an_unknown_role_is_a_bug(settings):
    with pytest.raises(ValueError, match="unknown role"):
        issue_token("u_1", "boss", settings=settings)


def test_the_key_is_generated_once_into_the_data_dir_privately(tmp_path):
    settings = Settings(REACH_DATA_DIR=tmp_path / "data")
    token = issue_token("u_10001", settings=settings)
    key_file = tmp_path / "data" / "auth.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert len(key_file.read_text().strip()) >= 48
    assert signing_key(settings) == key_file.read_text().strip()
    # A second reader (another process) verifies with the same key.
    assert verify_token(token, settings=Settings(REACH_DATA_DIR=tmp_path / "data")) is not None
    assert verify_token(token, settings=Settings(REACH_DATA_DIR=tmp_path / "elsewhere")) is None


def test_a_configured_secret_wins_over_the_key_file(tmp_path):
    settings = Settings(REACH_DATA_DIR=tmp_path, REACH_AUTH_SECRET=SecretStr(SECRET))
    issue_token("u_1", settings=settings)
    assert not (tmp_path / "auth.key").exists()


def test_default_lifetime_comes_from_settings(tmp_path):
    clock = Clock()
    settings = Settings(REACH_DATA_DIR=tmp_path, REACH_AUTH_SECRET=SECRET, REACH_TOKEN_TTL_S=120)
    identity = verify_token(
        issue_token("u_1", settings=settings, clock=clock), settings=settings, clock=clock
    )
    assert identity is not None and identity.expires_at == clock.now + 120


@pytest.mark.parametrize(
    ("text", "seconds"), [("90", 90), ("30m", 1800), ("1h", 3600), ("2d", 172800), (" 1.5H ", 5400)]
)
def test_parse_ttl(text, seconds):
    assert parse_ttl(text).total_seconds() == seconds


@pytest.mark.parametrize("text", ["", "0", "-1h", "1w", "h", "1 hour"])
def test_parse_ttl_refuses_nonsense(text):
    with pytest.raises(ValueError):
        parse_ttl(text)


def test_a_short_configured_secret_is_refused(tmp_path):
    with pytest.raises(ValueError, match="at least 32"):
        issue_token("u_1", settings=Settings(REACH_DATA_DIR=tmp_path, REACH_AUTH_SECRET="short"))
