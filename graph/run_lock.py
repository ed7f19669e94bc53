"""One run per thread at a time, across every worker process: a lease in Redis.

LangGraph does not lock a thread. Two workers that continue the same conversation at once
would both read the latest checkpoint, both run a turn from it, and write two branches; the
second write wins and the first turn is lost (or, on a resume, the same confirmation is acted
on twice). ``LockedGraph`` wraps a compiled graph so that a run first takes a lease on its
thread id:

- ``SET key token NX PX ttl`` takes it; the token is random, so only its holder can give it
  back (compare-and-delete in Lua) or extend it (compare-and-``PEXPIRE``).
- A daemon thread renews the lease every third of its TTL while the turn runs, so a long
  turn keeps it and a worker killed mid-turn loses it within one TTL.
- A run that finds the thread busy polls for the lease up to ``wait_s``; if it still cannot
  have it, it answers a structured "still working on your previous message" result instead
  of raising, so a front end shows a sentence and the user may simply send again.

Keys carry the thread id in a hash tag (``reach:runlock:{thread}``), so the lock works on a
Redis Cluster like every other per-thread key.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

from langchain_core.messages import AIMessage
from redis import Redis
from redis.cluster import RedisCluster

from config.clock import Clock
from config.settings import Settings, get_settings
from language import catalog, sentence

_log = logging.getLogger(__name__)

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""

BUSY_TEXT = catalog()["run.busy"]
"""What a run that could not take its thread's lease says, per language (the catalog's
``run.busy``)."""

RedisClient = Redis | RedisCluster


class Busy(TypedDict):
    """Why a run did not happen: another worker is running the same thread."""

    status: Literal["busy"]
    """Always ``busy``."""
    thread_id: str
    """The thread that is busy."""
    waited_s: float
    """How long this run waited for the lease before giving up."""
    retry_after_s: float
    """When the lease expires at the latest, if its holder stops renewing it."""


class BusyResult(TypedDict):
    """The result of a run refused for a busy thread; shaped like a state update."""

    messages: list[AIMessage]
    """One assistant message saying the previous message is still being handled."""
    busy: Busy
    """The machine-readable reason."""


@dataclass
class Lease:
    """A held run lock; renewed in the background until released."""

    client: RedisClient
    key: str
    token: str
    ttl_ms: int
    lost: bool = False
    """Set when a renewal found the lease gone or taken (the turn ran too long unrenewed)."""
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _renewer: threading.Thread | None = field(default=None, repr=False)

    def start_renewing(self) -> None:
        """Renew every third of the TTL from a daemon thread, so a long turn keeps its lease."""
        self._renewer = threading.Thread(
            target=self._renew_loop, name=f"run-lock-renew {self.key}", daemon=True
        )
        self._renewer.start()

    def _renew_loop(self) -> None:
        interval = self.ttl_ms / 3000
        while not self._stop.wait(interval):
            try:
                kept = self.client.eval(_RENEW, 1, self.key, self.token, self.ttl_ms)
            except Exception:  # a Redis blip: try again next interval, the TTL still covers us
                _log.warning("renewing run lock %s failed", self.key, exc_info=True)
                continue
            if not kept:
                self.lost = True
                _log.error("run lock %s was lost while the turn ran", self.key)
                return

    def renew(self) -> bool:
        """Extend the lease once; ``False`` when it is no longer ours."""
        kept = bool(self.client.eval(_RENEW, 1, self.key, self.token, self.ttl_ms))
        self.lost = self.lost or not kept
        return kept

    def release(self) -> bool:
        """Stop renewing and give the lease back if it is still ours."""
        self._stop.set()
        if self._renewer is not None and self._renewer is not threading.current_thread():
            self._renewer.join(timeout=1)
        try:
            return bool(self.client.eval(_RELEASE, 1, self.key, self.token))
        except Exception:  # the TTL frees it anyway; never hide the turn's own result
            _log.warning("releasing run lock %s failed", self.key, exc_info=True)
            return False


class RunLock:
    """Leases on thread ids in Redis."""

    def __init__(
        self,
        client: RedisClient,
        *,
        prefix: str = "reach",
        ttl_s: float = 30.0,
        poll_s: float = 0.02,
        max_poll_s: float = 0.25,
        clock: Clock = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """Use ``client``; a lease lives ``ttl_s`` unless renewed.

        ``poll_s`` is the first retry interval of a waiting run (doubling up to
        ``max_poll_s``); ``clock`` and ``sleep`` are injectable so tests need not wait.
        """
        self.client = client
        self.prefix = prefix
        self.ttl_ms = max(1, int(ttl_s * 1000))
        self.poll_s = poll_s
        self.max_poll_s = max_poll_s
        self._clock = clock
        self._sleep = sleep

    def key(self, thread_id: str) -> str:
        """Return the lock key of ``thread_id`` (hash-tagged for Redis Cluster)."""
        return f"{self.prefix}:runlock:{{{thread_id}}}"

    def try_acquire(self, thread_id: str) -> Lease | None:
        """Take the lease now, or return ``None`` when another run holds it."""
        key, token = self.key(thread_id), uuid.uuid4().hex
        if self.client.set(key, token, nx=True, px=self.ttl_ms):
            return Lease(self.client, key, token, self.ttl_ms)
        return None

    def acquire(self, thread_id: str, *, wait_s: float) -> Lease | None:
        """Take the lease, waiting up to ``wait_s`` for its holder; ``None`` if it never came."""
        deadline = self._clock() + wait_s
        delay = self.poll_s
        while True:
            lease = self.try_acquire(thread_id)
            if lease is not None:
                return lease
            left = deadline - self._clock()
            if left <= 0:
                return None
            self._sleep(min(delay, left))
            delay = min(delay * 2, self.max_poll_s)

    def remaining_s(self, thread_id: str) -> float:
        """Return how long the current lease on ``thread_id`` has left (0 when free)."""
        ms = self.client.pttl(self.key(thread_id))
        return max(0.0, float(ms) / 1000) if isinstance(ms, int) else 0.0


def thread_id_of(config: Any) -> str:
    """Return the thread id of a run config; a run without one cannot be locked."""
    thread = ((config or {}).get("configurable") or {}).get("thread_id")
    if not thread:
        msg = "a locked run needs config['configurable']['thread_id']"
        raise ValueError(msg)
    return str(thread)


class LockedGraph:
    """A compiled graph whose runs take their thread's lease first.

    ``invoke``, ``ainvoke``, ``stream`` and ``astream`` are locked; everything else
    (``get_state``, ``get_state_history``, ``update_state`` ...) is passed through. A run
    that cannot have the lease within ``wait_s`` returns (or, streaming, yields once) a
    ``BusyResult`` instead of raising.
    """

    def __init__(
        self,
        app: Any,
        client: RedisClient,
        *,
        settings: Settings | None = None,
        wait_s: float | None = None,
        ttl_s: float | None = None,
        lock: RunLock | None = None,
    ) -> None:
        """Wrap ``app``; ``wait_s``/``ttl_s`` default to ``REACH_RUN_LOCK_WAIT_S``/``_TTL_S``."""
        settings = settings or get_settings()
        self.app = app
        self.wait_s = settings.run_lock_wait_s if wait_s is None else wait_s
        self.lock = lock or RunLock(
            client, ttl_s=settings.run_lock_ttl_s if ttl_s is None else ttl_s
        )

    @classmethod
    def from_settings(cls, app: Any, settings: Settings | None = None) -> LockedGraph:
        """Wrap ``app`` with a lock on the configured ``REDIS_URL`` (standalone or Cluster)."""
        settings = settings or get_settings()
        if not settings.redis_url:
            msg = "the run lock needs Redis: set REDIS_URL"
            raise ValueError(msg)
        client: RedisClient = (
            RedisCluster.from_url(settings.redis_url)
            if settings.redis_cluster
            else Redis.from_url(settings.redis_url)
        )
        return cls(app, client, settings=settings)

    def __getattr__(self, name: str) -> Any:
        """Pass everything that is not a run to the wrapped graph."""
        return getattr(self.app, name)

    # ---- runs -----------------------------------------------------------------------------

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:  # noqa: A002
        """Run one turn under the thread's lease, or return a ``BusyResult``."""
        thread = thread_id_of(config)
        started = time.monotonic()
        lease = self.lock.acquire(thread, wait_s=self.wait_s)
        if lease is None:
            return self.busy(thread, config, time.monotonic() - started)
        lease.start_renewing()
        try:
            return self.app.invoke(input, config, **kwargs)
        finally:
            self._flush()
            lease.release()

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:  # noqa: A002
        """Run one turn under the thread's lease without blocking the event loop on the wait."""
        thread = thread_id_of(config)
        started = time.monotonic()
        lease = await self._aacquire(thread)
        if lease is None:
            return await asyncio.to_thread(self.busy, thread, config, time.monotonic() - started)
        lease.start_renewing()
        try:
            return await self.app.ainvoke(input, config, **kwargs)
        finally:
            await self._aflush()
            await asyncio.to_thread(lease.release)

    def stream(self, input: Any, config: Any = None, **kwargs: Any) -> Iterator[Any]:  # noqa: A002
        """Stream one turn under the thread's lease, or yield one ``BusyResult``."""
        thread = thread_id_of(config)
        started = time.monotonic()
        lease = self.lock.acquire(thread, wait_s=self.wait_s)
        if lease is None:
            yield self.busy(thread, config, time.monotonic() - started)
            return
        lease.start_renewing()
        try:
            yield from self.app.stream(input, config, **kwargs)
        finally:
            self._flush()
            lease.release()

    async def astream(
        self,
        input: Any,  # noqa: A002
        config: Any = None,
        **kwargs: Any,
    ) -> AsyncIterator[Any]:
        """Stream one turn asynchronously under the thread's lease."""
        thread = thread_id_of(config)
        started = time.monotonic()
        lease = await self._aacquire(thread)
        if lease is None:
            yield await asyncio.to_thread(self.busy, thread, config, time.monotonic() - started)
            return
        lease.start_renewing()
        try:
            async for chunk in self.app.astream(input, config, **kwargs):
                yield chunk
        finally:
            await self._aflush()
            await asyncio.to_thread(lease.release)

    def _flush(self) -> None:
        """Have the turn's writes acknowledged before another worker may take the thread."""
        flush = getattr(getattr(self.app, "checkpointer", None), "flush", None)
        if callable(flush):
            flush()

    async def _aflush(self) -> None:
        """``_flush`` for async runs."""
        aflush = getattr(getattr(self.app, "checkpointer", None), "aflush", None)
        if callable(aflush):
            await aflush()

    async def _aacquire(self, thread: str) -> Lease | None:
        """Poll for the lease with ``asyncio.sleep`` so other threads' turns keep running."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.wait_s
        delay = self.lock.poll_s
        while True:
            lease = await asyncio.to_thread(self.lock.try_acquire, thread)
            if lease is not None:
                return lease
            left = deadline - loop.time()
            if left <= 0:
                return None
            await asyncio.sleep(min(delay, left))
            delay = min(delay * 2, self.lock.max_poll_s)

    def busy(self, thread: str, config: Any, waited_s: float) -> BusyResult:
        """Build the answer of a run that did not get its thread: in the thread's language."""
        language = "zh"
        try:
            snapshot = self.app.get_state(config)
            language = (snapshot.values or {}).get("language") or "zh"
        except Exception:  # a reply must come even if the state cannot be read right now
            _log.warning("reading the language of busy thread %s failed", thread, exc_info=True)
        text = sentence("run.busy", language)
        return {
            "messages": [AIMessage(content=text)],
            "busy": {
                "status": "busy",
                "thread_id": thread,
                "waited_s": round(waited_s, 3),
                "retry_after_s": self.lock.remaining_s(thread),
            },
        }


__all__ = ["BUSY_TEXT", "Busy", "BusyResult", "Lease", "LockedGraph", "RunLock", "thread_id_of"]
