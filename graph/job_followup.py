"""Embedded use: tell a thread that its job ended by running one graph turn on it.

A finished job's callback runs on a job worker thread, possibly while a turn on the same
conversation is still running (the job may fail before the turn that started it has even
replied) or while the user's next turn runs. Two runs writing one thread at once would
fork its checkpoints and lose one side's state, so the follow-up waits until no run is
active on the thread (``ThreadActivity``, a callback handler the graph carries, counts the
root runs per thread) and follow-ups on one thread run one at a time.

A user turn that starts in the instant between that check and the follow-up's own start can
still overlap it; a LangGraph server has no such gap (``multitask_strategy="enqueue"`` in
``jobs.notify.LangGraphRunNotifier``), so multi-user deployments should use that path.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Mapping
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler

from jobs.notify import job_event
from jobs.runner import JobCallback
from jobs.store import Job
from state import Context

_log = logging.getLogger(__name__)

IDLE_WAIT_S = 60.0
"""How long a follow-up waits for a busy thread before running anyway (a stuck run)."""


class ThreadActivity(BaseCallbackHandler):
    """Count the graph runs in progress per thread (root runs only)."""

    run_inline = True
    """Called where the event happens: in an async run, LangChain otherwise sends every
    chain start and end of every node to a worker thread and waits for it (14 hand-offs a
    turn, a quarter of an async turn), for a counter update under a lock."""

    def __init__(self) -> None:
        """Start with no runs."""
        self._active: Counter[str] = Counter()
        self._roots: dict[UUID, str] = {}
        self._idle = threading.Condition()

    def on_chain_start(
        self,
        serialized: Mapping[str, Any] | None,  # LangChain's callback signature
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Count a root run on its thread."""
        thread = (metadata or {}).get("thread_id")
        if parent_run_id is None and thread:
            with self._idle:
                self._roots[run_id] = str(thread)
                self._active[str(thread)] += 1

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """A root run ended."""
        self._done(run_id)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """A root run failed (or paused for an interrupt)."""
        self._done(run_id)

    def _done(self, run_id: UUID) -> None:
        with self._idle:
            thread = self._roots.pop(run_id, None)
            if thread is not None:
                self._active[thread] -= 1
                if self._active[thread] <= 0:
                    del self._active[thread]
                self._idle.notify_all()

    def busy(self, thread: str) -> bool:
        """Tell whether a run is in progress on ``thread``."""
        with self._idle:
            return self._active[thread] > 0

    def wait_idle(self, thread: str, timeout_s: float = IDLE_WAIT_S) -> bool:
        """Wait until no run is active on ``thread``; ``False`` if it stayed busy."""
        with self._idle:
            return self._idle.wait_for(lambda: self._active[thread] <= 0, timeout_s)


def follow_up_on_thread(graph: Any, activity: ThreadActivity) -> JobCallback:
    """Return the callback that runs a ``job_event`` turn on a finished job's thread.

    The turn runs as the job's owner (the context the job was started with), on the job's
    thread, after any turn in progress there.
    """
    locks: dict[str, threading.Lock] = {}
    guard = threading.Lock()

    def follow_up(job: Job) -> None:
        if not job.thread_id:
            return
        with guard:
            lock = locks.setdefault(job.thread_id, threading.Lock())
        context = Context(
            user_id=str(job.context.get("user_id") or job.owner),
            user_role=str(job.context.get("user_role") or "customer"),
        )
        with lock:
            if not activity.wait_idle(job.thread_id):
                _log.warning(
                    "thread %s stayed busy; telling it of %s anyway", *(job.thread_id, job.job_id)
                )
            graph.invoke(
                {"job_event": dict(job_event(job))},
                {"configurable": {"thread_id": job.thread_id}},
                context=context,
            )

    return follow_up
