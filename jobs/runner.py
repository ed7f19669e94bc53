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
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from config.settings import Settings
from jobs.notify import LangGraphRunNotifier
from jobs.store import (
    Clock,
    Job,
    JobError,
    JobOwner,
    JobParams,
    JobResult,
    JobState,
    JobStore,
    SystemClock,
    job_store,
)
from security.tokens import issue_token
from tools.executor.errors import ToolError

_log = logging.getLogger(__name__)


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


JobBody = Callable[[JobParams, JobContext], JobResult]
"""``body(params, ctx) -> result``; raise a ``ToolError`` for an expected failure."""
JobCallback = Callable[[Job], Any]


def job_id_for(kind: str, params: JobParams, scope: str = "") -> str:
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
        params: JobParams,
        *,
        job_id: str | None = None,
        owner: str = "",
        thread_id: str | None = None,
        context: JobOwner | None = None,
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
            context=JobOwner(**(context or {})),
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
        self, job_id: str, state: JobState, result: JobResult | None, error: JobError | None
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


# ---- LangGraph server follow-up ----------------------------------------------------------


