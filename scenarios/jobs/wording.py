"""What the job-status answer says, in zh and en."""

from __future__ import annotations

from contract.scenario import Describer, Speaker, Wording
from jobs.bodies import describe_job
from jobs.store import Job, JobAnswer
from state import AgentState, ToolResult
from tools.executor.envelope import result_data

WORDING: Wording = {
    "intent.CHECK_JOB": {"zh": "查询后台任务进度", "en": "check a background job"},
    "job_none": {
        "zh": "没有找到您发起的后台任务。",
        "en": "I found no background job you started.",
    },
}


def job_from(data: JobAnswer) -> Job:
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


def describe_status(result: ToolResult, state: AgentState, speaker: Speaker) -> str | None:
    """Say where the job stands (progress, the file path), or that there is no such job."""
    if result.get("status") == "success":
        return describe_job(job_from(result_data(result, JobAnswer)), speaker.language)
    if result.get("error_type") == "not_found":
        return speaker.say("job_none")
    return None


DESCRIBE: dict[str, Describer] = {"query_job_status": describe_status}
