"""A tiny shared key-value store for state every worker must see (tool lifecycle, plans).

Two implementations of one protocol: SQLite in the data directory for a single host, Redis
when ``redis_url`` is configured. Values are JSON objects; keys live in a namespace so the
lifecycle and the plan cache can share one database file or one Redis without clashing.

The stores are generic in the record they hold (``V``): the store only writes and reads JSON,
the namespace's owner says what shape its values have (``tools.registry.lifecycle``'s status
records and pins, ``planning.plans``' learned plans).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from redis import Redis

from config.limits import dumps_compact
from storage.sqlite_files import connect_wal

V = TypeVar("V", bound=Mapping[str, Any])
"""The records a store holds: JSON objects of one shape (or a union its owner tells apart)."""


class KeyValueStore(Protocol[V]):
    """JSON objects by string key, within one namespace."""

    def get(self, key: str) -> V | None:
        """Return the value at ``key``, if any."""
        ...

    def put(self, key: str, value: V) -> None:
        """Store ``value`` at ``key``, replacing what was there."""
        ...

    def delete(self, key: str) -> bool:
        """Remove ``key``; tell whether it existed."""
        ...

    def items(self, prefix: str = "") -> dict[str, V]:
        """Return every key starting with ``prefix`` and its value."""
        ...

    def put_if_absent(self, key: str, value: V) -> V:
        """Store ``value`` unless ``key`` has one; return what is stored now (one round trip)."""
        ...

    def delete_many(self, keys: list[str]) -> int:
        """Remove ``keys`` in one round trip; return how many existed."""
        ...


class MemoryKV(Generic[V]):
    """In-process store, the default when nothing is configured (tests, notebooks)."""

    def __init__(self) -> None:
        """Start empty."""
        self._data: dict[str, V] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> V | None:
        """Return a copy of the value, so callers cannot change the store by accident."""
        with self._lock:
            value = self._data.get(key)
            return None if value is None else json.loads(json.dumps(value))

    def put(self, key: str, value: V) -> None:
        """Store a JSON round-tripped copy, refusing what would not survive SQLite or Redis."""
        with self._lock:
            self._data[key] = json.loads(json.dumps(value))

    def delete(self, key: str) -> bool:
        """Remove ``key``."""
        with self._lock:
            return self._data.pop(key, None) is not None

    def put_if_absent(self, key: str, value: V) -> V:
        """Store ``value`` unless ``key`` has one; return a copy of what is stored."""
        with self._lock:
            stored = self._data.setdefault(key, json.loads(json.dumps(value)))
            return json.loads(json.dumps(stored))

    def delete_many(self, keys: list[str]) -> int:
        """Remove ``keys``."""
        with self._lock:
            return sum(self._data.pop(key, None) is not None for key in keys)

    def items(self, prefix: str = "") -> dict[str, V]:
        """Return matching entries (copies)."""
        with self._lock:
            return {
                k: json.loads(json.dumps(v)) for k, v in self._data.items() if k.startswith(prefix)
            }


class SQLiteKV(Generic[V]):
    """One table ``kv(namespace, key, value)`` in a SQLite file; safe across processes."""

    def __init__(self, path: str | Path, namespace: str) -> None:
        """Open (creating) the file and the table."""
        self.namespace = namespace
        # lifecycle states, pins and plans: a process crash keeps every commit; only a
        # power loss could drop the last few, and none of them is a side effect
        self._conn = connect_wal(path, synchronous="NORMAL")
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS kv (namespace TEXT NOT NULL, key TEXT NOT NULL,"
            " value TEXT NOT NULL, PRIMARY KEY (namespace, key))"
        )
        self._lock = threading.Lock()

    def get(self, key: str) -> V | None:
        """Return the value at ``key``."""
        with self._lock:
            row = self._conn.execute(
                "SELECT value FROM kv WHERE namespace = ? AND key = ?", (self.namespace, key)
            ).fetchone()
        return None if row is None else json.loads(row[0])

    def put(self, key: str, value: V) -> None:
        """Upsert ``value``."""
        with self._lock:
            self._conn.execute(
                "INSERT INTO kv (namespace, key, value) VALUES (?, ?, ?)"
                " ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value",
                (self.namespace, key, dumps_compact(value, default=None).decode("utf-8")),
            )

    def delete(self, key: str) -> bool:
        """Remove ``key``."""
        with self._lock:
            cursor = self._conn.execute(
                "DELETE FROM kv WHERE namespace = ? AND key = ?", (self.namespace, key)
            )
        return cursor.rowcount > 0

    def put_if_absent(self, key: str, value: V) -> V:
        """Insert ``value`` unless ``key`` exists; one statement returns what is stored."""
        with self._lock:
            row = self._conn.execute(
                "INSERT INTO kv (namespace, key, value) VALUES (?, ?, ?)"
                " ON CONFLICT (namespace, key) DO UPDATE SET value = kv.value RETURNING value",
                (self.namespace, key, dumps_compact(value, default=None).decode("utf-8")),
            ).fetchone()
        return json.loads(row[0])

    def delete_many(self, keys: list[str]) -> int:
        """Remove ``keys`` in one statement."""
        if not keys:
            return 0
        marks = ",".join("?" * len(keys))
        with self._lock:
            cursor = self._conn.execute(
                f"DELETE FROM kv WHERE namespace = ? AND key IN ({marks})",  # noqa: S608
                (self.namespace, *keys),
            )
        return cursor.rowcount

    def items(self, prefix: str = "") -> dict[str, V]:
        """Return matching entries, by key order."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT key, value FROM kv WHERE namespace = ? AND substr(key, 1, ?) = ?"
                " ORDER BY key",
                (self.namespace, len(prefix), prefix),
            ).fetchall()
        return {str(k): json.loads(v) for k, v in rows}

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()


class RedisKV(Generic[V]):
    """One Redis hash per namespace (``reach:kv:<namespace>``), so a listing is one HGETALL."""

    def __init__(self, client: Redis, namespace: str) -> None:
        """Use ``client`` (decode_responses either way)."""
        self.client = client
        self.key = f"reach:kv:{namespace}"

    def get(self, key: str) -> V | None:
        """Return the value at ``key``."""
        raw = self.client.hget(self.key, key)
        return None if raw is None else json.loads(raw)

    def put(self, key: str, value: V) -> None:
        """Store ``value``."""
        self.client.hset(self.key, key, json.dumps(value, ensure_ascii=False))

    def delete(self, key: str) -> bool:
        """Remove ``key``."""
        return bool(self.client.hdel(self.key, key))

    def put_if_absent(self, key: str, value: V) -> V:
        """HSETNX then HGET, pipelined in one round trip."""
        pipe = self.client.pipeline(transaction=True)
        pipe.hsetnx(self.key, key, json.dumps(value, ensure_ascii=False))
        pipe.hget(self.key, key)
        _, raw = pipe.execute()
        return json.loads(raw)

    def delete_many(self, keys: list[str]) -> int:
        """One HDEL of every field."""
        return int(self.client.hdel(self.key, *keys)) if keys else 0

    def items(self, prefix: str = "") -> dict[str, V]:
        """Return matching entries, by key order."""
        raw = self.client.hgetall(self.key)
        out: dict[str, V] = {}
        for k, v in raw.items():
            key = k.decode() if isinstance(k, bytes) else str(k)
            if key.startswith(prefix):
                out[key] = json.loads(v)
        return dict(sorted(out.items()))
