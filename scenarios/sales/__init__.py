"""Sales for staff: read-only questions (checked SQL) and month exports as CSV jobs.

The question task's cues and extractor are in ``understanding``; the export task's in
``jobs``. They are merged here, and the extractor dispatches by intent.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from contract.scenario import Scenario, SlotResult, TaskSpec, load_examples
from scenarios.sales import jobs, understanding
from scenarios.sales.seed import SEED
from scenarios.sales.tools import SALES_TOOLS
from scenarios.sales.wording import DESCRIBE, WORDING


def extract(text: str, intent: str, *, today: date) -> SlotResult:
    """Extract with the export's extractor for its intent, else the questions'."""
    if intent == "EXPORT_SALES":
        return jobs.extract_export(text, intent, today=today)
    return understanding.extract(text, intent, today=today)


SCENARIO = Scenario(
    examples=load_examples(Path(__file__).parent / "examples.yaml"),
    name="sales",
    tasks=(
        TaskSpec(
            intent="QUERY_SALES",
            tool="query_sales_report",
            required_slots=("question",),
            handoff_on_failure=False,
        ),
        TaskSpec(
            intent="EXPORT_SALES",
            tool="export_sales_report",
            required_slots=("month",),
            handoff_on_failure=False,
        ),
    ),
    cards=(*SALES_TOOLS, *jobs.SALES_JOB_TOOLS),
    grants={"analyst": frozenset({"report:read", "report:export"})},
    extract=extract,
    wording={**WORDING, **jobs.WORDING},
    describe={**DESCRIBE, **jobs.DESCRIBE},
    seed=SEED,
)
