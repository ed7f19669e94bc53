"""What the job-status answer says, in zh and en."""

from __future__ import annotations

from typing import Any

from nodes.tasks import Describer, Speaker, Wording
from state import AgentState, ToolResult
from tools.job_bodies import describe_job
from tools.jobs import Job

WORDING: Wording = {
    "intent.CHECK_JOB": {"zh": "查询后台任务进度", "en": "check a background job"},
    "job_none": {
        "zh": "没有找到您发起的后台任务。",
        "en": "I found no background job you started.",
    },
    "job_unavailable": {
        "zh": "暂时查不到任务进度，请稍后再问。",
        "en": "I cannot read the job's progress right now; please ask again shortly.",
    },
}


def job_from(data: dict[str, Any]) -> Job:
    """Rebuild the job a status result (or a job event) describes."""
    return Job(
        job_id=str(data.get("job_id", "")),
        kind=str(data.get("kind", "")),
        params={},
        state=data.get("state", "queued"),
        done=int(data.get("done") or 0),
        total=data.get("total"),
        result=data.get("result"),
        error=data.get("error"),
    )


def describe_status(result: ToolResult, state: AgentState, speaker: Speaker) -> str:
    """Say where the job stands: progress, the file path, or why it failed."""
    if result.get("status") == "success":
        return describe_job(job_from(result.get("data") or {}), speaker.language)
    if result.get("error_type") == "not_found":
        return speaker.say("job_none")
    return speaker.say("job_unavailable")


DESCRIBE: dict[str, Describer] = {"query_job_status": describe_status}
