"""Admission and settlement of a call: rate limit, cache and idempotency claim together.

The executor asks three stores before it runs a handler (is the user over the limit? is a
fresh result cached? has this request already happened?) and tells two afterwards (the
outcome; the result to cache). ``LocalAdmission`` composes the separate stores (``limits``,
an in-process cache, SQLite). ``RedisAdmission`` answers all three questions in one pipelined
round trip and records the outcome in another, so a call costs two Redis round trips, not six.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol

from limits import parse
from redis import Redis

from config.clock import Clock
from tools.executor.envelope import ToolResult
from tools.executor.guards import RateLimiter
from tools.executor.stores import (
    DEFAULT_RETENTION_S,
    Claim,
    IdempotencyRecord,
    IdempotencyStore,
    ResultCache,
    await_settled,
)

Outcome = Literal["succeeded", "failed", "release", "keep"]


@dataclass(frozen=True)
class Admitted:
    """What the stores said about a call about to run."""

    allowed: bool
    """False: over the rate limit (the claim, if any, was released)."""
    cached: ToolResult | None
    """A fresh cached result, for idempotent reads."""
    claim: Claim | None
    """The idempotency claim; ``None`` when not allowed."""


class Admission(Protocol):
    """Rate limit, cache and idempotency, asked and told together."""

    def peek(self, request_id: str) -> IdempotencyRecord | None:
        """Return the idempotency record of ``request_id``, if any."""
        ...

    def admit(
        self,
        *,
        rate_rule: str | None,
        user_id: str,
        tool: str,
        cache_key: str | None,
        request_id: str | None,
        fingerprint: str,
    ) -> Admitted:
        """Check the rate limit and the cache, and claim the request id.

        ``request_id`` ``None``: a read, which claims nothing (only writes are deduplicated).
        """
        ...

    def await_claim(self, request_id: str, fingerprint: str, *, timeout_s: float) -> Claim:
        """Wait up to ``timeout_s`` for a pending request id to settle (see ``await_settled``)."""
        ...

    def settle(
        self,
        *,
        request_id: str | None,
        fingerprint: str,
        outcome: Outcome,
        result: ToolResult,
        cache_key: str | None,
        cache_ttl_s: float | None,
    ) -> None:
        """Record the outcome; cache a successful result when asked to.

        ``request_id`` ``None``: a read, of which no record is kept.
        """
        ...


class LocalAdmission:
    """Admission over separate stores: in-process limits and cache, any idempotency store."""

    def __init__(
        self,
        idempotency: IdempotencyStore,
        cache: ResultCache,
        rate_limiter: RateLimiter,
        *,
        monotonic: Clock = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """Compose the three stores; ``monotonic``/``sleep`` time the in-flight wait."""
        self.idempotency = idempotency
        self.cache = cache
        self.rate_limiter = rate_limiter
        self._monotonic = monotonic
        self._sleep = sleep

    def await_claim(self, request_id: str, fingerprint: str, *, timeout_s: float) -> Claim:
        """Poll the idempotency store until the holder settles (SQLite: across processes)."""
        return await_settled(
            request_id,
            fingerprint,
            timeout_s=timeout_s,
            peek=self.idempotency.peek,
            claim=self.idempotency.claim,
            clock=self._monotonic,
            sleep=self._sleep,
        )

    def peek(self, request_id: str) -> IdempotencyRecord | None:
        """Return the idempotency record."""
        return self.idempotency.peek(request_id)

    def admit(
        self,
        *,
        rate_rule: str | None,
        user_id: str,
        tool: str,
        cache_key: str | None,
        request_id: str | None,
        fingerprint: str,
    ) -> Admitted:
        """Ask each store in turn."""
        if not self.rate_limiter.hit(rate_rule, user_id, tool):
            return Admitted(allowed=False, cached=None, claim=None)
        cached = self.cache.get(cache_key) if cache_key else None
        claim = self.idempotency.claim(request_id, fingerprint) if request_id else None
        return Admitted(allowed=True, cached=cached, claim=claim)

    def settle(
        self,
        *,
        request_id: str | None,
        fingerprint: str,
        outcome: Outcome,
        result: ToolResult,
        cache_key: str | None,
        cache_ttl_s: float | None,
    ) -> None:
        """Tell each store."""
        if request_id is None:
            pass  # a read: nothing was claimed
        elif outcome in ("succeeded", "failed"):
            self.idempotency.complete(request_id, outcome, result)
        elif outcome == "release":
            self.idempotency.release(request_id)
        if outcome == "succeeded" and cache_key and cache_ttl_s:
            self.cache.put(cache_key, result, cache_ttl_s)


class RedisAdmission:
    """Admission in Redis, shared by every process: one round trip in, one out.

    The rate limit is a moving window over a sorted set per user and tool, written in the
    same pipeline as the cache read and the ``SET NX GET`` claim. ``limits`` would need its
    own round trip, so this one is hand-written; it counts a refused call, as a moving
    window that refuses early should.
    """

    def __init__(
        self,
        client: Redis,
        *,
        prefix: str = "reach",
        retention_s: float = DEFAULT_RETENTION_S,
        clock: Clock = time.time,
        monotonic: Clock = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """Use ``client``; idempotency records live ``retention_s``.

        ``clock`` stamps rate-window entries; it must be wall time shared by every process
        that counts against the same Redis (a fake one only in tests). ``monotonic`` and
        ``sleep`` time the wait for a request id another process holds.
        """
        self.client = client
        self._clock = clock
        self._monotonic = monotonic
        self._sleep = sleep
        self.prefix = prefix
        self.retention_ms = int(retention_s * 1000)

    def _idem(self, request_id: str) -> str:
        return f"{self.prefix}:idem:{{{request_id}}}"

    def _cache(self, key: str) -> str:
        return f"{self.prefix}:cache:{key}"

    def _rate(self, user_id: str, tool: str) -> str:
        return f"{self.prefix}:rate:{{{user_id}}}:{tool}"

    def peek(self, request_id: str) -> IdempotencyRecord | None:
        """Return the idempotency record."""
        raw = self.client.get(self._idem(request_id))
        return None if raw is None else _decode(request_id, raw)

    def claim(self, request_id: str, fingerprint: str) -> Claim:
        """Create the pending record with ``SET NX GET``, or return the one that exists."""
        pending = json.dumps({"fingerprint": fingerprint, "state": "pending", "result": None})
        key = self._idem(request_id)
        old = self.client.set(key, pending, nx=True, px=self.retention_ms, get=True)
        if old is None:
            return Claim(acquired=True, record=None)
        assert isinstance(old, bytes | str)  # SET ... GET answers the old value
        return Claim(acquired=False, record=_decode(request_id, old))

    def await_claim(self, request_id: str, fingerprint: str, *, timeout_s: float) -> Claim:
        """Poll the shared record until the process holding it settles (one GET per poll).

        Polling, not pub/sub: the wait only happens when two runs race for one request id,
        and a GET works the same on a standalone server and a Cluster.
        """
        return await_settled(
            request_id,
            fingerprint,
            timeout_s=timeout_s,
            peek=self.peek,
            claim=self.claim,
            clock=self._monotonic,
            sleep=self._sleep,
        )

    def admit(
        self,
        *,
        rate_rule: str | None,
        user_id: str,
        tool: str,
        cache_key: str | None,
        request_id: str | None,
        fingerprint: str,
    ) -> Admitted:
        """Rate limit, cache read and claim in one pipelined round trip (a read: no claim)."""
        pipe = self.client.pipeline(transaction=False)
        limit = None
        if rate_rule:
            limit = parse(rate_rule)
            window_ms = limit.get_expiry() * 1000
            now_ms = self._clock() * 1000
            key = self._rate(user_id, tool)
            pipe.zremrangebyscore(key, 0, now_ms - window_ms)
            pipe.zadd(key, {uuid.uuid4().hex: now_ms})
            pipe.zcard(key)
            pipe.pexpire(key, int(window_ms))
        if cache_key:
            pipe.get(self._cache(cache_key))
        if request_id is not None:
            pending = json.dumps({"fingerprint": fingerprint, "state": "pending", "result": None})
            pipe.set(self._idem(request_id), pending, nx=True, px=self.retention_ms, get=True)
        if limit is None and not cache_key and request_id is None:
            return Admitted(allowed=True, cached=None, claim=None)  # a plain read: no trip
        replies = pipe.execute()
        offset = 4 if limit is not None else 0
        cached_raw = replies[offset] if cache_key else None
        claim: Claim | None = None
        if request_id is not None:
            old = replies[-1]
            claim = (
                Claim(acquired=True, record=None)
                if old is None
                else Claim(acquired=False, record=_decode(request_id, old))
            )
        if limit is not None and replies[2] > limit.amount:
            if claim is not None and claim.acquired and request_id is not None:
                self.client.delete(self._idem(request_id))
            return Admitted(allowed=False, cached=None, claim=None)
        cached = json.loads(cached_raw) if cached_raw else None
        return Admitted(allowed=True, cached=cached, claim=claim)

    def settle(
        self,
        *,
        request_id: str | None,
        fingerprint: str,
        outcome: Outcome,
        result: ToolResult,
        cache_key: str | None,
        cache_ttl_s: float | None,
    ) -> None:
        """Record the outcome (and cache a success) in one pipelined round trip."""
        if outcome == "keep":
            return
        cached = outcome == "succeeded" and bool(cache_key) and bool(cache_ttl_s)
        if request_id is None and not cached:
            return  # a read: nothing claimed, nothing to cache
        pipe = self.client.pipeline(transaction=False)
        if request_id is None:
            pass
        elif outcome == "release":
            pipe.delete(self._idem(request_id))
        else:
            body = {"fingerprint": fingerprint, "state": outcome, "result": result}
            pipe.set(
                self._idem(request_id), json.dumps(body, ensure_ascii=False), px=self.retention_ms
            )
        if outcome == "succeeded" and cache_key and cache_ttl_s:
            pipe.set(
                self._cache(cache_key),
                json.dumps(result, ensure_ascii=False),
                px=int(cache_ttl_s * 1000),
            )
        pipe.execute()


def _decode(request_id: str, raw: bytes | str) -> IdempotencyRecord:
    body = json.loads(raw)
    return IdempotencyRecord(request_id, body["fingerprint"], body["state"], body["result"])
