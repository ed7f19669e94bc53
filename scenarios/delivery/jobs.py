"""The bulk notification job: one message to each customer in a list, each sent once.

The send (a row in ``notifications``) and its record in ``job_items`` (unique per job and
recipient) are written in one transaction, so a retried or resumed job skips recipients
already done and a crash mid-send leaves neither row. High risk: the card needs the user's
confirmation before the job starts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from tools.db import Database, Ledger
from tools.job_bodies import job_database, start_job
from tools.jobs import JobBody, JobContext, JobRunner
from tools.registry import ToolCard, ToolContext

KIND = "send_bulk_notification"
JOB_ITEMS_SCHEMA = """
CREATE TABLE IF NOT EXISTS job_items (
    job_id       TEXT NOT NULL,
    item         TEXT NOT NULL,
    outcome      TEXT NOT NULL,
    created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (job_id, item)
);
"""

UserId = Annotated[str, StringConstraints(strip_whitespace=True, pattern=r"^u_\d{5}$")]


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
    progress: Callable[[int, int], None] | None = None,
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
                    # one ledger row per recipient and job, next to its one notification
                    Ledger(conn, f"job:{job_id}:{user_id}", "send_bulk_notification").record(
                        {"job_id": job_id, "user_id": user_id, "channel": channel}
                    )
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
    row = db.query_one(
        "SELECT COUNT(*) AS n FROM job_items WHERE job_id = ? AND outcome = 'sent'", (job_id,)
    )
    total_sent = int(row["n"]) if row else sent
    extra = f"，{len(skipped)} 个账号不是客户，已跳过" if skipped else ""
    return {
        "recipients": len(recipients),
        "sent": total_sent,
        "sent_this_attempt": sent,
        "skipped": skipped,
        "already_done": already,
        "summary": f"通知已发送给 {total_sent} 位客户{extra}。",
    }


def bulk_notification_job(before_commit: Callable[[str], None] | None = None) -> JobBody:
    """Return the job body (``before_commit``: the crash-test seam)."""

    def body(params: dict[str, Any], ctx: JobContext) -> dict[str, Any]:
        return send_bulk_notification(
            job_database(ctx),
            job_id=ctx.job_id,
            user_ids=list(params["user_ids"]),
            content=str(params["content"]),
            channel=str(params["channel"]),
            progress=ctx.progress,
            before_commit=before_commit,
        )

    return body


def delivery_job_tools(runner: JobRunner) -> tuple[ToolCard, ...]:
    """Register the body on ``runner`` and return the card that starts it."""
    runner.register(KIND, bulk_notification_job())

    def start_bulk_notification(args: BulkNotificationRequest, ctx: ToolContext) -> dict[str, Any]:
        return start_job(runner, KIND, args.model_dump(), ctx)

    return (
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
    )
