"""Where jobs live: the job record, its store (SQLite or Redis) and the clock it is timed by.

A job's state (queued → running → succeeded / failed), progress, result, error, attempts and
lease are one ``Job`` record in a ``JobStore``: SQLite in the data directory for one host,
Redis when ``redis_url`` is set, so any process can answer "导出好了吗" and a runner started
after a crash can take over a job whose lease expired. The runner is ``jobs.runner``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal, NotRequired, Protocol, TypeAlias, TypedDict

from redis import Redis
from redis.exceptions import WatchError

from config.limits import JsonValue
from config.settings import Settings
from storage.sqlite_files import connect_wal

JobState = Literal["queued", "running", "succeeded", "failed"]


TERMINAL: frozenset[str] = frozenset({"succeeded", "failed"})


class Clock(Protocol):
    """Time as the runner and the poller see it; tests inject a manual one."""

    def now(self) -> float:
        """Return the current time in seconds."""
        ...

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds``."""
        ...


class SystemClock:
    """The real clock."""

    def now(self) -> float:
        """Return wall-clock seconds (comparable across processes, for leases)."""
        return time.time()

    def sleep(self, seconds: float) -> None:
        """Sleep for real."""
        time.sleep(seconds)


@dataclass
class ManualClock:
    """A clock that moves only when told to; ``sleep`` advances it and records the wait."""

    t: float = 0.0
    slept: list[float] = field(default_factory=list)
    on_sleep: Callable[[float], None] | None = None
    """Called with the new time after each sleep, to make things happen "meanwhile"."""

    def now(self) -> float:
        """Return the manual time."""
        return self.t

    def sleep(self, seconds: float) -> None:
        """Advance the time without waiting."""
        self.slept.append(seconds)
        self.t += seconds
        if self.on_sleep is not None:
            self.on_sleep(self.t)

    def advance(self, seconds: float) -> None:
        """Move the time forward without recording a sleep."""
        self.t += seconds


class JobError(TypedDict):
    """Why a job failed, in the executor's error vocabulary."""

    error_type: str
    message: str
    details: dict[str, JsonValue]
    """The ``ToolError``'s details: each error's own (``reason``, the field at fault)."""


JobParams: TypeAlias = dict[str, JsonValue]
"""A job's parameters: its request model's dump, validated by the tool that started it and
stored as JSON; the body reads back what it needs (each kind its own)."""


class JobResult(TypedDict):
    """What every body's result carries; each body's result extends it (``SalesExport``)."""

    summary: str
    """The body's own sentence about what it did, for the user (in Chinese)."""
    path: NotRequired[str]
    """A file the job wrote, when it wrote one."""


class JobOwner(TypedDict, total=False):
    """The trusted run context a job continues the conversation with."""

    user_id: str
    user_role: str


class PublicJob(TypedDict):
    """What a tool result or a user may see of a job (no lease internals, no params)."""

    job_id: str
    kind: str
    state: JobState
    done: int
    total: int | None
    result: JobResult | None
    error: JobError | None
    attempts: int


class JobAnswer(PublicJob):
    """A job tool's result: the job as the user may see it, and a sentence about it."""

    message: str


@dataclass(frozen=True)
class Job:
    """One job's persisted record."""

    job_id: str
    kind: str
    """Which registered body runs it, e.g. ``export_sales``."""
    params: JobParams
    """The validated parameters (JSON)."""
    state: JobState = "queued"
    done: int = 0
    """Items done so far (progress)."""
    total: int | None = None
    """Items in all, once known."""
    result: JobResult | None = None
    error: JobError | None = None
    attempts: int = 0
    """Times a runner started the body (a resume after a crash counts)."""
    owner: str = ""
    """The user who started it, for "is my export done" lookups."""
    thread_id: str | None = None
    """The conversation to tell when it ends."""
    context: JobOwner = field(default_factory=lambda: JobOwner())
    """The trusted run context (user id, role) to continue the conversation with."""
    created_at: float = 0.0
    updated_at: float = 0.0
    lease_owner: str | None = None
    """The runner currently running it."""
    lease_until: float = 0.0
    """After this, another runner may take it over."""

    @property
    def finished(self) -> bool:
        """Tell whether the job reached an end state."""
        return self.state in TERMINAL

    def to_dict(self) -> dict[str, JsonValue]:
        """Serialize for a store."""
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, JsonValue]) -> Job:
        """Rebuild from a store (what ``to_dict`` wrote)."""
        return cls(**raw)  # type: ignore[arg-type]

    def public(self) -> PublicJob:
        """Return what a tool result or a user may see (no lease internals, no params)."""
        return {
            "job_id": self.job_id,
            "kind": self.kind,
            "state": self.state,
            "done": self.done,
            "total": self.total,
            "result": self.result,
            "error": self.error,
            "attempts": self.attempts,
        }


Mutation = Callable[[Job], Job | None]
"""Given the current record, return the new one, or ``None`` to leave it unchanged."""


class JobStore(Protocol):
    """Where jobs and their done items persist."""

    def create(self, job: Job) -> tuple[Job, bool]:
        """Insert ``job`` unless its id exists; return the stored job and whether it is new."""
        ...

    def get(self, job_id: str) -> Job | None:
        """Return the job, if any."""
        ...

    def mutate(self, job_id: str, change: Mutation) -> Job | None:
        """Apply ``change`` atomically; return the new record, or ``None`` if unchanged."""
        ...

    def list(self, states: frozenset[str] | None = None) -> list[Job]:
        """Return jobs (in the given states), oldest first."""
        ...

    def mark_item(self, job_id: str, key: str) -> bool:
        """Record item ``key`` of a job as done; ``False`` if it was already recorded."""
        ...

    def items(self, job_id: str) -> set[str]:
        """Return the item keys recorded for a job."""
        ...


class SQLiteJobStore:
    """Jobs in a SQLite file (``jobs.db`` in the data directory); safe across processes."""

    def __init__(self, path: str | Path) -> None:
        """Open (creating) the database."""
        self._conn = connect_wal(path, busy_timeout_s=10.0)
        self._conn.executescript(
            """
            CREATE TABLE IF NOT EXISTS jobs (
                job_id TEXT PRIMARY KEY, state TEXT NOT NULL, created_at REAL NOT NULL,
                record TEXT NOT NULL);
            CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs(state);
            CREATE TABLE IF NOT EXISTS job_done_items (
                job_id TEXT NOT NULL, item TEXT NOT NULL, PRIMARY KEY (job_id, item));
            """
        )
        self._lock = threading.Lock()

    def create(self, job: Job) -> tuple[Job, bool]:
        """Insert unless present."""
        with self._lock:
            cursor = self._conn.execute(
                "INSERT OR IGNORE INTO jobs (job_id, state, created_at, record) VALUES (?,?,?,?)",
                (job.job_id, job.state, job.created_at, json.dumps(job.to_dict())),
            )
        if cursor.rowcount:
            return job, True
        existing = self.get(job.job_id)
        assert existing is not None  # noqa: S101  (just inserted or already there)
        return existing, False

    def get(self, job_id: str) -> Job | None:
        """Read one job."""
        with self._lock:
            row = self._conn.execute(
                "SELECT record FROM jobs WHERE job_id = ?", (job_id,)
            ).fetchone()
        return None if row is None else Job.from_dict(json.loads(row[0]))

    def mutate(self, job_id: str, change: Mutation) -> Job | None:
        """Read, change and write in one IMMEDIATE transaction (serialized across processes)."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                row = self._conn.execute(
                    "SELECT record FROM jobs WHERE job_id = ?", (job_id,)
                ).fetchone()
                new = None if row is None else change(Job.from_dict(json.loads(row[0])))
                if new is not None:
                    self._conn.execute(
                        "UPDATE jobs SET state = ?, record = ? WHERE job_id = ?",
                        (new.state, json.dumps(new.to_dict()), job_id),
                    )
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
        return new

    def list(self, states: frozenset[str] | None = None) -> list[Job]:
        """List jobs by creation time."""
        with self._lock:
            rows = self._conn.execute("SELECT record FROM jobs ORDER BY created_at").fetchall()
        jobs = [Job.from_dict(json.loads(row[0])) for row in rows]
        return [job for job in jobs if states is None or job.state in states]

    def mark_item(self, job_id: str, key: str) -> bool:
        """Insert the item once."""
        with self._lock:
            cursor = self._conn.execute(
                "INSERT OR IGNORE INTO job_done_items (job_id, item) VALUES (?, ?)", (job_id, key)
            )
        return cursor.rowcount == 1

    def items(self, job_id: str) -> set[str]:
        """Return done items."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT item FROM job_done_items WHERE job_id = ?", (job_id,)
            ).fetchall()
        return {str(row[0]) for row in rows}

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()


class RedisJobStore:
    """Jobs in Redis: one JSON string per job, an index set, a set of done items per job."""

    def __init__(self, client: Redis, prefix: str = "reach:job") -> None:
        """Use ``client``; keys start with ``prefix``."""
        self.client = client
        self.prefix = prefix

    def _key(self, job_id: str) -> str:
        return f"{self.prefix}:{{{job_id}}}"

    def create(self, job: Job) -> tuple[Job, bool]:
        """SET NX, then index."""
        if self.client.set(self._key(job.job_id), json.dumps(job.to_dict()), nx=True):
            self.client.zadd(f"{self.prefix}s", {job.job_id: job.created_at})
            return job, True
        existing = self.get(job.job_id)
        assert existing is not None  # noqa: S101
        return existing, False

    def get(self, job_id: str) -> Job | None:
        """GET one job."""
        raw = self.client.get(self._key(job_id))
        return None if raw is None else Job.from_dict(json.loads(raw))

    def mutate(self, job_id: str, change: Mutation) -> Job | None:
        """Optimistic WATCH/MULTI: retried when another runner wrote in between."""
        key = self._key(job_id)
        with self.client.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(key)
                    raw = pipe.get(key)
                    new = None if raw is None else change(Job.from_dict(json.loads(raw)))
                    if new is None:
                        pipe.unwatch()
                        return None
                    pipe.multi()
                    pipe.set(key, json.dumps(new.to_dict()))
                    pipe.execute()
                    return new
                except WatchError:
                    continue

    def list(self, states: frozenset[str] | None = None) -> list[Job]:
        """List indexed jobs by creation time."""
        ids = [
            i.decode() if isinstance(i, bytes) else str(i)
            for i in self.client.zrange(f"{self.prefix}s", 0, -1)
        ]
        jobs = [job for job in (self.get(i) for i in ids) if job is not None]
        return [job for job in jobs if states is None or job.state in states]

    def mark_item(self, job_id: str, key: str) -> bool:
        """SADD returns 1 only the first time."""
        return bool(self.client.sadd(f"{self._key(job_id)}:items", key))

    def items(self, job_id: str) -> set[str]:
        """SMEMBERS."""
        return {
            i.decode() if isinstance(i, bytes) else str(i)
            for i in self.client.smembers(f"{self._key(job_id)}:items")
        }


def job_store(settings: Settings) -> JobStore:
    """Return the configured store: Redis with ``redis_url`` (unless told SQLite), else SQLite."""
    if settings.redis_url and settings.jobs_store != "sqlite":
        return RedisJobStore(Redis.from_url(settings.redis_url))
    return SQLiteJobStore(settings.data_dir / "jobs.db")
