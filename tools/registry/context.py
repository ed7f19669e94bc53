"""What a tool call knows of the task it belongs to: the task's history and its guards.

A handler and the executor both read it: the executor to stop a task that loops (the per-task
guards), a handler's card to check that a prerequisite already succeeded in this task.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class TaskGuards:
    """Per-task ceilings; tripping one ends the task with a hand-over, not a loop."""

    max_steps: int = 25
    """Node steps in one task."""
    max_consecutive_failures: int = 3
    """Failed tool calls in a row."""
    max_same_call: int = 3
    """The same tool with the same arguments."""


@dataclass
class TaskHistory:
    """What the task has done so far, as the guards and prerequisites need it."""

    step_count: int = 0
    """Node steps so far."""
    succeeded_tools: set[str] = field(default_factory=set)
    """Tools that have succeeded in this task."""
    calls: Counter[str] = field(default_factory=Counter)
    """Attempts per request id (tool + arguments)."""
    consecutive_failures: int = 0
    """Failed calls since the last success."""

    @classmethod
    def from_results(cls, results: Sequence[Mapping[str, Any]], step_count: int = 0) -> TaskHistory:
        """Rebuild the history from the task's result envelopes in state."""
        history = cls(step_count=step_count)
        for result in results:
            history.calls[result.get("request_id", "")] += 1
            if result.get("status") == "success":
                history.succeeded_tools.add(result.get("tool", ""))
                history.consecutive_failures = 0
            else:
                history.consecutive_failures += 1
        return history

    def tripped(self, guards: TaskGuards, request_id: str) -> str | None:
        """Return why a guard stops this call, or ``None``."""
        if self.step_count >= guards.max_steps:
            return f"task reached {guards.max_steps} steps"
        if self.consecutive_failures >= guards.max_consecutive_failures:
            return f"{self.consecutive_failures} tool failures in a row"
        if self.calls[request_id] >= guards.max_same_call:
            return f"the same call was already made {self.calls[request_id]} times"
        return None
