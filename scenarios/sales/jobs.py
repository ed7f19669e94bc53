"""The sales export job: a month's sales as a CSV file, for the analyst role.

``export_sales`` is the plain body (testable with just the business database);
``export_sales_job`` runs it under a ``JobRunner``; ``sales_job_tools`` gives the card
whose handler starts the job and returns its id at once.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from tools.db import Database
from tools.errors import UserFixableError
from tools.job_bodies import job_database, start_job
from tools.jobs import JobBody, JobContext, JobRunner
from tools.registry import ToolCard, ToolContext

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


def export_sales(
    db: Database,
    month: str,
    out_dir: Path,
    *,
    job_id: str,
    progress: Callable[[int, int], None] | None = None,
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
        "summary": f"{month} 的销售数据已导出（{len(rows)} 行）：{target}",
    }


def export_sales_job(out_dir: Path) -> JobBody:
    """Return the job body writing to ``out_dir`` (``data_dir/exports``)."""

    def body(params: dict[str, Any], ctx: JobContext) -> dict[str, Any]:
        return export_sales(
            job_database(ctx), params["month"], out_dir, job_id=ctx.job_id, progress=ctx.progress
        )

    return body


def sales_job_tools(runner: JobRunner, data_dir: Path) -> tuple[ToolCard, ...]:
    """Register the body on ``runner`` and return the card that starts it."""
    runner.register(KIND, export_sales_job(data_dir / "exports"))

    def export_sales_report(args: SalesExportRequest, ctx: ToolContext) -> dict[str, Any]:
        return start_job(runner, KIND, args.model_dump(), ctx)

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
            handler=export_sales_report,
            idempotent=True,
            permission="report:read",
            domain="report",
            timeout_s=5.0,
            summarize=lambda d: f"export job {d['job_id']} {d['state']}",
        ),
    )
