"""Run one guarded query on a read-only SQLite connection, with a time and a row limit.

The guard (``security.sql_guard``) proves the query's shape; this runner makes the engine
enforce the rest, so a guard mistake is not enough to leak or hang:

- the connection is read-only (``mode=ro`` and ``PRAGMA query_only``);
- an authorizer lets SQLite read only the policy's tables and columns and call only the
  allowed functions: a hidden column is refused by the engine itself, whatever the SQL says;
- a progress handler interrupts the query inside SQLite once ``timeout_s`` has passed on
  the given clock (the statement is stopped, not left running in a thread);
- ``setlimit`` caps string length, expression depth and attached databases;
- at most ``max_rows`` rows are fetched; ``truncated`` says whether more were available.

Callers map the exceptions to an envelope: ``QueryRefused`` and ``QueryTimeout`` are
user-fixable (rephrase the question), ``QueryFailed`` is a system error.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from config.limits import JsonObject, JsonValue
from security.sql_guard import (
    ALLOWED_FUNCTIONS,
    SqlPolicy,
    UnsafeQueryError,
    check_query,
    with_row_limit,
)
from storage.db import Database

DEFAULT_TIMEOUT_S = 2.0
"""Longest a query may run inside SQLite."""
PROGRESS_EVERY = 1000
"""SQLite VM instructions between two deadline checks."""
MAX_VALUE_BYTES = 1_000_000
"""Longest string or blob the engine will build (``SQLITE_LIMIT_LENGTH``)."""

Reason = Literal["unsafe_sql", "timeout", "sql_error"]


class ReadOnlyQueryError(Exception):
    """A query did not produce a result; ``reason`` says which kind of failure."""

    reason: Reason = "sql_error"

    def __init__(self, message: str, sql: str) -> None:
        """Keep the query text for the envelope's details."""
        super().__init__(message)
        self.message = message
        self.sql = sql

    def details(self) -> dict[str, JsonValue]:
        """Return the envelope ``data`` for this failure."""
        return {"reason": self.reason, "sql": self.sql[:500], "message": self.message}


class QueryRefused(ReadOnlyQueryError):
    """The guard or the engine's authorizer refused the query."""

    reason: Reason = "unsafe_sql"


class QueryTimeout(ReadOnlyQueryError):
    """The query ran past its time limit and was interrupted inside SQLite."""

    reason: Reason = "timeout"


class QueryFailed(ReadOnlyQueryError):
    """SQLite reported an error (bad parameter count, a type error, a locked database)."""

    reason: Reason = "sql_error"


@dataclass(frozen=True)
class QueryResult:
    """Rows of a guarded query, and what was done to them."""

    sql: str
    """The SQL actually run (with the row limit applied)."""
    columns: list[str]
    """Result column names."""
    rows: list[JsonObject]
    """At most ``max_rows`` rows, as dicts (their keys: the columns the checked SQL selects)."""
    truncated: bool
    """More rows were available than returned."""
    elapsed_ms: float
    """Time spent in SQLite, on the given clock."""
    params: list[Any] = field(default_factory=list)
    """The bound parameters."""


def run(
    db: Database,
    sql: str,
    params: Sequence[Any] = (),
    *,
    policy: SqlPolicy,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    max_rows: int | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> QueryResult:
    """Guard ``sql`` against ``policy`` and run it read-only; raise a ``ReadOnlyQueryError``.

    ``clock`` is injectable so tests can drive the deadline without waiting.
    """
    conn = db.read_only()
    try:
        return run_on(
            conn,
            sql,
            params,
            policy=policy,
            timeout_s=timeout_s,
            max_rows=max_rows,
            clock=clock,
        )
    finally:
        conn.close()


def run_on(
    conn: sqlite3.Connection,
    sql: str,
    params: Sequence[Any] = (),
    *,
    policy: SqlPolicy,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    max_rows: int | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> QueryResult:
    """Like ``run``, on a connection the caller opened read-only (and closes)."""
    limit = min(max_rows or policy.max_rows, policy.max_rows)
    hidden = hidden_columns(conn, policy)
    try:
        tree = check_query(sql, policy, hidden=hidden)
    except UnsafeQueryError as exc:
        raise QueryRefused(str(exc), str(sql)[:4000]) from exc
    safe_sql = with_row_limit(tree, limit + 1)  # one more, to tell whether rows were cut
    _harden(conn, policy)
    started = clock()
    deadline = started + timeout_s
    conn.set_progress_handler(lambda: 1 if clock() > deadline else 0, PROGRESS_EVERY)
    try:
        cursor = conn.execute(safe_sql, tuple(params))
        names = [column[0] for column in cursor.description or []]
        fetched = cursor.fetchmany(limit + 1)
    except sqlite3.OperationalError as exc:
        if "interrupted" in str(exc):
            msg = f"the query ran longer than {timeout_s}s and was stopped"
            raise QueryTimeout(msg, safe_sql) from exc
        if "not authorized" in str(exc) or "prohibited" in str(exc):
            raise QueryRefused(f"the database refused: {exc}", safe_sql) from exc
        raise QueryFailed(f"{type(exc).__name__}: {exc}", safe_sql) from exc
    except (sqlite3.Error, OverflowError, ValueError) as exc:
        raise QueryFailed(f"{type(exc).__name__}: {exc}", safe_sql) from exc
    finally:
        conn.set_progress_handler(None, 0)
        conn.set_authorizer(None)
    elapsed_ms = (clock() - started) * 1000
    rows = [dict(zip(names, row, strict=True)) for row in fetched[:limit]]
    return QueryResult(
        sql=safe_sql,
        columns=names,
        rows=rows,
        truncated=len(fetched) > limit,
        elapsed_ms=round(elapsed_ms, 3),
        params=list(params),
    )


def hidden_columns(conn: sqlite3.Connection, policy: SqlPolicy) -> frozenset[str]:
    """Return the real columns of the policy's tables that the policy does not allow."""
    found: set[str] = set()
    for table in policy.tables:
        rows = conn.execute("SELECT name FROM pragma_table_info(?)", (table,)).fetchall()
        found.update(str(row[0]).lower() for row in rows)
    return frozenset(found - {name.lower() for name in policy.columns})


def _harden(conn: sqlite3.Connection, policy: SqlPolicy) -> None:
    conn.execute("PRAGMA query_only = ON")
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
    conn.setlimit(sqlite3.SQLITE_LIMIT_EXPR_DEPTH, 100)
    conn.setlimit(sqlite3.SQLITE_LIMIT_COMPOUND_SELECT, 4)
    conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    conn.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, 100_000)
    tables = {name.lower() for name in policy.tables}
    columns = {name.lower() for name in policy.columns}

    def authorize(
        action: int, arg1: str | None, arg2: str | None, _db: str | None, _trigger: str | None
    ) -> int:
        if action == sqlite3.SQLITE_SELECT:
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_READ:
            table, column = (arg1 or "").lower(), (arg2 or "").lower()
            # an empty column is a table scan for COUNT(*)-style reads: no value leaves it
            if table in tables and (column in columns or column == ""):
                return sqlite3.SQLITE_OK
            return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_FUNCTION:
            return (
                sqlite3.SQLITE_OK
                if (arg2 or "").lower() in ALLOWED_FUNCTIONS
                else (sqlite3.SQLITE_DENY)
            )
        return sqlite3.SQLITE_DENY

    conn.set_authorizer(authorize)


__all__ = [
    "DEFAULT_TIMEOUT_S",
    "QueryFailed",
    "QueryRefused",
    "QueryResult",
    "QueryTimeout",
    "ReadOnlyQueryError",
    "hidden_columns",
    "run",
    "run_on",
]
