"""State the executor keeps outside the checkpoint: idempotency records and cached results.

The idempotency record is what makes a side effect happen once. It lives outside LangGraph's
checkpoint on purpose: a node re-run on resume or replay, or after a crash between the
handler and the checkpoint write, finds the record and answers with the stored result.

Backends: SQLite in the data directory (default) and memory for tests; with Redis,
``tools.executor.admission.RedisAdmission`` keeps these records together with the cache and limits.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from config.clock import Clock
from storage.sqlite_files import connect_wal
from tools.executor.envelope import ToolResult

RecordState = Literal["pending", "succeeded", "failed"]
DEFAULT_RETENTION_S = 24 * 3600


@dataclass(frozen=True)
class IdempotencyRecord:
    """What is known about one request id."""

    request_id: str
    """The call's deterministic id (or the caller's idempotency key)."""
    fingerprint: str
    """Hash of tool and canonical arguments, to catch a key reused for other arguments."""
    state: RecordState
    """pending while the handler runs; then succeeded or failed."""
    result: ToolResult | None
    """The stored envelope once finished."""


@dataclass(frozen=True)
class Claim:
    """The outcome of trying to start a request."""

    acquired: bool
    """True: this caller owns the request and must run it and ``complete`` it."""
    record: IdempotencyRecord | None
    """The existing record when not acquired."""


def await_settled(
    request_id: str,
    fingerprint: str,
    *,
    timeout_s: float,
    peek: Callable[[str], IdempotencyRecord | None],
    claim: Callable[[str, str], Claim],
    clock: Clock = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    poll_s: float = 0.01,
    max_poll_s: float = 0.2,
) -> Claim:
    """Wait for a request another run holds (``pending``) to settle, up to ``timeout_s``.

    Why: two runs can reach the same request id at once (two workers resuming one
    confirmation, a replica retrying). The loser must not answer "nothing happened" while
    the winner is moving the money; it waits for the winner's outcome and answers with it.

    Returns a ``Claim``: not acquired with the final record (answer with its result); not
    acquired with the still-pending record (the outcome is unknown so far: say it is being
    processed); or acquired, when the holder released the id because its call did not
    happen, so this caller now owns it and runs the call itself. Polls with doubling
    intervals; ``clock`` and ``sleep`` are injectable.
    """
    deadline = clock() + timeout_s
    delay = poll_s
    while True:
        record = peek(request_id)
        if record is None:  # released: the holder's call did not happen
            taken = claim(request_id, fingerprint)
            if taken.acquired or taken.record is None or taken.record.state != "pending":
                return taken
            record = taken.record
        if record.state != "pending":
            return Claim(acquired=False, record=record)
        left = deadline - clock()
        if left <= 0:
            return Claim(acquired=False, record=record)
        sleep(min(delay, left))
        delay = min(delay * 2, max_poll_s)


class IdempotencyStore(Protocol):
    """Records request ids as pending → succeeded / failed, with the stored result."""

    def peek(self, request_id: str) -> IdempotencyRecord | None:
        """Return the record of ``request_id``, if any."""
        ...

    def claim(self, request_id: str, fingerprint: str) -> Claim:
        """Atomically create a pending record, or return the one that exists."""
        ...

    def complete(
        self, request_id: str, state: Literal["succeeded", "failed"], result: ToolResult
    ) -> None:
        """Store the final state and result."""
        ...

    def release(self, request_id: str) -> None:
        """Forget a pending record whose call did not happen, so it may be tried again."""
        ...


class MemoryIdempotencyStore:
    """In-process store for tests and single-process use."""

    def __init__(
        self, retention_s: float = DEFAULT_RETENTION_S, *, clock: Clock = time.time
    ) -> None:
        """Keep records for ``retention_s`` seconds, as ``clock`` counts them."""
        self.retention_s = retention_s
        self._clock = clock
        self._records: dict[str, tuple[float, IdempotencyRecord]] = {}
        self._lock = threading.Lock()

    def peek(self, request_id: str) -> IdempotencyRecord | None:
        """Return the live record of ``request_id``."""
        with self._lock:
            found = self._records.get(request_id)
            if found is None or found[0] < self._clock():
                return None
            return found[1]

    def claim(self, request_id: str, fingerprint: str) -> Claim:
        """Create a pending record unless a live one exists."""
        with self._lock:
            now = self._clock()
            found = self._records.get(request_id)
            if found is not None and found[0] >= now:
                return Claim(acquired=False, record=found[1])
            record = IdempotencyRecord(request_id, fingerprint, "pending", None)
            self._records[request_id] = (now + self.retention_s, record)
            return Claim(acquired=True, record=None)

    def complete(
        self, request_id: str, state: Literal["succeeded", "failed"], result: ToolResult
    ) -> None:
        """Store the outcome."""
        with self._lock:
            expires, record = self._records[request_id]
            self._records[request_id] = (
                expires,
                IdempotencyRecord(request_id, record.fingerprint, state, result),
            )

    def release(self, request_id: str) -> None:
        """Drop a pending record."""
        with self._lock:
            self._records.pop(request_id, None)


class SQLiteIdempotencyStore:
    """Idempotency records in a SQLite file; safe across threads and processes."""

    def __init__(
        self,
        path: str | Path,
        retention_s: float = DEFAULT_RETENTION_S,
        *,
        clock: Clock = time.time,
    ) -> None:
        """Open (creating) the store at ``path``; expiry times are wall-clock ``clock`` values.

        The clock must be the same in every process that shares the file, hence wall time.
        """
        self.retention_s = retention_s
        self._clock = clock
        # WAL with synchronous=NORMAL survives a process crash (the case that matters
        # here: a node dying mid-call); only an OS crash could lose the last commit.
        self._conn = connect_wal(path, synchronous="NORMAL")
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS idempotency ("
            " request_id TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, state TEXT NOT NULL,"
            " result TEXT, expires_at REAL NOT NULL)"
        )
        self._lock = threading.Lock()

    def peek(self, request_id: str) -> IdempotencyRecord | None:
        """Return the live record of ``request_id``."""
        with self._lock:
            row = self._conn.execute(
                "SELECT fingerprint, state, result FROM idempotency"
                " WHERE request_id = ? AND expires_at >= ?",
                (request_id, self._clock()),
            ).fetchone()
        return None if row is None else _record(request_id, *row)

    def claim(self, request_id: str, fingerprint: str) -> Claim:
        """Create a pending record in one transaction, or return the live one."""
        now = self._clock()
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.execute(
                    "DELETE FROM idempotency WHERE request_id = ? AND expires_at < ?",
                    (request_id, now),
                )
                inserted = self._conn.execute(
                    "INSERT OR IGNORE INTO idempotency VALUES (?, ?, 'pending', NULL, ?)",
                    (request_id, fingerprint, now + self.retention_s),
                ).rowcount
                row = None
                if not inserted:
                    row = self._conn.execute(
                        "SELECT fingerprint, state, result FROM idempotency WHERE request_id = ?",
                        (request_id,),
                    ).fetchone()
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
        if inserted or row is None:
            return Claim(acquired=True, record=None)
        return Claim(acquired=False, record=_record(request_id, *row))

    def complete(
        self, request_id: str, state: Literal["succeeded", "failed"], result: ToolResult
    ) -> None:
        """Store the outcome."""
        with self._lock:
            self._conn.execute(
                "UPDATE idempotency SET state = ?, result = ? WHERE request_id = ?",
                (state, json.dumps(result, ensure_ascii=False), request_id),
            )

    def release(self, request_id: str) -> None:
        """Drop a pending record."""
        with self._lock:
            self._conn.execute(
                "DELETE FROM idempotency WHERE request_id = ? AND state = 'pending'", (request_id,)
            )

    def purge_expired(self) -> int:
        """Delete expired records; return how many."""
        with self._lock:
            return self._conn.execute(
                "DELETE FROM idempotency WHERE expires_at < ?", (self._clock(),)
            ).rowcount


def _record(request_id: str, fingerprint: str, state: str, result: str | None) -> IdempotencyRecord:
    return IdempotencyRecord(
        request_id,
        fingerprint,
        state,  # type: ignore[arg-type]
        json.loads(result) if result else None,
    )


class ResultCache(Protocol):
    """Cached results of idempotent read tools."""

    def get(self, key: str) -> ToolResult | None:
        """Return a cached envelope, if fresh."""
        ...

    def put(self, key: str, value: ToolResult, ttl_s: float) -> None:
        """Cache ``value`` for ``ttl_s`` seconds."""
        ...


class MemoryResultCache:
    """In-process cache with a TTL per entry; when it is full, the oldest put makes room.

    A dict of ``key → (expiry, result)``: cachetools' time-aware LRU kept a heap and a linked
    list in Python, and a cache hit cost more than the tool call it saved (1.6 % of a turn).
    """

    def __init__(self, maxsize: int = 4096, *, clock: Clock = time.monotonic) -> None:
        """Hold at most ``maxsize`` results; ``clock`` times their expiry."""
        self.maxsize = maxsize
        self._clock = clock
        self._entries: dict[str, tuple[float, ToolResult]] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> ToolResult | None:
        """Return a fresh cached result."""
        found = self._entries.get(key)
        if found is None:
            return None
        if self._clock() < found[0]:
            return found[1]
        with self._lock:
            if self._entries.get(key) is found:
                del self._entries[key]
        return None

    def put(self, key: str, value: ToolResult, ttl_s: float) -> None:
        """Cache a result for ``ttl_s`` seconds."""
        expires = self._clock() + ttl_s
        with self._lock:
            self._entries.pop(key, None)
            while len(self._entries) >= self.maxsize:  # the oldest put goes: O(1), no scan
                del self._entries[next(iter(self._entries))]
            self._entries[key] = (expires, value)
