"""How the caller learns that a job ended, when it is not in the same process.

``LangGraphRunNotifier`` starts a run on the job's thread under ``langgraph dev`` (its only
input is ``job_event``); ``JobPoller`` polls the store with exponential backoff, on a schedule
computed against an injected clock. In-process callers get the runner's callback instead
(``jobs.runner.JobRunner.submit(on_done=...)``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, TypedDict

from langgraph_sdk import get_sync_client

from jobs.store import Clock, Job, JobError, JobResult, JobStore, SystemClock


@dataclass(frozen=True)
class Backoff:
    """Exponential polling intervals: initial, ×factor each time, capped at maximum."""

    initial_s: float = 0.5
    factor: float = 2.0
    maximum_s: float = 30.0

    def intervals(self) -> Iterator[float]:
        """Yield the waits between polls, forever."""
        wait = self.initial_s
        while True:
            yield wait
            wait = min(wait * self.factor, self.maximum_s)


@dataclass(frozen=True)
class PollOutcome:
    """What polling saw."""

    job: Job | None
    """The last record read (``None``: no such job)."""
    polls: int
    intervals: list[float]
    """The waits between polls, in order."""
    timed_out: bool


@dataclass
class JobPoller:
    """Follow a job by reading the store, waiting longer each time (no callback available)."""

    store: JobStore
    clock: Clock = field(default_factory=SystemClock)
    backoff: Backoff = field(default_factory=Backoff)

    def wait(self, job_id: str, timeout_s: float) -> PollOutcome:
        """Poll until the job ends or ``timeout_s`` passes on the clock; never overshoot it."""
        deadline = self.clock.now() + timeout_s
        waits: list[float] = []
        polls = 0
        schedule = self.backoff.intervals()
        while True:
            job = self.store.get(job_id)
            polls += 1
            if job is None or job.finished:
                return PollOutcome(job, polls, waits, timed_out=False)
            left = deadline - self.clock.now()
            if left <= 0:
                return PollOutcome(job, polls, waits, timed_out=True)
            wait = min(next(schedule), left)
            waits.append(wait)
            self.clock.sleep(wait)

    def next_poll_at(self, started_at: float, polls_done: int) -> float:
        """Return when poll number ``polls_done + 1`` is due, for a caller that does not block.

        A graph node that checks a job on each turn uses this to decide whether to look
        again yet, from the time it started following and how often it has looked.
        """
        schedule = self.backoff.intervals()
        return started_at + sum(next(schedule) for _ in range(polls_done))


class JobEvent(TypedDict):
    """What a thread is told when its job ends."""

    job_id: str
    kind: str
    state: str
    result: JobResult | None
    error: JobError | None


class JobRunInput(TypedDict):
    """The input of the run that tells a thread its job ended."""

    job_event: JobEvent


def job_event(job: Job) -> JobEvent:
    """Summarize a finished job for the conversation."""
    return JobEvent(
        job_id=job.job_id, kind=job.kind, state=job.state, result=job.result, error=job.error
    )


class RunsClient(Protocol):
    """The slice of ``langgraph_sdk``'s sync ``runs`` client the notifier uses."""

    def create(self, thread_id: str | None, assistant_id: str, **kwargs: Any) -> Any:
        """Start a run."""
        ...


class LangGraphRunNotifier:
    """On a job's end, start a run on its thread through the LangGraph server's API.

    The run's input is ``{"job_event": ...}`` by default (the graph decides how to tell the
    user); ``multitask_strategy="enqueue"`` queues it behind a run the user started about
    something else, so the result never overwrites that topic mid-turn.
    """

    def __init__(
        self,
        *,
        url: str | None = None,
        assistant_id: str = "agent",
        runs: RunsClient | None = None,
        input_for: Callable[[Job], JobRunInput] | None = None,
        headers_for: Callable[[Job], dict[str, str]] | None = None,
    ) -> None:
        """Talk to ``url`` (or use the given ``runs`` client, e.g. a fake in tests).

        ``headers_for(job)`` authenticates the run when the server requires it, e.g.
        ``{"x-api-key": <a token for job.owner>}``, so the run acts as the job's owner on
        the owner's thread.
        """
        if runs is None:
            if url is None:
                msg = "give the LangGraph server url or a runs client"
                raise ValueError(msg)
            sdk_runs: Any = get_sync_client(url=url).runs
            runs = sdk_runs
        self.runs: RunsClient = runs
        self.assistant_id = assistant_id
        self.input_for = input_for or (lambda job: {"job_event": job_event(job)})
        self.headers_for = headers_for

    def __call__(self, job: Job) -> Any:
        """Start the run (jobs without a thread are skipped)."""
        if not job.thread_id:
            return None
        return self.runs.create(
            job.thread_id,
            self.assistant_id,
            input=self.input_for(job),
            metadata={"job_id": job.job_id, "source": "job"},
            context=job.context or None,
            multitask_strategy="enqueue",
            headers=self.headers_for(job) if self.headers_for is not None else None,
        )
