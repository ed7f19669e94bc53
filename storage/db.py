"""The business database: a real SQLite file, created and seeded on first use.

Every query is parameterized. The core tables (users, the identity vault, notifications,
oversized payloads) are here; each scenario brings its own tables and demo rows as a
``Seed``, applied when the database is first created.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol, TypeVar

from config.limits import JsonObject
from config.settings import Settings, get_settings
from storage.sqlite_files import connect_wal

R = TypeVar("R")
"""A handler's result, recorded by a ``Ledger`` and handed back as it is."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    user_id      TEXT PRIMARY KEY,
    display_name TEXT NOT NULL,
    role         TEXT NOT NULL DEFAULT 'customer'
);
CREATE TABLE IF NOT EXISTS pii_vault (
    token        TEXT PRIMARY KEY,
    owner_id     TEXT NOT NULL,
    value        TEXT NOT NULL,
    masked       TEXT NOT NULL,
    created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE TABLE IF NOT EXISTS notifications (
    notification_id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id      TEXT NOT NULL,
    channel      TEXT NOT NULL,
    content      TEXT NOT NULL,
    created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE TABLE IF NOT EXISTS business_writes (
    request_id   TEXT PRIMARY KEY,
    tool         TEXT NOT NULL,
    created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    result_json  TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS payloads (
    sha256       TEXT PRIMARY KEY,
    body         BLOB NOT NULL,
    created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
"""
"""Tables every scenario may use."""

SEED_USERS = [
    ("u_10001", "张三", "customer"),
    ("u_10002", "李四", "customer"),
    ("u_90001", "客服小王", "agent"),
    ("u_80001", "分析师老周", "analyst"),
]
"""The demo directory of users."""


class AlreadyWritten(Exception):  # noqa: N818 - an outcome, not an error
    """This request already made its business write: here is what it answered then.

    Raised by :class:`Ledger` inside the write's transaction, so the transaction rolls back
    and nothing is written twice; the executor answers the earlier result with
    ``duplicated: true``.
    """

    def __init__(self, request_id: str, tool: str, result: Any) -> None:
        """Keep the earlier result of ``request_id``."""
        super().__init__(f"{tool} already wrote for {request_id}")
        self.request_id = request_id
        self.tool = tool
        self.result = result


class Ledger:
    """The second line of exactly-once: one ``business_writes`` row per request, forever.

    The idempotency record in front of the executor expires (24 h by default); this row does
    not. A side-effecting handler opens its ledger entry first thing inside its transaction
    (``ctx.ledger(conn)``), which raises :class:`AlreadyWritten` when the request already
    wrote, and records its result last (``ledger.record(result)``), in the same
    transaction as the write itself: either both exist or neither does. The primary key is the
    guarantee; the first look-up only makes the answer friendly.

    A ledger without a request id (a handler called directly, outside the executor) is a
    no-op, so unit tests and scripts can still call handlers.
    """

    def __init__(self, conn: sqlite3.Connection, request_id: str, tool: str) -> None:
        """Open the entry of ``request_id``; raise :class:`AlreadyWritten` if it exists."""
        self.conn = conn
        self.request_id = request_id
        self.tool = tool
        if request_id:
            earlier = earlier_write(conn, request_id)
            if earlier is not None:
                raise AlreadyWritten(request_id, earlier[0], earlier[1])

    def record(self, result: R) -> R:
        """Write the entry with the handler's result and return the result unchanged."""
        if self.request_id:
            body = json.dumps(result, ensure_ascii=False, sort_keys=True, default=str)
            try:
                self.conn.execute(
                    "INSERT INTO business_writes (request_id, tool, result_json) VALUES (?, ?, ?)",
                    (self.request_id, self.tool, body),
                )
            except sqlite3.IntegrityError:
                earlier = earlier_write(self.conn, self.request_id)
                raise AlreadyWritten(
                    self.request_id, self.tool, earlier[1] if earlier else None
                ) from None
        return result

    def amend(self, result: Any) -> None:
        """Replace the recorded result (a compensation reversed what was written)."""
        if self.request_id:
            amend_write(self.conn, self.request_id, result)


def earlier_write(conn: sqlite3.Connection, request_id: str) -> tuple[str, Any] | None:
    """Return ``(tool, result)`` of a request's business write, if it made one."""
    row = conn.execute(
        "SELECT tool, result_json FROM business_writes WHERE request_id = ?", (request_id,)
    ).fetchone()
    return None if row is None else (str(row[0]), json.loads(row[1]))


def amend_write(conn: sqlite3.Connection, request_id: str, result: Any) -> None:
    """Replace the result a request's ledger entry answers (after a compensation)."""
    conn.execute(
        "UPDATE business_writes SET result_json = ? WHERE request_id = ?",
        (json.dumps(result, ensure_ascii=False, sort_keys=True, default=str), request_id),
    )


class SeedLike(Protocol):
    """A scenario's schema and demo rows (``contract.scenario.Seed``)."""

    @property
    def schema(self) -> str:
        """``CREATE TABLE IF NOT EXISTS`` statements."""
        ...

    @property
    def rows(self) -> Callable[[sqlite3.Connection], None]:
        """Inserts the demo rows."""
        ...


def data_dir(settings: Settings | None = None) -> Path:
    """Return the configured data directory (``REACH_DATA_DIR``), creating it if needed."""
    path = (settings or get_settings()).data_dir
    path.mkdir(parents=True, exist_ok=True)
    return path


class Database:
    """A seeded SQLite business database, safe to share between graph threads.

    One connection per instance with a lock around each transaction: SQLite serializes
    writers anyway, and this keeps transactions from interleaving on one connection.
    """

    def __init__(self, path: str | Path, seeds: Sequence[SeedLike] = ()) -> None:
        """Open (and on first use create and seed) the database at ``path``.

        ``seeds`` are the scenarios' tables and demo rows; their tables are created on every
        open (``IF NOT EXISTS``), their rows only when the database is new.
        """
        self.path = str(path)
        self._seeds = tuple(seeds)
        # the ledger of side effects keeps synchronous=FULL (the default)
        self._conn = connect_wal(self.path)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute("PRAGMA foreign_keys = ON")
        self._lock = threading.RLock()
        self._ensure_schema()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Run statements atomically: commit on success, roll back on any error."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[JsonObject]:  # SQL's columns
        """Run a parameterized read and return rows as dicts."""
        with self._lock:
            return [dict(row) for row in self._conn.execute(sql, params).fetchall()]

    def query_one(
        self, sql: str, params: tuple[Any, ...] = ()
    ) -> JsonObject | None:  # SQL's columns
        """Run a parameterized read and return the first row, if any."""
        rows = self.query(sql, params)
        return rows[0] if rows else None

    def put_payload(self, data: bytes) -> str:
        """Keep an oversized protocol payload and return its reference URI."""
        digest = hashlib.sha256(data).hexdigest()
        with self.transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO payloads (sha256, body) VALUES (?, ?)", (digest, data)
            )
        return f"payload://sha256/{digest}"

    def get_payload(self, uri: str) -> bytes | None:
        """Fetch a payload stored by ``put_payload``."""
        digest = uri.rsplit("/", 1)[-1]
        row = self.query_one("SELECT body FROM payloads WHERE sha256 = ?", (digest,))
        return None if row is None else bytes(row["body"])

    def earlier_write(self, request_id: str) -> tuple[str, Any] | None:
        """Return ``(tool, result)`` of a request's ledgered business write, if any."""
        with self._lock:
            return earlier_write(self._conn, request_id)

    def read_only(self) -> sqlite3.Connection:
        """Open a separate read-only connection, for queries built from user questions."""
        if self.path == ":memory:":
            msg = "an in-memory database has no read-only view"
            raise ValueError(msg)
        conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
        conn.execute("PRAGMA query_only = ON")
        return conn

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    def _ensure_schema(self) -> None:
        with self._lock:
            self._conn.executescript(SCHEMA)
            for seed in self._seeds:
                self._conn.executescript(seed.schema)
            # checked inside the write transaction: two processes opening a new file at once
            # would otherwise both see it empty and the second would fail on the seed rows
            with self.transaction() as conn:
                if conn.execute("SELECT COUNT(*) FROM users").fetchone()[0]:
                    return
                conn.executemany(
                    "INSERT INTO users (user_id, display_name, role) VALUES (?, ?, ?)", SEED_USERS
                )
                for seed in self._seeds:
                    seed.rows(conn)
