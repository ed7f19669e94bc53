"""The job-status tool: "导出好了吗" for any job kind, read from the runner's store.

It answers from the store every process shares, so a worker that did not run the job (or
one started after a restart) still knows where it stands.
"""

from __future__ import annotations

from jobs.bodies import JOBS, JobRef, RunnerSource, describe_job, latest_job, runner_of
from jobs.store import Job, JobAnswer
from tools.executor.errors import ResourceNotFoundError
from tools.registry.cards import ToolCard
from tools.registry.context import ToolContext


def job_status_card(runner: RunnerSource = JOBS.runner_for) -> ToolCard:
    """Return the ``query_job_status`` card, reading jobs on ``runner``'s store."""

    def find(args: JobRef, ctx: ToolContext) -> Job | None:
        source = runner_of(runner, ctx)
        if args.job_id is None:
            return latest_job(source, ctx.user_id, ctx.session_id or None)
        return source.status(args.job_id)

    def query_job_status(args: JobRef, ctx: ToolContext) -> JobAnswer:
        job = find(args, ctx)
        if job is None:
            msg = f"job {args.job_id} not found" if args.job_id else "no job started yet"
            raise ResourceNotFoundError(msg, details={"job": args.job_id})
        return {**job.public(), "message": describe_job(job)}

    def job_owner(args: JobRef, ctx: ToolContext) -> str | None:
        job = find(args, ctx)
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


JOB_TOOLS: tuple[ToolCard, ...] = (job_status_card(),)
