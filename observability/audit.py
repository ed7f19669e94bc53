"""The audit trail: one structured record per tool call or trace point, written off the hot path.

Records go onto a queue; a background thread appends them as JSON lines and hands them to
the sinks (metrics, a Redis stream). The executor never waits for the disk or the network.

Two kinds of records share the log:

* the executor's record of every tool call (``kind: "tool_call"``, added here when absent);
* the trace records of the four decision points of a task (``intent``, ``arguments``,
  ``execution``, ``answer``) and of turns and nodes, written by
  ``observability.trace_callbacks.TraceRecorder``.

All of them are masked (``security.pii.mask_pii``) before they are queued, so no identifier
reaches the file, the stream or a metric label.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeAlias

from config.limits import JsonObject, dumps_compact
from config.settings import get_settings
from observability import tracing
from observability.metrics import default_metrics
from observability.records import AuditRecord
from security.pii import mask_pii

_log = logging.getLogger(__name__)

Sink = Callable[[AuditRecord], None]
"""Receives every masked record, on the writer thread, after it is on disk."""

_Item: TypeAlias = AuditRecord | list[AuditRecord] | threading.Event | None
"""What the writer thread takes: a record, a batch, a flush marker, or ``None`` to stop."""

IDLE_CLOSE_S = 2.0
"""The writer closes the file after this long without records, and opens it on the next."""

_FILE_LOCKS: dict[Path, threading.Lock] = {}
_FILE_LOCKS_GUARD = threading.Lock()


def _write_all(fd: int, data: bytes) -> None:
    """Write all of ``data``: one ``write`` with ``O_APPEND`` keeps a batch's lines together."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _file_lock(path: Path) -> threading.Lock:
    """Return one lock per file, so two logs on the same path never interleave a line."""
    key = path.resolve()
    with _FILE_LOCKS_GUARD:
        return _FILE_LOCKS.setdefault(key, threading.Lock())


class AuditLog:
    """Append-only JSONL audit log with a background writer and optional sinks."""

    def __init__(
        self, path: str | Path | None = None, *, sinks: Sequence[Sink] | None = None
    ) -> None:
        """Write to ``path``; with ``None`` records are kept in memory only (tests).

        Args:
            path: The JSON-lines file; ``None`` keeps records in ``records`` only.
            sinks: Called with each record after it is written. ``None`` means the
                defaults for a file-backed log: the process's metrics and, when Redis is
                configured, the trace stream (``default_sinks``); an in-memory log has none.
        """
        self.path = Path(path) if path is not None else None
        # resolved once: resolving and creating the directory on every batch were a third
        # of the writer thread's time
        self._file_lock = _file_lock(self.path) if self.path is not None else threading.Lock()
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd: int | None = None
        self.records: list[AuditRecord] = []
        if sinks is None:
            sinks = default_sinks() if self.path is not None else ()
        self.sinks: list[Sink] = list(sinks)
        self._queue: queue.Queue[_Item] = queue.Queue()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, name="reach-audit", daemon=True)
        self._thread.start()

    def write(self, record: AuditRecord) -> None:
        """Queue a record; masking happens here so no identifier reaches the file."""
        self._queue.put(self._masked(record))

    def write_many(self, records: Sequence[AuditRecord]) -> None:
        """Queue several records at once: the writer thread wakes once for all of them.

        Each wake-up costs the caller the GIL for a while; a turn's trace written record
        by record cost more than the rest of the tracing.
        """
        if records:
            self._queue.put([self._masked(record) for record in records])

    def _masked(self, record: AuditRecord) -> AuditRecord:
        masked: AuditRecord = mask_pii(record)  # the same object when it is clean
        if "kind" not in masked or "ts" not in masked:
            # a copy (the caller's record stays as it was), keys in the same order; mypy
            # cannot follow a spread of a union of TypedDicts: the result is the same kind
            masked = {  # type: ignore[assignment]
                **masked,
                "kind": masked.get("kind", "tool_call"),
                "ts": masked.get("ts", time.time()),
            }
        if masked.get("kind") == "tool_call":
            # the span needs its parent node, which is open only now, on the caller's thread
            tracing.tool_span_from_record(masked)
        return masked

    def _file(self, path: Path) -> int:
        """Return a descriptor appending to ``path``, opening it again if it was moved.

        Opening the file for every batch was a tenth of the writer's time. A descriptor kept
        open would write into a file that was rotated or removed, so each batch compares the
        path's inode with the descriptor's (one ``stat``) and reopens on a difference,
        making the directory again if it is gone.
        """
        if self._fd is not None:
            try:
                on_disk = os.stat(path)
            except FileNotFoundError:
                on_disk = None
            held = os.fstat(self._fd)
            if on_disk is not None and (on_disk.st_dev, on_disk.st_ino) == (
                held.st_dev,
                held.st_ino,
            ):
                return self._fd
            self._release_file()
        try:
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except FileNotFoundError:  # the directory was removed since: make it again
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        return self._fd

    def _release_file(self) -> None:
        # only the writer thread touches the descriptor: no lock
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def add_sink(self, sink: Sink) -> None:
        """Hand every later record to ``sink`` too."""
        self.sinks.append(sink)

    def flush(self, timeout_s: float = 5.0) -> None:
        """Wait until every queued record is written and passed to the sinks."""
        done = threading.Event()
        self._queue.put(done)
        done.wait(timeout_s)

    def close(self, timeout_s: float = 5.0) -> None:
        """Write what is queued and stop the writer thread."""
        self._queue.put(None)
        self._thread.join(timeout_s)

    def _next(self) -> _Item:
        """Wait for the next item; let go of the file while nothing comes."""
        try:
            return self._queue.get(timeout=IDLE_CLOSE_S)
        except queue.Empty:
            self._release_file()
            return self._queue.get()

    def _drain(self) -> None:
        try:
            self._drain_until_closed()
        finally:
            self._release_file()

    def _drain_until_closed(self) -> None:
        while True:
            batch = [self._next()]
            while len(batch) < 512:  # whatever else is queued goes out in the same write
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            records: list[AuditRecord] = []
            stop = False
            markers: list[threading.Event] = []
            for item in batch:
                if item is None:
                    stop = True
                    break
                if isinstance(item, list):
                    records.extend(item)
                elif isinstance(item, threading.Event):
                    markers.append(item)
                else:
                    records.append(item)
            self._store(records)
            for marker in markers:
                marker.set()
            if stop:
                return

    def _store(self, records: list[AuditRecord]) -> None:
        if not records:
            return
        with self._lock:
            self.records.extend(records)
            if len(self.records) > 10_000:
                del self.records[:5_000]
        if self.path is not None:
            lines = b"".join(dumps_compact(record) + b"\n" for record in records)
            with self._file_lock:
                _write_all(self._file(self.path), lines)
        for record in records:
            for sink in self.sinks:
                try:
                    sink(record)
                except Exception:  # a failing sink (Redis down) must not stop the audit
                    _log.exception("audit sink %r failed", sink)


# ---- the Redis stream ----------------------------------------------------------------------


class StreamClient(Protocol):
    """The part of ``redis.Redis`` the stream writer and reader use."""

    def xadd(self, name: Any, fields: Any, *args: Any, **kwargs: Any) -> Any:
        """Append an entry."""
        ...

    def xrange(self, name: Any, *args: Any, **kwargs: Any) -> Any:
        """Read entries in id order."""
        ...


class RedisStreamSink:
    """Append each record to a capped Redis stream (``XADD ... MAXLEN ~ n``).

    One stream holds every thread; each entry carries ``session_id`` and ``kind`` as
    fields next to the JSON record, so a reader can filter without decoding everything.
    """

    def __init__(self, client: StreamClient, stream: str = "reach:audit", maxlen: int = 100_000):
        """Write to ``stream`` through ``client``, trimming it to about ``maxlen`` entries."""
        self.client = client
        self.stream = stream
        self.maxlen = maxlen

    def __call__(self, record: AuditRecord) -> None:
        """Append ``record``."""
        self.client.xadd(
            self.stream,
            {
                "session_id": str(record.get("session_id") or ""),
                "kind": str(record.get("kind") or ""),
                "record": json.dumps(record, ensure_ascii=False, default=str),
            },
            maxlen=self.maxlen,
            approximate=True,
        )

    def __repr__(self) -> str:
        """Name the stream in logs."""
        return f"RedisStreamSink({self.stream!r})"


def read_stream(
    client: StreamClient, stream: str = "reach:audit", *, session_id: str | None = None
) -> list[JsonObject]:  # records read back: whatever a writer of any version put there
    """Return the records of ``stream`` in order, only ``session_id``'s when given."""
    records: list[JsonObject] = []  # read back: free-form
    start = "-"
    while True:
        batch = client.xrange(stream, min=start, max="+", count=1000)
        if not batch:
            return records
        for entry_id, fields in batch:
            decoded = {_text(k): _text(v) for k, v in fields.items()}
            if session_id is not None and decoded.get("session_id") != session_id:
                continue
            try:
                records.append(json.loads(decoded["record"]))
            except (KeyError, ValueError):
                _log.warning("skipping malformed stream entry %s", _text(entry_id))
        if len(batch) < 1000:
            return records
        start = "(" + _text(batch[-1][0])


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


# ---- reading the file ----------------------------------------------------------------------


def iter_jsonl(path: str | Path) -> Iterator[JsonObject]:  # lines read back: free-form
    """Yield the records of a JSON-lines log, skipping a torn or foreign line."""
    file = Path(path)
    if not file.exists():
        return
    with file.open(encoding="utf-8") as lines:
        for line in lines:
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line being written by another process right now
            if isinstance(record, dict):
                yield record


def read_jsonl(
    path: str | Path, *, session_id: str | None = None
) -> list[JsonObject]:  # lines read back: free-form
    """Return the records of a JSON-lines log, only ``session_id``'s when given."""
    return [
        record
        for record in iter_jsonl(path)
        if session_id is None or record.get("session_id") == session_id
    ]


# ---- defaults from the settings ------------------------------------------------------------


def default_audit_path() -> Path:
    """Return the configured log path (``REACH_AUDIT_PATH``, else the data dir's).

    Touches no file (the writer thread creates the directory), so it is safe to call on an
    event loop.
    """
    settings = get_settings()
    return settings.audit_path or settings.data_dir / "audit.jsonl"


def default_stream_sink() -> RedisStreamSink | None:
    """Return the Redis stream sink when Redis and the stream are configured."""
    settings = get_settings()
    if not settings.redis_url or not settings.trace_stream:
        return None
    # redis-py costs a noticeable import; only deployments that configured it pay for it
    from redis import Redis  # noqa: PLC0415 - optional, heavy: only with REDIS_URL set

    client = Redis.from_url(settings.redis_url, socket_timeout=2.0)
    return RedisStreamSink(client, settings.trace_stream, settings.trace_stream_maxlen)


def default_sinks() -> list[Sink]:
    """Return the sinks of a file-backed log: process metrics, and the stream if configured."""
    sinks: list[Sink] = [default_metrics().observe]
    stream = default_stream_sink()
    if stream is not None:
        sinks.append(stream)
    return sinks


__all__ = [
    "AuditLog",
    "RedisStreamSink",
    "Sink",
    "default_audit_path",
    "default_sinks",
    "default_stream_sink",
    "iter_jsonl",
    "read_jsonl",
    "read_stream",
]
