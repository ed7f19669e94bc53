"""Read-only sales questions for staff: checked SQL on a read-only connection."""

from __future__ import annotations

from nodes.tasks import Scenario, TaskSpec
from scenarios.sales import understanding
from scenarios.sales.seed import SEED
from scenarios.sales.tools import SALES_TOOLS
from scenarios.sales.wording import DESCRIBE, WORDING

SCENARIO = Scenario(
    name="sales",
    tasks=(
        TaskSpec(
            intent="QUERY_SALES",
            tool="query_sales_report",
            required_slots=("question",),
            handoff_on_failure=False,
        ),
    ),
    cards=SALES_TOOLS,
    grants={"analyst": frozenset({"report:read"})},
    cues=understanding.CUES,
    extract=understanding.extract,
    support=understanding.support,
    wording=WORDING,
    describe=DESCRIBE,
    seed=SEED,
)
