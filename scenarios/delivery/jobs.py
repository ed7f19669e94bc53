"""The bulk notification job: one message to each customer in a list, each sent once.

The send (a row in ``notifications``) and its record in ``job_items`` (unique per job and
recipient) are written in one transaction, so a retried or resumed job skips recipients
already done and a crash mid-send leaves neither row. High risk: the card needs the user's
confirmation before the job starts (the generic propose → confirm path asks for it).

The ``NOTIFY_CUSTOMERS`` task names its recipients by an audience ("所有配送中订单的客户"):
the start tool resolves it to user ids once, at start, so the job's list is fixed and a
retried job sends to the same customers. Its cues, extractor, wording and describer are
here; the scenario's ``__init__`` merges them with the order tasks'.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date
from typing import Annotated, Literal, Self, TypedDict, cast

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    model_validator,
)

from config.limits import JsonValue
from contract.scenario import Describer, SlotResult, Speaker, Wording
from jobs.bodies import JOBS, RunnerSource, job_database, runner_of, start_job
from jobs.runner import JobBody, JobContext, JobRunner
from jobs.store import JobAnswer, JobParams, JobResult
from state import AgentState, SlotValues, ToolResult
from storage.db import Database, Ledger
from tools.executor.envelope import result_data
from tools.executor.errors import UserFixableError
from tools.registry.cards import ToolCard
from tools.registry.context import ToolContext

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


Audience = Literal["delivering"]
AUDIENCES: dict[str, str] = {
    "delivering": "SELECT DISTINCT o.user_id FROM orders o JOIN users u ON u.user_id = o.user_id"
    " WHERE o.status = 'delivering' AND u.role = 'customer' ORDER BY o.user_id",
}
"""Named audiences and how to find them (customers only, never staff)."""


class BulkNotificationRequest(BaseModel):
    """Arguments of a bulk notification: the recipients (ids or an audience), text, channel.

    ``notice`` and ``send_via`` also accept their older names ``content`` and ``channel``.
    """

    model_config = ConfigDict(extra="forbid")

    user_ids: list[UserId] | None = Field(
        default=None,
        min_length=1,
        max_length=1000,
        description="The customers to notify, as user ids (u_NNNNN); each is sent one message.",
    )
    audience: Audience | None = Field(
        default=None,
        description="Instead of user_ids: delivering = every customer with an order in delivery.",
    )
    notice: str = Field(
        min_length=1,
        max_length=200,
        validation_alias=AliasChoices("notice", "content"),
        description="The message text.",
    )
    send_via: Literal["sms", "in_app"] = Field(
        default="in_app",
        validation_alias=AliasChoices("send_via", "channel"),
        description="sms (text message) or in_app (站内信).",
    )

    @model_validator(mode="after")
    def _one_recipient_list(self) -> Self:
        if (self.user_ids is None) == (self.audience is None):
            msg = "give either user_ids or audience"
            raise ValueError(msg)
        return self


class BulkParams(TypedDict):
    """A bulk notification job's parameters, as ``start_bulk_notification`` stores them."""

    user_ids: list[str]
    content: str
    channel: str


class BulkNotificationResult(JobResult):
    """What a bulk notification job's body answers."""

    recipients: int
    sent: int
    sent_this_attempt: int
    skipped: list[str]
    already_done: int


def recipients(db: Database, args: BulkNotificationRequest) -> list[str]:
    """Resolve the request to user ids, once, when the job starts."""
    if args.user_ids is not None:
        return list(dict.fromkeys(args.user_ids))
    assert args.audience is not None  # noqa: S101  (the validator requires one)
    ids = [str(row["user_id"]) for row in db.query(AUDIENCES[args.audience])]
    if not ids:
        msg = f"nobody is in the audience {args.audience!r} now"
        raise UserFixableError(msg, details={"audience": args.audience, "reason": "empty"})
    return ids


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
) -> BulkNotificationResult:
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

    def body(params: JobParams, ctx: JobContext) -> BulkNotificationResult:
        stored = cast("BulkParams", params)  # what ``start_bulk_notification`` stored
        return send_bulk_notification(
            job_database(ctx),
            job_id=ctx.job_id,
            user_ids=list(stored["user_ids"]),
            content=str(stored["content"]),
            channel=str(stored["channel"]),
            progress=ctx.progress,
            before_commit=before_commit,
        )

    return body


def bulk_card(runner: RunnerSource = JOBS.runner_for) -> ToolCard:
    """Return the card that starts a bulk notification on ``runner`` (the hub's by default)."""

    def start_bulk_notification(args: BulkNotificationRequest, ctx: ToolContext) -> JobAnswer:
        params: dict[str, JsonValue] = {
            "user_ids": [*recipients(ctx.database(), args)],
            "content": args.notice,
            "channel": args.send_via,
        }
        return start_job(runner_of(runner, ctx), KIND, params, ctx)

    return ToolCard(
        name="send_bulk_notification",
        description="Start sending one message to each customer in a list (or an audience, "
        "such as every customer with an order in delivery). Runs in the background; every "
        "customer gets it exactly once, even if the job is retried.",
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
    )


def delivery_job_tools(runner: JobRunner) -> tuple[ToolCard, ...]:
    """Register the body on ``runner`` and return the card that starts it (scripts, tests)."""
    runner.register(KIND, bulk_notification_job())
    return (bulk_card(runner),)


JOBS.define(KIND, lambda settings: bulk_notification_job())
DELIVERY_JOB_TOOLS: tuple[ToolCard, ...] = (bulk_card(),)
"""The bulk card as the scenario declares it: its runner is looked up per call."""


# ---- understanding and wording of NOTIFY_CUSTOMERS ----------------------------------------


_DELIVERING = re.compile(r"配送中|派送中|在途|in delivery|out for delivery|being delivered")
_SMS = re.compile(r"短信|sms|text message|by text", re.IGNORECASE)
_IN_APP = re.compile(r"站内信|app ?消息|in-app|in app", re.IGNORECASE)
_NOTICE = re.compile(r"[:：]\s*(.+)$|[「“\"](.+?)[」”\"]", re.DOTALL)


def extract_notify(text: str, intent: str, *, today: date) -> SlotResult:
    """Find the audience, the channel and the message text (after a colon, or quoted)."""
    slots: SlotValues = {}
    if _DELIVERING.search(text):
        slots["audience"] = "delivering"
    if _SMS.search(text):
        slots["send_via"] = "sms"
    elif _IN_APP.search(text):
        slots["send_via"] = "in_app"
    notice = _NOTICE.search(text)
    if notice:
        body = (notice.group(1) or notice.group(2) or "").strip()
        if body and len(body) <= 200:
            slots["notice"] = body
    return SlotResult(slots=slots)


WORDING: Wording = {
    "intent.NOTIFY_CUSTOMERS": {"zh": "批量通知客户", "en": "notify many customers"},
    "ask.audience": {
        "zh": "好的，我来帮您{task}。请问通知哪些客户？目前支持“所有配送中订单的客户”。",
        "en": "Sure, I can help you {task}. Which customers? For now: "
        "“all customers with an order in delivery”.",
    },
    "slot.audience": {"zh": "通知对象", "en": "recipients"},
    "ask.notice": {
        "zh": "请问要发送的内容是什么？可以写在冒号后面，例如“……发短信：餐品将延迟送达”。",
        "en": "What should the message say? Put it after a colon, e.g. “… by SMS: your meal "
        "will be late”.",
    },
    "slot.notice": {"zh": "通知内容", "en": "message text"},
    "ask.send_via": {
        "zh": "请问通过短信还是站内信发送？",
        "en": "Should it go by SMS or as an in-app message?",
    },
    "slot.send_via": {"zh": "发送渠道", "en": "channel"},
    "bulk_started": {
        "zh": "已开始，完成后通知您（任务号 {job_id}）。可随时问我“发完了吗”。",
        "en": "Started; I will tell you when it is done (job {job_id}). "
        "Ask “is the job done?” any time.",
    },
}


def describe_bulk(result: ToolResult, state: AgentState, speaker: Speaker) -> str | None:
    """Say the sending started (with its job id); why it did not is the generic sentence's."""
    data = result_data(result, JobAnswer)
    if result.get("status") == "success":
        return speaker.say("bulk_started", job_id=data.get("job_id", ""))
    return None


DESCRIBE: dict[str, Describer] = {"send_bulk_notification": describe_bulk}
