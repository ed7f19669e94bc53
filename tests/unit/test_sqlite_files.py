"""Opening shared SQLite files: WAL mode, and many connections opening a fresh file at once."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from graph.checkpoint.factory import sqlite_checkpointer
from jobs.store import SQLiteJobStore
from storage.db import SEED_USERS, Database
from storage.kv import SQLiteKV
from storage.sqlite_files import _switch_to_wal, connect_wal
from storage.transcript import SQLiteTranscriptStore
from tools.executor.stores import SQLiteIdempotencyStore

OPENERS: dict[str, Callable[[Path], object]] = {
    "transcript": SQLiteTranscriptStore,
    "idempotency": SQLiteIdempotencyStore,
    "kv": lambda path: SQLiteKV(path, "pins"),
    "jobs": SQLiteJobStore,
    "business": Database,
    "checkpoints": sqlite_checkpointer,
}


def _open_at_once(opener: Callable[[Path], object], path: Path, n: int) -> list[BaseException]:
    errors: list[BaseException] = []
    start = threading.Barrier(n)

    def open_it() -> None:
        start.wait()
        try:
            opener(path)
        except BaseException as error:  # noqa: BLE001 - collected and asserted on
            errors.append(error)

    threads = [threading.Thread(target=open_it) for _ in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


@pytest.mark.parametrize("kind", sorted(OPENERS))
def test_sixteen_connections_open_a_fresh_file_at_once(kind, tmp_path):
    # one of fifty concurrent first turns failed with "database is locked": the switch to
    # WAL does not wait on the busy timeout when another connection is opening the file;
    # and two openers of a new business database both seeded it
    for round_ in range(8):
        path = tmp_path / f"{kind}-{round_}" / "store.db"
        assert _open_at_once(OPENERS[kind], path, 16) == []
        mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
        assert mode == "wal"


def test_synchronous_and_autocommit_are_as_asked(tmp_path):
    conn = connect_wal(tmp_path / "a.db", synchronous="NORMAL")
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert conn.isolation_level is None
    saver_style = connect_wal(tmp_path / "b.db", autocommit=False)
    assert saver_style.isolation_level == ""  # Python's default: implicit transactions
    assert saver_style.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL, untouched


def test_memory_databases_open_without_wal():
    conn = connect_wal(":memory:")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "memory"


class _BusyThenFree:
    """A connection whose file stays locked for the first ``busy`` switches to WAL."""

    def __init__(self, busy: int, message: str = "database is locked") -> None:
        self.busy = busy
        self.message = message
        self.mode = "delete"
        self.switches = 0

    def execute(self, sql: str) -> _BusyThenFree:
        if sql == "PRAGMA journal_mode = WAL":
            self.switches += 1
            if self.switches <= self.busy:
                raise sqlite3.OperationalError(self.message)
            self.mode = "wal"
        return self

    def fetchone(self) -> tuple[str]:
        return (self.mode,)


class _Time:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds

    def monotonic(self) -> float:
        return self.now


def test_a_locked_file_is_switched_once_the_lock_is_gone():
    conn, time = _BusyThenFree(busy=5), _Time()
    _switch_to_wal(conn, 5.0, time.sleep, time.monotonic)  # type: ignore[arg-type]
    assert conn.mode == "wal" and conn.switches == 6
    assert time.slept == [0.005, 0.01, 0.02, 0.04, 0.08]  # backing off, at most 0.1 s


def test_a_file_locked_past_the_timeout_raises_the_error():
    conn, time = _BusyThenFree(busy=10_000), _Time()
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        _switch_to_wal(conn, 1.0, time.sleep, time.monotonic)  # type: ignore[arg-type]
    assert 1.0 <= time.now < 1.2


def test_other_errors_are_not_retried():
    conn, time = _BusyThenFree(busy=1, message="disk I/O error"), _Time()
    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        _switch_to_wal(conn, 5.0, time.sleep, time.monotonic)  # type: ignore[arg-type]
    assert time.slept == []


def test_a_file_already_in_wal_mode_is_not_switched_again():
    conn, time = _BusyThenFree(busy=10_000), _Time()
    conn.mode = "wal"
    _switch_to_wal(conn, 5.0, time.sleep, time.monotonic)  # type: ignore[arg-type]
    assert conn.switches == 0


def test_a_business_database_opened_at_once_is_seeded_once(tmp_path):
    path = tmp_path / "business.db"
    assert _open_at_once(Database, path, 16) == []
    users = sqlite3.connect(path).execute("SELECT COUNT(*) FROM users").fetchone()[0]
    assert users == len(SEED_USERS)
