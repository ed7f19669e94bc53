"""The staff tools that run as jobs: a month's sales export and a bulk notification.

Each has a plain body that takes the business ``Database`` (so it is testable without a
runner), an adapter that runs it under a ``JobRunner``, and a ToolCard whose handler only
*starts* the job and answers at once with its id. ``query_job_status`` answers "导出好了吗".

The bulk notification sends each message exactly once, whatever happens to the process:
the send (a row in ``notifications``) and its record in ``job_items`` (unique per job and
recipient) are written in one transaction, so a retried or resumed job skips recipients
already done and a crash mid-send leaves neither row.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from tools.db import Database
from tools.errors import ResourceNotFoundError, UserFixableError
from tools.jobs import Job, JobBody, JobContext, JobRunner, job_id_for
from tools.registry import ToolCard, ToolContext

EXPORT_COLUMNS = ("sale_id", "product", "month", "day", "quantity", "amount_cents")
"""Cost price is never exported (as in the sales reports)."""
JOB_ITEMS_SCHEMA = """
CREATE TABLE IF NOT EXISTS job_items (
    job_id       TEXT NOT NULL,
    item         TEXT NOT NULL,
    outcome      TEXT NOT NULL,
    created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (job_id, item)
);
"""
STARTED_MESSAGE = "已开始，完成后通知您"

Progress = Callable[[int, int], None]

Month = Annotated[
    str,
    StringConstraints(strip_whitespace=True, pattern=r"^20\d{2}-(0[1-9]|1[0-2])$"),
    Field(description="The month to export, YYYY-MM, e.g. 2024-06.", examples=["2024-06"]),
]
UserId = Annotated[str, StringConstraints(strip_whitespace=True, pattern=r"^u_\d{5}$")]


class SalesExportRequest(BaseModel):
    """Arguments of a sales export."""

    model_config = ConfigDict(extra="forbid")

    month: Month


class BulkNotificationRequest(BaseModel):
    """Arguments of a bulk notification."""

    model_config = ConfigDict(extra="forbid")

    user_ids: list[UserId] = Field(
        min_length=1,
        max_length=1000,
        description="The customers to notify, as user ids (u_NNNNN); each is sent one message.",
    )
    content: str = Field(min_length=1, max_length=200, description="The message text.")
    channel: Literal["sms", "in_app"] = Field(
        default="in_app", description="sms (text message) or in_app (站内信)."
    )


class JobRef(BaseModel):
    """Arguments naming one job."""

    model_config = ConfigDict(extra="forbid")

    job_id: str = Field(
        pattern=r"^job-[0-9a-f]{16}$",
        description="The job id the start tool returned, e.g. job-0123456789abcdef.",
    )


# ---- bodies -------------------------------------------------------------------------------


def export_sales(
    db: Database,
    month: str,
    out_dir: Path,
    *,
    job_id: str,
    progress: Progress | None = None,
    chunk: int = 50,
) -> dict[str, Any]:
    """Write a month's sales as CSV to ``out_dir/sales-<month>-<job>.csv``; return its path.

    The file is written under a temporary name and renamed, so a reader never sees half a
    file and a resumed job simply writes it again.
    """
    rows = db.query(
        f"SELECT {', '.join(EXPORT_COLUMNS)} FROM sales WHERE month = ? ORDER BY day, product",
        (month,),
    )
    if not rows:
        msg = f"no sales recorded for {month}"
        raise UserFixableError(msg, details={"month": month, "reason": "no_data"})
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"sales-{month}-{job_id}.csv"
    partial = target.with_suffix(".csv.part")
    with partial.open("w", encoding="utf-8", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=EXPORT_COLUMNS)
        writer.writeheader()
        for start in range(0, len(rows), chunk):
            writer.writerows(rows[start : start + chunk])
            if progress is not None:
                progress(min(start + chunk, len(rows)), len(rows))
    os.replace(partial, target)
    return {
        "month": month,
        "path": str(target),
        "rows": len(rows),
        "amount_cents": sum(int(r["amount_cents"]) for r in rows),
    }


def ensure_job_items(db: Database) -> None:
    """Create the per-item record table in the business database (idempotent)."""
    with db.transaction() as conn:
        conn.execute(JOB_ITEMS_SCHEMA)


def send_bulk_notification(
    db: Database,
    *,
    job_id: str,
    user_ids: list[str],
    content: str,
    channel: str,
    progress: Progress | None = None,
    before_commit: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Send ``content`` to each customer once; unknown or non-customer ids are skipped.

    ``before_commit(user_id)`` runs inside each send's transaction (a test seam: a crash
    there must leave no trace of that send).
    """
    ensure_job_items(db)
    recipients = list(dict.fromkeys(user_ids))
    sent = already = 0
    skipped: list[str] = []
    for index, user_id in enumerate(recipients, start=1):
        with db.transaction() as conn:
            done = conn.execute(
                "SELECT outcome FROM job_items WHERE job_id = ? AND item = ?", (job_id, user_id)
            ).fetchone()
            if done is not None:
                already += 1
                if done["outcome"] == "skipped":
                    skipped.append(user_id)
            else:
                user = conn.execute(
                    "SELECT role FROM users WHERE user_id = ?", (user_id,)
                ).fetchone()
                outcome = "sent" if user is not None and user["role"] == "customer" else "skipped"
                conn.execute(
                    "INSERT INTO job_items (job_id, item, outcome) VALUES (?, ?, ?)",
                    (job_id, user_id, outcome),
                )
                if outcome == "sent":
                    conn.execute(
                        "INSERT INTO notifications (user_id, channel, content) VALUES (?, ?, ?)",
                        (user_id, channel, content),
                    )
                    sent += 1
                else:
                    skipped.append(user_id)
                if before_commit is not None:
                    before_commit(user_id)
        if progress is not None:
            progress(index, len(recipients))
    total_sent = db.query_one(
        "SELECT COUNT(*) AS n FROM job_items WHERE job_id = ? AND outcome = 'sent'", (job_id,)
    )
    return {
        "recipients": len(recipients),
        "sent": int(total_sent["n"]) if total_sent else sent,
        "sent_this_attempt": sent,
        "skipped": skipped,
        "already_done": already,
    }


def describe_job(job: Job) -> str:
    """Tell the user where a job stands, in the words of the design ("导出好了吗")."""
    if job.state in ("queued", "running"):
        progress = f"（{job.done}/{job.total}）" if job.total else ""
        return f"还在处理中{progress}，完成后通知您。"
    if job.state == "failed":
        reason = job.error["message"] if job.error else "未知原因"
        return f"任务失败：{reason}"
    result = job.result or {}
    if job.kind == "export_sales":
        month, rows, path = result.get("month", ""), result.get("rows", 0), result.get("path")
        return f"{month} 的销售数据已导出（{rows} 行）：{path}"
    if job.kind == "send_bulk_notification":
        skipped = len(result.get("skipped", []))
        extra = f"，{skipped} 个账号不是客户，已跳过" if skipped else ""
        return f"通知已发送给 {result.get('sent', 0)} 位客户{extra}。"
    return "任务已完成。"


# ---- adapters for the runner --------------------------------------------------------------


def export_sales_job(out_dir: Path) -> JobBody:
    """Return the ``export_sales`` job body writing to ``out_dir`` (``data_dir/exports``)."""

    def body(params: dict[str, Any], ctx: JobContext) -> dict[str, Any]:
        return export_sales(
            _database(ctx), params["month"], out_dir, job_id=ctx.job_id, progress=ctx.progress
        )

    return body


def bulk_notification_job(before_commit: Callable[[str], None] | None = None) -> JobBody:
    """Return the ``send_bulk_notification`` job body."""

    def body(params: dict[str, Any], ctx: JobContext) -> dict[str, Any]:
        return send_bulk_notification(
            _database(ctx),
            job_id=ctx.job_id,
            user_ids=list(params["user_ids"]),
            content=str(params["content"]),
            channel=str(params["channel"]),
            progress=ctx.progress,
            before_commit=before_commit,
        )

    return body


def register_job_bodies(runner: JobRunner, data_dir: Path) -> None:
    """Make both jobs runnable on ``runner`` (exports go to ``data_dir/exports``)."""
    runner.register("export_sales", export_sales_job(data_dir / "exports"))
    runner.register("send_bulk_notification", bulk_notification_job())


def _database(ctx: JobContext) -> Database:
    if not isinstance(ctx.resources, Database):
        msg = "job bodies need the business Database as the runner's resources"
        raise TypeError(msg)
    return ctx.resources


# ---- tool cards ---------------------------------------------------------------------------


def make_job_tools(runner: JobRunner) -> tuple[ToolCard, ...]:
    """Return the cards of the job tools, whose handlers start or read jobs on ``runner``.

    The job id is derived from the task and arguments, so a retried or replayed call finds
    the job it already started instead of starting a second one.
    """

    def start(kind: str, params: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        job = runner.submit(
            kind,
            params,
            job_id=job_id_for(kind, params, scope=f"{ctx.session_id}|{ctx.task_id}"),
            owner=ctx.user_id,
            thread_id=ctx.session_id or None,
            context={"user_id": ctx.user_id, "user_role": ctx.user_role},
        )
        return {**job.public(), "message": STARTED_MESSAGE}

    def start_sales_export(args: SalesExportRequest, ctx: ToolContext) -> dict[str, Any]:
        return start("export_sales", args.model_dump(), ctx)

    def start_bulk_notification(args: BulkNotificationRequest, ctx: ToolContext) -> dict[str, Any]:
        return start("send_bulk_notification", args.model_dump(), ctx)

    def query_job_status(args: JobRef, ctx: ToolContext) -> dict[str, Any]:
        job = runner.status(args.job_id)
        if job is None:
            msg = f"job {args.job_id} not found"
            raise ResourceNotFoundError(msg, details={"job_id": args.job_id})
        return job.public()

    def job_owner(args: JobRef, ctx: ToolContext) -> str | None:
        job = runner.status(args.job_id)
        return None if job is None else job.owner

    return (
        ToolCard(
            name="export_sales_report",
            description="Start exporting one month's sales (every sale, no cost price) to a "
            "CSV file. Runs in the background and returns a job id at once.",
            when_to_use="A staff member asks for a month's sales as a file or an export.",
            when_not_to_use="Questions answerable in a sentence (use query_sales_report); "
            "customers; cost or margin data.",
            parameters=SalesExportRequest,
            returns="job_id and state (queued/running); the file path comes with the result.",
            handler=start_sales_export,
            idempotent=True,
            permission="report:read",
            domain="report",
            timeout_s=5.0,
            summarize=lambda d: f"export job {d['job_id']} {d['state']}",
        ),
        ToolCard(
            name="send_bulk_notification",
            description="Start sending one message to each customer in a list. Runs in the "
            "background; every customer gets it exactly once, even if the job is retried.",
            when_to_use="A service agent must notify many customers at once (a delay, an "
            "outage, a recall).",
            when_not_to_use="One customer about one order (use send_notification); marketing "
            "the customers did not agree to; anything a customer asks for themselves.",
            parameters=BulkNotificationRequest,
            returns="job_id and state; the result counts messages sent and skipped ids.",
            handler=start_bulk_notification,
            idempotent=True,
            permission="notify:bulk",
            domain="notify",
            risk="high",
            timeout_s=5.0,
            summarize=lambda d: f"bulk notification job {d['job_id']} {d['state']}",
        ),
        ToolCard(
            name="query_job_status",
            description="Look up a background job this user started: its state, progress, "
            "result (such as the export file path) or failure reason.",
            when_to_use="The user asks whether an export or a bulk send is done (导出好了吗).",
            when_not_to_use="Order, flight or appointment status; jobs started by others.",
            parameters=JobRef,
            returns="state, done/total, result or error.",
            handler=query_job_status,
            idempotent=True,
            permission="job:read",
            domain="job",
            owner_of=job_owner,
            timeout_s=2.0,
            summarize=lambda d: f"job {d['job_id']} {d['state']} ({d['done']}/{d['total']})",
        ),
    )
