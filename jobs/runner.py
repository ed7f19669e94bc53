"""Long-running tool jobs: start at once, run in the background, survive a restart.

A tool that exports a month of sales or notifies 500 customers must not block the
conversation. It calls ``JobRunner.submit``, which persists the job and returns its id at
once; a worker thread runs the job body. The job's state (queued → running → succeeded /
failed), progress, result, error and attempts live in a ``JobStore`` (SQLite in the data
directory, or Redis), so:

- a runner started after a crash takes over jobs whose lease expired (``resume``);
- each item of a job can be recorded once (``JobContext.once``/``mark_item``), so a retried
  or resumed job skips what it already did;
- any process can answer "导出好了吗" from the store.

The caller learns of the end state by a callback when it runs in the same process
(``submit(on_done=...)``), by notifiers (``LangGraphRunNotifier`` starts a run on the job's
thread under ``langgraph dev``), or otherwise by polling with exponential backoff
(``JobPoller``), whose schedule is computed against an injected clock.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, Protocol, TypedDict

from langgraph_sdk import get_sync_client
from redis import Redis
from redis.exceptions import WatchError

from config.settings import Settings
from security.tokens import issue_token
from storage.sqlite_files import connect_wal
from tools.executor.errors import ToolError

_log = logging.getLogger(__name__)

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
    details: dict[str, Any]


@dataclass(frozen=True)
class Job:
    """One job's persisted record."""

    job_id: str
    kind: str
    """Which registered body runs it, e.g. ``export_sales``."""
    params: dict[str, Any]
    """The validated parameters (JSON)."""
    state: JobState = "queued"
    done: int = 0
    """Items done so far (progress)."""
    total: int | None = None
    """Items in all, once known."""
    result: dict[str, Any] | None = None
    error: JobError | None = None
    attempts: int = 0
    """Times a runner started the body (a resume after a crash counts)."""
    owner: str = ""
    """The user who started it, for "is my export done" lookups."""
    thread_id: str | None = None
    """The conversation to tell when it ends."""
    context: dict[str, Any] = field(default_factory=dict)
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

    def to_dict(self) -> dict[str, Any]:
        """Serialize for a store."""
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Job:
        """Rebuild from a store."""
        return cls(**raw)

    def public(self) -> dict[str, Any]:
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


# ---- running ------------------------------------------------------------------------------


class LeaseLostError(Exception):
    """Another runner took the job over (this one stalled past its lease): stop quietly."""


@dataclass
class JobContext:
    """What a job body gets: its id, its backends, progress reporting and item records."""

    job_id: str
    attempt: int
    resources: Any
    """The business database (or whatever the runner was given)."""
    _runner: JobRunner

    def progress(self, done: int, total: int | None = None) -> None:
        """Report progress; this also renews the lease. Raises ``LeaseLostError`` if lost."""
        self._runner._heartbeat(self.job_id, done, total)

    def done_items(self) -> set[str]:
        """Return the items already recorded by any attempt."""
        return self._runner.store.items(self.job_id)

    def mark_item(self, key: str) -> bool:
        """Record ``key`` done; ``False`` means an earlier attempt already did it."""
        return self._runner.store.mark_item(self.job_id, key)


JobBody = Callable[[dict[str, Any], JobContext], dict[str, Any]]
"""``body(params, ctx) -> result``; raise a ``ToolError`` for an expected failure."""
JobCallback = Callable[[Job], Any]


def job_id_for(kind: str, params: dict[str, Any], scope: str = "") -> str:
    """Derive a job id from what is asked, so a repeated start finds the same job."""
    blob = json.dumps([kind, scope, params], sort_keys=True, ensure_ascii=False)
    return "job-" + hashlib.sha256(blob.encode()).hexdigest()[:16]


class JobRunner:
    """Run jobs on worker threads; persist everything; resume what a dead runner left.

    Many runners (processes) may share one store: a job is run by whoever holds its lease,
    renewed by each ``progress`` report; a job whose lease expired is taken over by the
    next ``resume``. Transient failures (``ToolError.retryable``) are retried up to
    ``max_attempts``; other failures end the job as ``failed`` with a structured error.
    """

    def __init__(
        self,
        store: JobStore,
        *,
        resources: Any = None,
        clock: Clock | None = None,
        lease_s: float = 30.0,
        max_attempts: int = 3,
        max_workers: int = 2,
        notifiers: tuple[JobCallback, ...] = (),
        runner_id: str | None = None,
        on_orphan: JobCallback | None = None,
    ) -> None:
        """Bind the runner to a store and the resources job bodies need.

        ``on_orphan(job)`` is called for a job that ends with no callback registered here:
        one this runner resumed after the process that started it died, whose ``on_done``
        died with it.
        """
        self.store = store
        self.resources = resources
        self.clock = clock or SystemClock()
        self.lease_s = lease_s
        self.max_attempts = max_attempts
        self.notifiers = list(notifiers)
        self.on_orphan = on_orphan
        self.runner_id = runner_id or f"runner-{uuid.uuid4().hex[:8]}"
        self.bodies: dict[str, JobBody] = {}
        self._callbacks: dict[str, list[JobCallback]] = {}
        self._events: dict[str, threading.Event] = {}
        self._active: set[str] = set()
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="reach-job")

    @classmethod
    def from_settings(cls, settings: Settings, **options: Any) -> JobRunner:
        """Build a runner on the configured store, with the LangGraph notifier if configured."""
        options.setdefault("lease_s", settings.job_lease_s)
        options.setdefault("max_attempts", settings.job_max_attempts)
        if settings.langgraph_url and "notifiers" not in options:

            def as_owner(job: Job) -> dict[str, str]:
                # the run acts as the job's owner, on the owner's thread (auth-enabled server)
                role = str(job.context.get("user_role") or "customer")
                return {"x-api-key": issue_token(job.owner, role, 300, settings=settings)}

            options["notifiers"] = (
                LangGraphRunNotifier(
                    url=settings.langgraph_url,
                    assistant_id=settings.langgraph_assistant_id,
                    headers_for=as_owner,
                ),
            )
        return cls(job_store(settings), **options)

    def register(self, kind: str, body: JobBody) -> None:
        """Make ``kind`` runnable."""
        self.bodies[kind] = body

    def submit(
        self,
        kind: str,
        params: dict[str, Any],
        *,
        job_id: str | None = None,
        owner: str = "",
        thread_id: str | None = None,
        context: dict[str, Any] | None = None,
        on_done: JobCallback | None = None,
    ) -> Job:
        """Persist a job and start it in the background; return at once.

        Submitting an existing ``job_id`` starts nothing new: it returns that job (and
        resumes it if nobody holds it), so a retried tool call cannot start a second export.
        """
        if kind not in self.bodies:
            msg = f"no job body registered for {kind!r}"
            raise KeyError(msg)
        now = self.clock.now()
        job = Job(
            job_id=job_id or f"job-{uuid.uuid4().hex[:16]}",
            kind=kind,
            params=params,
            owner=owner,
            thread_id=thread_id,
            context=dict(context or {}),
            created_at=now,
            updated_at=now,
        )
        stored, _ = self.store.create(job)
        if on_done is not None:
            self.follow(stored.job_id, on_done)
        if not stored.finished:
            self._start(stored.job_id)
        return stored

    def follow(self, job_id: str, on_done: JobCallback) -> None:
        """Call ``on_done(job)`` once the job ends (at once if it already has)."""
        with self._lock:
            self._callbacks.setdefault(job_id, []).append(on_done)
        job = self.store.get(job_id)
        if job is not None and job.finished:
            self._notify(job)

    def status(self, job_id: str) -> Job | None:
        """Return the job as persisted."""
        return self.store.get(job_id)

    def resume(self) -> list[str]:
        """Start every queued job and every running job whose lease expired; return their ids.

        Called when a runner starts, and periodically, so a job a dead process left
        ``running`` continues once its lease runs out.
        """
        now = self.clock.now()
        started = []
        for job in self.store.list(frozenset({"queued", "running"})):
            if job.kind not in self.bodies:
                continue
            if job.state == "running" and job.lease_until > now:
                continue
            self._start(job.job_id)
            started.append(job.job_id)
        return started

    def start_sweeper(self, interval_s: float | None = None) -> threading.Event:
        """Call ``resume`` now and every ``interval_s`` (half the lease) on a daemon thread.

        With several workers, this is how a job whose runner died is taken over without a
        restart. Set the returned event to stop the sweeper.
        """
        stop = threading.Event()
        every = interval_s if interval_s is not None else self.lease_s / 2

        def sweep() -> None:
            while True:
                try:
                    self.resume()
                except Exception:  # a store hiccup must not end the sweeper
                    _log.exception("job sweeper: resume failed")
                if stop.wait(every):
                    return

        threading.Thread(target=sweep, name="reach-job-sweeper", daemon=True).start()
        return stop

    def wait(self, job_id: str, timeout_s: float | None = None) -> Job:
        """Block until a job ends (tests, scripts); return it.

        For a job this runner started, that is once its callbacks and notifiers have run
        (a completion callback's follow-up is done when this returns).
        """
        with self._lock:
            ran_here = job_id in self._events
            event = self._events.setdefault(job_id, threading.Event())
        job = self.store.get(job_id)
        if ran_here or job is None or not job.finished:
            event.wait(timeout_s)
        final = self.store.get(job_id)
        if final is None:
            msg = f"no job {job_id!r}"
            raise KeyError(msg)
        return final

    def close(self, *, wait: bool = True) -> None:
        """Stop accepting work; with ``wait`` let running bodies finish."""
        self._pool.shutdown(wait=wait, cancel_futures=not wait)

    # ---- internals ----------------------------------------------------------------------

    def _start(self, job_id: str) -> None:
        with self._lock:
            self._events.setdefault(job_id, threading.Event())
            if job_id in self._active:
                return  # already running here (a sweep raced a submit)
            self._active.add(job_id)
        self._pool.submit(self._run, job_id)

    def _claim(self, job_id: str) -> Job | None:
        now = self.clock.now()

        def change(job: Job) -> Job | None:
            if job.finished:
                return None
            held = job.state == "running" and job.lease_until > now
            if held and job.lease_owner != self.runner_id:
                return None
            return replace(
                job,
                state="running",
                attempts=job.attempts + 1,
                lease_owner=self.runner_id,
                lease_until=now + self.lease_s,
                updated_at=now,
            )

        return self.store.mutate(job_id, change)

    def _heartbeat(self, job_id: str, done: int, total: int | None) -> None:
        now = self.clock.now()

        def change(job: Job) -> Job | None:
            if job.lease_owner != self.runner_id or job.finished:
                return None
            return replace(
                job,
                done=done,
                total=total if total is not None else job.total,
                lease_until=now + self.lease_s,
                updated_at=now,
            )

        if self.store.mutate(job_id, change) is None:
            raise LeaseLostError(job_id)

    def _finish(
        self, job_id: str, state: JobState, result: dict[str, Any] | None, error: JobError | None
    ) -> Job | None:
        now = self.clock.now()

        def change(job: Job) -> Job | None:
            if job.lease_owner != self.runner_id or job.finished:
                return None
            return replace(
                job,
                state=state,
                result=result,
                error=error,
                lease_owner=None,
                lease_until=0.0,
                updated_at=now,
                done=job.total if state == "succeeded" and job.total is not None else job.done,
            )

        return self.store.mutate(job_id, change)

    def _run(self, job_id: str) -> None:
        try:
            self._run_attempts(job_id)
        except Exception:  # a bug in the runner itself must not kill the worker pool
            _log.exception("job %s: runner failure", job_id)
        finally:
            with self._lock:
                self._active.discard(job_id)
                event = self._events.get(job_id)
            final = self.store.get(job_id)
            if event is not None and final is not None and final.finished:
                event.set()  # e.g. another runner finished it: nothing more will come here

    def _run_attempts(self, job_id: str) -> None:
        while True:
            job = self._claim(job_id)
            if job is None:
                return  # finished, or another runner holds it
            body = self.bodies[job.kind]
            ctx = JobContext(job.job_id, job.attempts, self.resources, self)
            try:
                result = body(job.params, ctx)
            except LeaseLostError:
                _log.warning("job %s: lease lost to another runner", job_id)
                return
            except ToolError as exc:
                error = JobError(
                    error_type=exc.error_type, message=exc.message, details=exc.details
                )
                if exc.retryable and job.attempts < self.max_attempts:
                    continue
                final = self._finish(job_id, "failed", None, error)
            except Exception as exc:  # the body's bug becomes a failed job, not a dead thread
                _log.exception("job %s failed", job_id)
                error = JobError(
                    error_type="system", message=f"{type(exc).__name__}: {exc}", details={}
                )
                final = self._finish(job_id, "failed", None, error)
            else:
                final = self._finish(job_id, "succeeded", result, None)
            if final is not None:
                self._notify(final)
            return

    def _notify(self, job: Job) -> None:
        with self._lock:
            callbacks = self._callbacks.pop(job.job_id, [])
            event = self._events.get(job.job_id)
        if not callbacks and self.on_orphan is not None:
            callbacks = [self.on_orphan]
        for callback in [*callbacks, *self.notifiers]:
            try:
                callback(job)
            except Exception:  # a broken listener must not undo a finished job
                _log.exception("job %s: notifier %r failed", job.job_id, callback)
        if event is not None:
            event.set()


# ---- polling ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Backoff:
    """Exponential polling intervals: initial, ×factor each time, capped at maximum."""

    initial_s: float = 0.5
    factor: float = 2.0
    maximum_s: float = 30.0

    def intervals(self) -> Iterator[float]:
        """Yield the waits between polls, forever."""
        wait = self.initial_s
        while True:
            yield wait
            wait = min(wait * self.factor, self.maximum_s)


@dataclass(frozen=True)
class PollOutcome:
    """What polling saw."""

    job: Job | None
    """The last record read (``None``: no such job)."""
    polls: int
    intervals: list[float]
    """The waits between polls, in order."""
    timed_out: bool


@dataclass
class JobPoller:
    """Follow a job by reading the store, waiting longer each time (no callback available)."""

    store: JobStore
    clock: Clock = field(default_factory=SystemClock)
    backoff: Backoff = field(default_factory=Backoff)

    def wait(self, job_id: str, timeout_s: float) -> PollOutcome:
        """Poll until the job ends or ``timeout_s`` passes on the clock; never overshoot it."""
        deadline = self.clock.now() + timeout_s
        waits: list[float] = []
        polls = 0
        schedule = self.backoff.intervals()
        while True:
            job = self.store.get(job_id)
            polls += 1
            if job is None or job.finished:
                return PollOutcome(job, polls, waits, timed_out=False)
            left = deadline - self.clock.now()
            if left <= 0:
                return PollOutcome(job, polls, waits, timed_out=True)
            wait = min(next(schedule), left)
            waits.append(wait)
            self.clock.sleep(wait)

    def next_poll_at(self, started_at: float, polls_done: int) -> float:
        """Return when poll number ``polls_done + 1`` is due, for a caller that does not block.

        A graph node that checks a job on each turn uses this to decide whether to look
        again yet, from the time it started following and how often it has looked.
        """
        schedule = self.backoff.intervals()
        return started_at + sum(next(schedule) for _ in range(polls_done))


# ---- LangGraph server follow-up ----------------------------------------------------------


class JobEvent(TypedDict):
    """What a thread is told when its job ends."""

    job_id: str
    kind: str
    state: str
    result: dict[str, Any] | None
    error: JobError | None


def job_event(job: Job) -> JobEvent:
    """Summarize a finished job for the conversation."""
    return JobEvent(
        job_id=job.job_id, kind=job.kind, state=job.state, result=job.result, error=job.error
    )


class RunsClient(Protocol):
    """The slice of ``langgraph_sdk``'s sync ``runs`` client the notifier uses."""

    def create(self, thread_id: str | None, assistant_id: str, **kwargs: Any) -> Any:
        """Start a run."""
        ...


class LangGraphRunNotifier:
    """On a job's end, start a run on its thread through the LangGraph server's API.

    The run's input is ``{"job_event": ...}`` by default (the graph decides how to tell the
    user); ``multitask_strategy="enqueue"`` queues it behind a run the user started about
    something else, so the result never overwrites that topic mid-turn.
    """

    def __init__(
        self,
        *,
        url: str | None = None,
        assistant_id: str = "agent",
        runs: RunsClient | None = None,
        input_for: Callable[[Job], dict[str, Any]] | None = None,
        headers_for: Callable[[Job], dict[str, str]] | None = None,
    ) -> None:
        """Talk to ``url`` (or use the given ``runs`` client, e.g. a fake in tests).

        ``headers_for(job)`` authenticates the run when the server requires it, e.g.
        ``{"x-api-key": <a token for job.owner>}``, so the run acts as the job's owner on
        the owner's thread.
        """
        if runs is None:
            if url is None:
                msg = "give the LangGraph server url or a runs client"
                raise ValueError(msg)
            sdk_runs: Any = get_sync_client(url=url).runs
            runs = sdk_runs
        self.runs: RunsClient = runs
        self.assistant_id = assistant_id
        self.input_for = input_for or (lambda job: {"job_event": dict(job_event(job))})
        self.headers_for = headers_for

    def __call__(self, job: Job) -> Any:
        """Start the run (jobs without a thread are skipped)."""
        if not job.thread_id:
            return None
        return self.runs.create(
            job.thread_id,
            self.assistant_id,
            input=self.input_for(job),
            metadata={"job_id": job.job_id, "source": "job"},
            context=job.context or None,
            multitask_strategy="enqueue",
            headers=self.headers_for(job) if self.headers_for is not None else None,
        )
