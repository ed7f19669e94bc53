"""Open a SQLite file that several threads and processes share, in WAL mode.

Every store here opens its own connection, often lazily from inside a node, so a fresh
database can see many connections open at once. Switching a file to WAL takes an exclusive
lock, and SQLite answers ``database is locked`` at once (without waiting on the busy
timeout) when another connection is opening the same file; one of fifty concurrent first
turns crashed that way. So the busy timeout is set first, and the switch is retried until
the timeout runs out. A file already in WAL mode is not switched again: the mode is
persistent, and reading it needs no exclusive lock.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

Synchronous = Literal["OFF", "NORMAL", "FULL", "EXTRA"]


def connect_wal(
    path: str | Path,
    *,
    busy_timeout_s: float = 5.0,
    synchronous: Synchronous | None = None,
    autocommit: bool = True,
    sleep: Callable[[float], None] = time.sleep,
    monotonic: Callable[[], float] = time.monotonic,
) -> sqlite3.Connection:
    """Return a connection to ``path`` in WAL mode, creating its folder.

    ``autocommit`` opens the connection with ``isolation_level=None`` (the stores manage
    their own transactions); LangGraph's SQLite saver wants Python's default. ``:memory:``
    is opened as it is: WAL does not apply to it.
    """
    memory = str(path) == ":memory:"
    if not memory:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), check_same_thread=False, timeout=busy_timeout_s)
    if autocommit:
        conn.isolation_level = None
    # ``timeout`` above is SQLite's busy timeout, set before anything that may lock
    if not memory:
        _switch_to_wal(conn, busy_timeout_s, sleep, monotonic)
    if synchronous is not None:
        conn.execute(f"PRAGMA synchronous = {synchronous}")
    return conn


def _switch_to_wal(
    conn: sqlite3.Connection,
    within_s: float,
    sleep: Callable[[float], None],
    monotonic: Callable[[], float],
) -> None:
    """Put the file in WAL mode, retrying while other connections hold it."""
    deadline = monotonic() + within_s
    pause = 0.005
    while True:
        try:
            if _journal_mode(conn) == "wal":
                return
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as error:
            if not _is_busy(error) or monotonic() >= deadline:
                raise
        sleep(pause)
        pause = min(pause * 2, 0.1)


def _journal_mode(conn: sqlite3.Connection) -> str:
    row = conn.execute("PRAGMA journal_mode").fetchone()
    return str(row[0]).lower() if row else ""


def _is_busy(error: sqlite3.OperationalError) -> bool:
    text = str(error).lower()
    return "locked" in text or "busy" in text
