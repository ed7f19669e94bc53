"""What every job tool shares: the runner behind the cards, starting a job, describing one.

A job tool's handler only *starts* the job (``start_job``) and answers at once with its id
and "已开始，完成后通知您"; ``describe_job`` tells the user where a job stands. The
scenario-specific bodies and cards live with their scenarios (``scenarios/sales/jobs.py``,
``scenarios/delivery/jobs.py``, and the status card in ``scenarios/jobs``).

Cards are declared once, at import, but a runner belongs to one business database (one
``Services``): ``JOBS`` (a ``JobHub``) builds the runner of a database on the first job
call that needs it (``JobRunner.from_settings``, every defined body registered, the sweeper
started then, never at import) and hands the same one to every later call. A card's handler
reaches it through its ``ToolContext`` (``JOBS.runner_for(ctx)``). An embedded graph (one
with a checkpointer) registers a follow-up there, which ``start_job`` attaches to each job
as its completion callback.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from config.settings import Settings
from jobs.runner import JobBody, JobCallback, JobContext, JobRunner, job_id_for
from jobs.store import Job, JobAnswer, JobParams, JobResult
from storage.db import Database, data_dir
from tools.registry.context import ToolContext

STARTED_MESSAGE = "已开始，完成后通知您"


class JobRef(BaseModel):
    """Arguments naming one job."""

    model_config = ConfigDict(extra="forbid")

    job_id: str | None = Field(
        default=None,
        pattern=r"^job-[0-9a-f]{16}$",
        description="The job id the start tool returned, e.g. job-0123456789abcdef; "
        "omitted: the user's latest job (on this conversation first).",
    )


BodyFactory = Callable[[Settings], JobBody]
"""Builds a job body for one configuration (e.g. where exports are written)."""
RunnerSource = JobRunner | Callable[[ToolContext], JobRunner]
"""A card's runner: a fixed one (tests, scripts) or looked up per call (``JOBS.runner_for``)."""


class JobHub:
    """One job runner per business database, built on first use, and the bodies they run.

    Scenario modules ``define`` their job kinds at import; a runner is only built (and its
    sweeper thread started, which also resumes jobs a dead process left) when a tool call
    first needs it. Tests ``install`` a runner of their own (an injected clock, an
    in-memory store) for a database instead.
    """

    def __init__(self) -> None:
        """Start empty."""
        self._factories: dict[str, BodyFactory] = {}
        self._runners: dict[int, tuple[Any, JobRunner]] = {}
        self._follow_ups: dict[int, tuple[Any, JobCallback]] = {}
        self._lock = threading.Lock()

    def define(self, kind: str, factory: BodyFactory) -> None:
        """Declare the body of ``kind``; every runner built later registers it."""
        self._factories[kind] = factory

    def install(self, resources: Any, runner: JobRunner, settings: Settings) -> JobRunner:
        """Use ``runner`` for ``resources``, registering the defined bodies it lacks."""
        for kind, factory in self._factories.items():
            if kind not in runner.bodies:
                runner.register(kind, factory(settings))
        runner.on_orphan = self._orphan_follow_up(resources)
        with self._lock:
            self._runners[id(resources)] = (resources, runner)
        return runner

    def runner(self, settings: Settings, resources: Any) -> JobRunner:
        """Return the runner of ``resources``, building and starting it on first use."""
        with self._lock:
            known = self._runners.get(id(resources))
            if known is not None:
                return known[1]
            runner = JobRunner.from_settings(
                settings, resources=resources, on_orphan=self._orphan_follow_up(resources)
            )
            for kind, factory in self._factories.items():
                runner.register(kind, factory(settings))
            self._runners[id(resources)] = (resources, runner)
        runner.start_sweeper()  # resumes jobs a dead process left running, then sweeps
        return runner

    def runner_for(self, ctx: ToolContext) -> JobRunner:
        """Return the runner of the call's business database."""
        return self.runner(ctx.settings, ctx.resources)

    def _orphan_follow_up(self, resources: Any) -> JobCallback:
        """Tell the thread of a job resumed after a restart (its start callback died)."""

        def orphan(job: Job) -> None:
            callback = self.follow_up(resources)
            if callback is not None:
                callback(job)

        return orphan

    def set_follow_up(self, resources: Any, callback: JobCallback | None) -> None:
        """Call ``callback(job)`` when a job started on ``resources`` ends (``None``: stop)."""
        with self._lock:
            if callback is None:
                self._follow_ups.pop(id(resources), None)
            else:
                self._follow_ups[id(resources)] = (resources, callback)

    def follow_up(self, resources: Any) -> JobCallback | None:
        """Return the follow-up registered for ``resources``, if any."""
        with self._lock:
            known = self._follow_ups.get(id(resources))
        return None if known is None else known[1]

    def forget(self, resources: Any) -> JobRunner | None:
        """Drop (and return) the runner of ``resources``, e.g. when its database closes."""
        with self._lock:
            self._follow_ups.pop(id(resources), None)
            known = self._runners.pop(id(resources), None)
        return None if known is None else known[1]


JOBS = JobHub()
"""The process's job hub (one runner per business database)."""


def runner_of(source: RunnerSource, ctx: ToolContext) -> JobRunner:
    """Resolve a card's runner for one call."""
    return source if isinstance(source, JobRunner) else source(ctx)


def exports_dir(settings: Settings) -> Any:
    """Return where export files are written (``<data dir>/exports``)."""
    return data_dir(settings) / "exports"


def start_job(
    runner: JobRunner, kind: str, params: JobParams, ctx: ToolContext
) -> JobAnswer:
    """Start (or find) the job for this task and arguments; answer at once.

    The job id is derived from the task and arguments, so a retried or replayed call finds
    the job it already started instead of starting a second one.
    The follow-up an embedded graph registered for this database becomes the job's
    completion callback, so the thread hears of the end without anyone typing.
    """
    job = runner.submit(
        kind,
        params,
        job_id=job_id_for(kind, params, scope=f"{ctx.session_id}|{ctx.task_id}"),
        owner=ctx.user_id,
        thread_id=ctx.session_id or None,
        context={"user_id": ctx.user_id, "user_role": ctx.user_role},
        on_done=JOBS.follow_up(ctx.resources),
    )
    return {**job.public(), "message": STARTED_MESSAGE}


def job_database(ctx: JobContext) -> Database:
    """Return the business database a runner was given; anything else is a wiring bug."""
    if not isinstance(ctx.resources, Database):
        msg = "job bodies need the business Database as the runner's resources"
        raise TypeError(msg)
    return ctx.resources


def describe_job(job: Job, language: str = "zh") -> str:
    """Tell the user where a job stands; a finished body's result carries its ``summary``.

    The summary (file path, counts) is the body's own sentence, in Chinese; the frame
    around it follows the user's language.
    """
    english = language == "en"
    if job.state in ("queued", "running"):
        progress = f"（{job.done}/{job.total}）" if job.total else ""
        if english:
            return (
                f"Still running{progress.replace('（', ' (').replace('）', ')')}; "
                "I will tell you when it is done."
            )
        return f"还在处理中{progress}，完成后通知您。"
    if job.state == "failed":
        reason = (
            job.error["message"] if job.error else ("unknown reason" if english else "未知原因")
        )
        return f"The job failed: {reason}" if english else f"任务失败：{reason}"
    result: JobResult = job.result or {"summary": ""}
    if english:
        path = result.get("path")
        return (
            f"The job is done: {path}"
            if path
            else f"The job is done. {result.get('summary', '')}".strip()
        )
    return str(result.get("summary") or "任务已完成。")


def latest_job(runner: JobRunner, owner: str, thread_id: str | None) -> Job | None:
    """Return ``owner``'s newest job, preferring one started on ``thread_id``."""
    mine = [job for job in runner.store.list() if job.owner == owner]
    here = [job for job in mine if thread_id and job.thread_id == thread_id]
    pool = here or mine
    return max(pool, key=lambda job: job.created_at) if pool else None
