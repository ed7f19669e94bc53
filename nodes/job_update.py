"""Tell the user a background job ended, without touching the conversation's current topic.

A finished job starts a run on its thread whose only input is ``job_event`` (by a callback
in embedded use, by ``runs.create`` under ``langgraph dev``). The START router sends that
run here: the answer (the export's file path, the count sent, or why it failed) is added as
an assistant message, and ``job_event`` is cleared. ``intent``, ``slots``, ``task_id``,
``awaiting`` and the suspended tasks are left as they are, so a job that ends while the
user talks about the weather does not take over that topic.

The event is only a pointer: what is said is read from the job store, and only for the
job's own owner, so an input forged by a client cannot put words about someone else's job
(or a made-up result) into a thread.
"""

from __future__ import annotations

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from jobs.bodies import JOBS, describe_job
from language import sentence
from nodes.common import Node, context_of, protocol_message
from nodes.services import Services
from state import AgentState, Context, StateUpdate


def make_job_update_node(services: Services) -> Node:
    """Build the node that turns a job's end into one assistant message."""

    def job_update(state: AgentState, runtime: Runtime[Context]) -> StateUpdate:
        """Describe the finished job from the store; change nothing but the messages."""
        event = state.get("job_event") or {}
        job_id = str(event.get("job_id", ""))
        runner = JOBS.runner(services.settings, services.database)
        job = runner.status(job_id) if job_id else None
        if job is None or job.owner != context_of(runtime).user_id or not job.finished:
            return {"job_event": None}  # not this user's, or not over: say nothing
        language = state.get("language", "zh")
        text = sentence("job.prefix", language).format(job_id=job.job_id)
        text += describe_job(job, language)
        note = protocol_message(
            state, runtime, role="assistant", content=text, job_id=job.job_id, source="job"
        )
        return {"messages": [AIMessage(content=text)], "protocol": [note], "job_event": None}

    return job_update
