"""A superstep's checkpoint is stored before the next step runs (``durability="sync"``).

A step that makes a side effect then always starts from a stored checkpoint; and on a
2-core host the turn is faster than with LangGraph's ``async`` default (``bench/README.md``).
LangGraph does not wait for a run's input checkpoint, only for those after a step, so the
first node (intent, which changes nothing outside the state) may run while it is stored.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from config.settings import Settings
from tests.conftest import ALICE, say

pytestmark = pytest.mark.integration


class WatchingSaver(InMemorySaver):
    """Record whether a checkpoint was still being stored when a task's writes arrived.

    A checkpoint's ``put`` waits until the next task's writes come (or ``hold_s`` pass), so
    a run that does not wait for its checkpoints shows it at once.
    """

    def __init__(self, *, hold_s: float) -> None:
        super().__init__()
        self.hold_s = hold_s
        self.storing: list[str] = []
        self.writes_during_a_put = 0
        self.writes_calls = 0
        self._writes_came = threading.Event()
        self._lock = threading.Lock()

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        source = str(metadata.get("source"))
        with self._lock:
            self.storing.append(source)
        try:
            self._writes_came.wait(timeout=self.hold_s)
            self._writes_came.clear()
            return super().put(config, checkpoint, metadata, new_versions)
        finally:
            with self._lock:
                self.storing.remove(source)

    def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        with self._lock:
            self.writes_calls += 1
            # the input checkpoint is never waited for (see the module docstring)
            self.writes_during_a_put += any(source != "input" for source in self.storing)
        self._writes_came.set()
        super().put_writes(config, writes, task_id, task_path)


def test_each_checkpoint_is_stored_before_the_next_step_runs(make_app):
    saver = WatchingSaver(hold_s=0.05)  # each put waits in vain: the next step waits for it
    app = make_app(checkpointer=saver)
    state = say(app, "OD-20240618-001 到哪了", thread="durable")
    assert "OD-20240618-001" in state["messages"][-1].content
    assert saver.writes_calls >= 3  # intent, slot filling, tool, reply
    assert saver.writes_during_a_put == 0


def test_a_run_may_still_ask_for_async(make_app):
    # the same check tells the modes apart: under ``async`` the next step runs while the
    # previous checkpoint is still being stored
    saver = WatchingSaver(hold_s=0.3)
    app = make_app(checkpointer=saver)
    app.invoke(
        {"messages": [("user", "OD-20240618-001 到哪了")]},
        {"configurable": {"thread_id": "async"}},
        context=ALICE,
        durability="async",
    )
    assert saver.writes_during_a_put > 0


def test_the_setting_chooses_the_default(make_app, data_dir):
    saver = WatchingSaver(hold_s=0.3)
    app = make_app(checkpointer=saver, settings=Settings(data_dir=data_dir, durability="async"))
    say(app, "OD-20240618-001 到哪了", thread="setting")
    assert saver.writes_during_a_put > 0
