"""Background jobs: "导出好了吗" / "is the export done?" for the jobs staff tools start.

The tools that start jobs live with their scenarios (the sales export, the delivery bulk
notification); this scenario only answers where the user's latest job stands. The end of
a job reaches the thread without a question too (``nodes.job_update``).
"""

from __future__ import annotations

from pathlib import Path

from contract.scenario import Scenario, TaskSpec, load_examples
from scenarios.jobs import understanding
from scenarios.jobs.tools import JOB_TOOLS
from scenarios.jobs.wording import DESCRIBE, WORDING

SCENARIO = Scenario(
    examples=load_examples(Path(__file__).parent / "examples.yaml"),
    name="jobs",
    tasks=(
        TaskSpec(
            intent="CHECK_JOB",
            tool="query_job_status",
            required_slots=(),
            handoff_on_failure=False,
        ),
    ),
    cards=JOB_TOOLS,
    grants={"analyst": frozenset({"job:read"}), "agent": frozenset({"job:read"})},
    extract=understanding.extract,
    wording=WORDING,
    describe=DESCRIBE,
)
