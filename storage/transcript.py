"""The full transcript and protocol log of every thread, append-only, outside the checkpoint.

The checkpointed state keeps only what the next turn needs (recent turns, the last protocol
messages, a running summary); everything older is moved here when the state is compacted
(``nodes.compact``). Checkpoints then stay the same size however long a thread lives, and
``reach trace`` or an auditor can still read every message from here.

Entries are keyed by thread and by a stable key (the message id, or a hash of a protocol
message), and appending is idempotent: a node re-run on replay or resume writes nothing new.
Nothing is ever deleted, so a rollback or a fork of a thread leaves the abandoned branch's
entries in place, in the order they were first written.

Backends: SQLite in the data directory (default), Redis when ``redis_url`` is set (one Lua
call per append, keys hash-tagged by thread so a Redis Cluster keeps a thread on one slot),
and memory for tests.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, Protocol, TypedDict

import orjson
from redis import Redis

from config.limits import JsonObject, dumps_compact
from config.settings import Settings, get_settings
from storage.redis_direct import Direct
from storage.sqlite_files import connect_wal

EntryKind = Literal["message", "protocol"]


class TranscriptEntry(TypedDict):
    """One stored message or protocol message."""

    kind: EntryKind
    """``message`` (a LangChain message as a dict) or ``protocol`` (a protocol message)."""
    key: str
    """The message id, or a content hash for protocol messages; unique within a thread."""
    body: JsonObject
    """The message as JSON-ready data: a LangChain message's dict or a protocol message, each
    with its own keys (this layer is below both, and stores what it is given)."""


class TranscriptStore(Protocol):
    """An append-only log of entries per thread."""

    def append(self, thread_id: str, entries: Sequence[TranscriptEntry]) -> int:
        """Append the entries not stored yet, in order; return how many were new."""
        ...

    def read(self, thread_id: str, kind: EntryKind | None = None) -> list[TranscriptEntry]:
        """Return the thread's entries in the order they were first appended."""
        ...


def entry_key(kind: EntryKind, body: JsonObject) -> str:  # body: as ``TranscriptEntry.body``
    """Return the stable key of an entry: the message id, else a hash of its content.

    The content is the body as compact JSON with sorted keys, written by orjson: the same
    bytes as ``json.dumps(ensure_ascii=False, sort_keys=True, separators=(",", ":"))``, which
    keyed entries before, but for the exponent of a very small or large float, five times
    faster (compaction keys every protocol message it moves here).
    """
    if kind == "message" and body.get("id"):
        return str(body["id"])
    try:
        text = orjson.dumps(body, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    except (orjson.JSONEncodeError, TypeError):  # an int over 64 bits, a lone surrogate
        text = json.dumps(
            body, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str
        ).encode("utf-8", errors="surrogatepass")
    return hashlib.sha256(text).hexdigest()[:32]


def make_entry(kind: EntryKind, body: JsonObject) -> TranscriptEntry:  # body: as above
    """Build an entry with its key."""
    return {"kind": kind, "key": entry_key(kind, body), "body": body}


class MemoryTranscriptStore:
    """In-process store, for tests and single-process use."""

    def __init__(self) -> None:
        """Start empty."""
        self._entries: dict[str, dict[str, TranscriptEntry]] = {}
        self._lock = threading.Lock()

    def append(self, thread_id: str, entries: Sequence[TranscriptEntry]) -> int:
        """Append the new entries (dicts keep insertion order)."""
        with self._lock:
            log = self._entries.setdefault(thread_id, {})
            new = 0
            for entry in entries:
                slot = f"{entry['kind']}:{entry['key']}"
                if slot not in log:
                    log[slot] = json.loads(json.dumps(entry))
                    new += 1
            return new

    def read(self, thread_id: str, kind: EntryKind | None = None) -> list[TranscriptEntry]:
        """Return copies of the thread's entries."""
        with self._lock:
            entries = list(self._entries.get(thread_id, {}).values())
        return [json.loads(json.dumps(entry)) for entry in entries if kind in (None, entry["kind"])]


class SQLiteTranscriptStore:
    """Entries in a SQLite file; safe across threads and processes on one host."""

    def __init__(self, path: str | Path) -> None:
        """Open (creating) the store at ``path``."""
        self._conn = connect_wal(path, synchronous="NORMAL")
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS transcript ("
            " seq INTEGER PRIMARY KEY AUTOINCREMENT, thread_id TEXT NOT NULL,"
            " kind TEXT NOT NULL, key TEXT NOT NULL, body TEXT NOT NULL, written_at REAL NOT NULL,"
            " UNIQUE (thread_id, kind, key))"
        )
        self._lock = threading.Lock()

    def append(self, thread_id: str, entries: Sequence[TranscriptEntry]) -> int:
        """Insert the entries in one transaction; existing keys are left as they are."""
        if not entries:
            return 0
        now = time.time()
        rows = [
            (
                thread_id,
                entry["kind"],
                entry["key"],
                dumps_compact(entry["body"], default=None).decode("utf-8"),
                now,
            )
            for entry in entries
        ]
        with self._lock:
            before = self._conn.total_changes
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.executemany(
                    "INSERT OR IGNORE INTO transcript (thread_id, kind, key, body, written_at)"
                    " VALUES (?, ?, ?, ?, ?)",
                    rows,
                )
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
            return self._conn.total_changes - before

    def read(self, thread_id: str, kind: EntryKind | None = None) -> list[TranscriptEntry]:
        """Return the thread's entries in insertion order."""
        query = "SELECT kind, key, body FROM transcript WHERE thread_id = ?"
        params: tuple[str, ...] = (thread_id,)
        if kind is not None:
            query += " AND kind = ?"
            params = (thread_id, kind)
        with self._lock:
            rows = self._conn.execute(query + " ORDER BY seq", params).fetchall()
        return [{"kind": k, "key": key, "body": json.loads(body)} for k, key, body in rows]

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()


_APPEND = """
local keys = {}
for i = 1, #ARGV, 2 do keys[#keys + 1] = ARGV[i] end
local existing = redis.call('HMGET', KEYS[1], unpack(keys))
local marks, entries, seen = {}, {}, {}
for j = 1, #keys do
  local k = keys[j]
  if not existing[j] and not seen[k] then
    seen[k] = true
    marks[#marks + 1] = k
    marks[#marks + 1] = '1'
    entries[#entries + 1] = ARGV[2 * j]
  end
end
if #entries > 0 then
  redis.call('HSET', KEYS[1], unpack(marks))
  redis.call('RPUSH', KEYS[2], unpack(entries))
end
return #entries
"""
"""Append the entries whose keys the thread has not seen, in order: one ``HMGET`` to look,
one ``HSET`` and one ``RPUSH`` for all of them (a call per entry cost the server 100 µs)."""


class RedisTranscriptStore:
    """Entries in Redis: a list per thread, and a hash of the keys already written."""

    def __init__(self, client: Redis, *, prefix: str = "reach:transcript") -> None:
        """Use ``client``; keys are ``{prefix}:{{thread}}:log`` and ``...:keys``."""
        self._client = client
        self._prefix = prefix
        script = client.register_script(_APPEND)
        self._direct = Direct(client, size=2) if type(client) is Redis else None
        self._script = self._direct.bind(script) if self._direct is not None else script

    def _keys(self, thread_id: str) -> list[str]:
        base = f"{self._prefix}:{{{thread_id}}}"
        return [f"{base}:keys", f"{base}:log"]

    def append(self, thread_id: str, entries: Sequence[TranscriptEntry]) -> int:
        """Append the new entries in one round trip (a Lua script, atomic per thread)."""
        if not entries:
            return 0
        args: list[str | bytes] = []
        for entry in entries:
            args.append(f"{entry['kind']}:{entry['key']}")
            args.append(dumps_compact(entry, default=None))
        return int(self._script(keys=self._keys(thread_id), args=args))

    def read(self, thread_id: str, kind: EntryKind | None = None) -> list[TranscriptEntry]:
        """Return the thread's entries in append order."""
        raw = self._client.lrange(self._keys(thread_id)[1], 0, -1)
        entries: list[TranscriptEntry] = [json.loads(item) for item in raw]
        return [entry for entry in entries if kind in (None, entry["kind"])]


def open_transcript_store(settings: Settings | None = None) -> TranscriptStore:
    """Return the configured store: Redis with ``redis_url``, else SQLite in the data dir."""
    settings = settings or get_settings()
    if settings.redis_url and settings.transcript_store != "sqlite":
        return RedisTranscriptStore(Redis.from_url(settings.redis_url))
    return SQLiteTranscriptStore(settings.data_dir / "transcript.db")


__all__ = [
    "EntryKind",
    "MemoryTranscriptStore",
    "RedisTranscriptStore",
    "SQLiteTranscriptStore",
    "TranscriptEntry",
    "TranscriptStore",
    "entry_key",
    "make_entry",
    "open_transcript_store",
]
