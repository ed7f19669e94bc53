"""What every job tool shares: starting a job from a tool call, and asking about it.

A job tool's handler only *starts* the job (``start_job``) and answers at once with its id
and "已开始，完成后通知您"; ``query_job_status`` answers "导出好了吗" for any job kind;
``describe_job`` tells the user where a job stands. The scenario-specific bodies and cards
live with their scenarios (``scenarios/sales/jobs.py``, ``scenarios/delivery/jobs.py``).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tools.db import Database
from tools.errors import ResourceNotFoundError
from tools.jobs import Job, JobContext, JobRunner, job_id_for
from tools.registry import ToolCard, ToolContext

STARTED_MESSAGE = "已开始，完成后通知您"


class JobRef(BaseModel):
    """Arguments naming one job."""

    model_config = ConfigDict(extra="forbid")

    job_id: str = Field(
        pattern=r"^job-[0-9a-f]{16}$",
        description="The job id the start tool returned, e.g. job-0123456789abcdef.",
    )


def start_job(
    runner: JobRunner, kind: str, params: dict[str, Any], ctx: ToolContext
) -> dict[str, Any]:
    """Start (or find) the job for this task and arguments; answer at once.

    The job id is derived from the task and arguments, so a retried or replayed call finds
    the job it already started instead of starting a second one.
    """
    job = runner.submit(
        kind,
        params,
        job_id=job_id_for(kind, params, scope=f"{ctx.session_id}|{ctx.task_id}"),
        owner=ctx.user_id,
        thread_id=ctx.session_id or None,
        context={"user_id": ctx.user_id, "user_role": ctx.user_role},
    )
    return {**job.public(), "message": STARTED_MESSAGE}


def job_database(ctx: JobContext) -> Database:
    """Return the business database a runner was given; anything else is a wiring bug."""
    if not isinstance(ctx.resources, Database):
        msg = "job bodies need the business Database as the runner's resources"
        raise TypeError(msg)
    return ctx.resources


def describe_job(job: Job) -> str:
    """Tell the user where a job stands; a finished body's result carries its ``summary``."""
    if job.state in ("queued", "running"):
        progress = f"（{job.done}/{job.total}）" if job.total else ""
        return f"还在处理中{progress}，完成后通知您。"
    if job.state == "failed":
        reason = job.error["message"] if job.error else "未知原因"
        return f"任务失败：{reason}"
    return str((job.result or {}).get("summary") or "任务已完成。")


def job_status_card(runner: JobRunner) -> ToolCard:
    """Return the ``query_job_status`` card, reading jobs on ``runner``'s store."""

    def query_job_status(args: JobRef, ctx: ToolContext) -> dict[str, Any]:
        job = runner.status(args.job_id)
        if job is None:
            msg = f"job {args.job_id} not found"
            raise ResourceNotFoundError(msg, details={"job_id": args.job_id})
        return {**job.public(), "message": describe_job(job)}

    def job_owner(args: JobRef, ctx: ToolContext) -> str | None:
        job = runner.status(args.job_id)
        return None if job is None else job.owner

    return ToolCard(
        name="query_job_status",
        description="Look up a background job this user started: its state, progress, "
        "result (such as the export file path) or failure reason.",
        when_to_use="The user asks whether an export or a bulk send is done (导出好了吗).",
        when_not_to_use="Order, flight or appointment status; jobs started by others.",
        parameters=JobRef,
        returns="state, done/total, result or error, and a sentence for the user.",
        handler=query_job_status,
        idempotent=True,
        permission="job:read",
        domain="job",
        owner_of=job_owner,
        timeout_s=2.0,
        summarize=lambda d: f"job {d['job_id']} {d['state']} ({d['done']}/{d['total']})",
    )
