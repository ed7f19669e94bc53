"""The sales export job: a month's sales as a CSV file, for the analyst role.

``export_sales`` is the plain body (testable with just the business database);
``export_sales_job`` runs it under a ``JobRunner``; ``export_card`` is the card whose handler
starts the job and returns its id at once. ``SALES_JOB_TOOLS`` is that card on the
process's job hub (``jobs.bodies.JOBS``), as the scenario declares it; the
``EXPORT_SALES`` task's cues, month extractor, wording and describer are here too, so the
scenario's ``__init__`` only merges them with the sales questions'.
"""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from contract.scenario import Describer, SlotResult, Speaker, Wording
from jobs.bodies import (
    JOBS,
    STARTED_MESSAGE,
    RunnerSource,
    exports_dir,
    job_database,
    runner_of,
    start_job,
)
from jobs.runner import JobBody, JobContext, JobRunner
from jobs.store import JobAnswer, JobParams, JobResult
from state import AgentState, ToolResult
from storage.db import Database
from tools.executor.envelope import result_data
from tools.executor.errors import UserFixableError
from tools.registry.cards import ToolCard
from tools.registry.context import ToolContext

KIND = "export_sales"
EXPORT_COLUMNS = ("sale_id", "product", "month", "day", "quantity", "amount_cents")
"""Cost price is never exported (as in the sales reports)."""

Month = Annotated[
    str,
    StringConstraints(strip_whitespace=True, pattern=r"^20\d{2}-(0[1-9]|1[0-2])$"),
    Field(description="The month to export, YYYY-MM, e.g. 2024-06.", examples=["2024-06"]),
]


class SalesExportRequest(BaseModel):
    """Arguments of a sales export."""

    model_config = ConfigDict(extra="forbid")

    month: Month


class SalesExport(JobResult):
    """What an export job's body answers (``path``: the CSV written)."""

    month: str
    rows: int
    amount_cents: int


def export_sales(
    db: Database,
    month: str,
    out_dir: Path,
    *,
    job_id: str,
    progress: Callable[[int, int], None] | None = None,
    chunk: int = 50,
) -> SalesExport:
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
        "summary": f"{month} 的销售数据已导出（{len(rows)} 行）：{target}",
    }


def export_sales_job(out_dir: Path) -> JobBody:
    """Return the job body writing to ``out_dir`` (``data_dir/exports``)."""

    def body(params: JobParams, ctx: JobContext) -> SalesExport:
        month = str(params["month"])  # the SalesExportRequest the tool validated
        return export_sales(
            job_database(ctx), month, out_dir, job_id=ctx.job_id, progress=ctx.progress
        )

    return body


def export_card(runner: RunnerSource = JOBS.runner_for) -> ToolCard:
    """Return the card that starts an export on ``runner`` (the hub's, per call, by default)."""

    def export_sales_report(args: SalesExportRequest, ctx: ToolContext) -> JobAnswer:
        return start_job(runner_of(runner, ctx), KIND, args.model_dump(), ctx)

    return ToolCard(
        name="export_sales_report",
        description="Start exporting one month's sales (every sale, no cost price) to a "
        "CSV file. Runs in the background and returns a job id at once.",
        when_to_use="A staff member asks for a month's sales as a file or an export.",
        when_not_to_use="Questions answerable in a sentence (use query_sales_report); "
        "customers; cost or margin data.",
        parameters=SalesExportRequest,
        returns="job_id and state (queued/running); the file path comes with the result.",
        handler=export_sales_report,
        idempotent=True,
        permission="report:export",
        domain="report",
        timeout_s=5.0,
        summarize=lambda d: f"export job {d['job_id']} {d['state']}",
    )


def sales_job_tools(runner: JobRunner, data_dir: Path) -> tuple[ToolCard, ...]:
    """Register the body on ``runner`` and return the card that starts it (scripts, tests)."""
    runner.register(KIND, export_sales_job(data_dir / "exports"))
    return (export_card(runner),)


JOBS.define(KIND, lambda settings: export_sales_job(exports_dir(settings)))
SALES_JOB_TOOLS: tuple[ToolCard, ...] = (export_card(),)
"""The export card as the scenario declares it: its runner is looked up per call."""


# ---- understanding and wording of EXPORT_SALES ----------------------------------------------


_MONTHS_EN = (
    "january february march april may june july august september october november december"
).split()


def month_of(text: str, today: date) -> str | None:
    """Find the month asked for: 2024-06, 2024年6月, 6月, June, 上个月/last month, 本月."""
    lowered = text.lower()
    explicit = re.search(r"(20\d{2})\s*[年\-/.]\s*(\d{1,2})", text)
    if explicit and 1 <= int(explicit.group(2)) <= 12:
        return f"{int(explicit.group(1)):04d}-{int(explicit.group(2)):02d}"
    if re.search(r"上个?月|last month|previous month", lowered):
        year, month = (today.year, today.month - 1) if today.month > 1 else (today.year - 1, 12)
        return f"{year:04d}-{month:02d}"
    if re.search(r"本月|这个月|this month", lowered):
        return f"{today.year:04d}-{today.month:02d}"
    number = re.search(r"(?<!\d)(\d{1,2})\s*月", text)
    named = next((i + 1 for i, m in enumerate(_MONTHS_EN) if re.search(rf"\b{m}\b", lowered)), None)
    found: int | None = int(number.group(1)) if number else named
    if found is None or not 1 <= found <= 12:
        return None
    year = today.year if found <= today.month else today.year - 1  # the latest such month
    return f"{year:04d}-{found:02d}"


def extract_export(text: str, intent: str, *, today: date) -> SlotResult:
    """Return the month of an export request, if the message names one."""
    month = month_of(text, today)
    return SlotResult(slots={"month": month}) if month else SlotResult()


WORDING: Wording = {
    "intent.EXPORT_SALES": {"zh": "导出销售报表", "en": "export a month's sales"},
    "ask.month": {
        "zh": "好的，我来帮您{task}。请问导出哪个月？例如“2024 年 6 月”或“上个月”。",
        "en": "Sure, I can help you {task}. Which month? E.g. “June 2024” or “last month”.",
    },
    "slot.month": {"zh": "月份", "en": "month"},
    "export_started": {
        "zh": STARTED_MESSAGE + "（{month}，任务号 {job_id}）。可随时问我“导出好了吗”。",
        "en": "Started; I will tell you when it is done ({month}, job {job_id}). "
        "Ask “is the export done?” any time.",
    },
}


def describe_export(result: ToolResult, state: AgentState, speaker: Speaker) -> str | None:
    """Say the export started (with its job id); why it could not is the generic sentence's."""
    data = result_data(result, JobAnswer)
    if result.get("status") == "success":
        month = (state.get("slots") or {}).get("month", "")
        return speaker.say("export_started", month=month, job_id=data.get("job_id", ""))
    return None


DESCRIBE: dict[str, Describer] = {"export_sales_report": describe_export}
