"""What a tool call is given besides its arguments: who asks, in which task, with what.

``ToolContext`` is what a handler gets from the executor, never from the model: the trusted
caller, the thread and task, the business database, the settings and the request id its
ledger entry is keyed on. ``TaskHistory`` is what the task has done so far, which the
executor's per-task guards (``TaskGuards``) and a card's prerequisites read.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from config.settings import Settings, get_settings
from storage.db import Database, Ledger


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


@dataclass(frozen=True, kw_only=True)
class ToolContext:
    """Runtime-only arguments a handler gets from the executor, never from the model."""

    user_id: str
    """The trusted caller, from ``Context``."""
    user_role: str
    """The caller's role, from ``Context``."""
    session_id: str = ""
    """The thread the call belongs to."""
    task_id: str = ""
    """The task the call belongs to."""
    resources: Any = None
    """Backends the handler needs (the business database), injected by the graph."""
    history: TaskHistory = field(default_factory=TaskHistory)
    """What the task has done so far, for prerequisites and guards."""
    settings: Settings = field(default_factory=get_settings)
    """Configuration (backend URLs, a fixed "today"), injected rather than read from env."""
    requested: frozenset[str] | None = None
    """The tools with a side effect the user's request asked for in this task (the task's own
    tool, an asked-for notification). A call of any other tool that writes is refused
    (``not_requested``), whoever planned it; ``None``: not checked (code-planned chains)."""
    request_id: str = ""
    """The executor's request id for this call, set just before the handler runs.

    Side-effecting handlers key their ``business_writes`` ledger entry on it
    (:meth:`ledger`), so the same request never writes twice, even after its idempotency
    record has expired. Empty when a handler is called outside the executor.
    """

    def today(self) -> date:
        """Return the business date: the configured one in demos and tests, else the real one."""
        return self.settings.today or date.today()

    def database(self) -> Database:
        """Return the business database the graph injected; its absence is a wiring bug."""
        if not isinstance(self.resources, Database):
            msg = "this tool needs the business Database in ToolContext.resources"
            raise TypeError(msg)
        return self.resources

    def ledger(self, conn: sqlite3.Connection, *, tool: str = "", key: str = "") -> Ledger:
        """Open this request's ledger entry in the write's transaction.

        Raises ``AlreadyWritten`` (answered by the executor as a duplicate) when the request
        wrote before. ``key`` overrides the request id for a write whose identity is narrower
        than its arguments; it is scoped to this thread and task.
        """
        request_id = self.request_id
        if key and request_id:
            request_id = f"{self.session_id}|{self.task_id}|{key}"
        return Ledger(conn, request_id, tool or "write")
