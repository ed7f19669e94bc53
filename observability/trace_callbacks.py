"""Trace records of the four decision points, taken from the graph's callbacks.

``TraceRecorder`` is a LangChain callback handler: LangGraph reports each node's start and
end (``metadata["langgraph_node"]``) with the node's input state and its output update.
From those it writes, to the audit log, without touching any node:

=============  =================================================================  ==========
kind           what                                                                from node
=============  =================================================================  ==========
``turn``       start (user text or resume) and end (nodes visited, status)          the graph
``intent``     text → intent, confidence, evidence, candidates                     output with
                                                                                   ``intent``
``arguments``  what rules or the model proposed (``pending_tool_calls``), the      slot filling
               slots, what is missing or invalid; the executor's ``tool_call``
               record (same ``request_id``) shows what validation made of it
``execution``  per call: status, error type, attempts, latency, request id, the    output with
               result's shape (keys and types, never values) and the envelope       ``tool_results``
``interrupt``  the confirmation asked for (masked)                                 any
``answer``     the final reply                                                     output with
                                                                                   an AI reply
``node``       every node: latency, status, protocol message sizes                 any
=============  =================================================================  ==========

Every record carries ``session_id`` (the thread), ``task_id``, ``parent_task_id``,
``turn_id`` and, where there is one, ``request_id``; ``AuditLog.write`` masks it. The same
callbacks open the OpenTelemetry turn and node spans (``observability.tracing``).

Attach it per call, ``config={"callbacks": [TraceRecorder()]}``, or to the compiled graph,
``graph.with_config(callbacks=[TraceRecorder()])``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langgraph.errors import GraphBubbleUp, GraphInterrupt
from langgraph.types import Overwrite
from opentelemetry.trace import Span

from config.limits import json_bytes
from config.settings import get_settings
from observability import tracing
from observability.audit import AuditLog, default_audit_path
from observability.records import (
    ExecutedCall,
    ExecutionRecord,
    IntentRecord,
    ProposedCall,
    RunStatus,
    TraceHeader,
    TraceKind,
    TraceRecord,
    TurnStartRecord,
)
from observability.trace_values import (
    as_list,
    as_str,
    contents_of,
    is_step,
    jsonable,
    last_user_text,
    reply_text,
    resume_value,
    rolled_back,
    shape_of,
)

Clock = Callable[[], float]

MAX_SESSIONS = 10_000
"""Sessions whose current task a recorder remembers, to stamp a turn's start with it."""


@dataclass
class _Run:
    kind: str
    """``turn`` or ``node``."""
    name: str
    session_id: str
    turn_id: str
    started: float
    span: Span | None = None
    task_id: str | None = None
    parent_task_id: str | None = None
    inputs: Any = None
    namespace: str = ""
    nodes: list[str] = field(default_factory=list)
    interrupted: bool = False


class TraceRecorder(BaseCallbackHandler):
    """Write trace records and spans for every turn and node of a LangGraph run."""

    run_inline = True  # in the node's own thread, so tool spans find their open node
    raise_error = False  # tracing never breaks a turn

    def __init__(
        self,
        audit: AuditLog | Callable[[], AuditLog] | None = None,
        *,
        clock: Clock = time.time,
    ) -> None:
        """Write to ``audit``, timing with ``clock``.

        Args:
            audit: The log, or a function returning it on first use (so that building a
                graph opens no file: ``lambda: services.executor.audit`` shares the
                executor's log); ``None`` opens the configured log file on first use.
                The function runs inside a callback, possibly on an event loop: it must
                not block (under ``langgraph dev``, pass ``None``).
            clock: Wall-clock seconds, injected for tests.
        """
        self._audit = audit
        self._path = default_audit_path() if audit is None else None
        tracing.enabled()  # read the settings now: a callback may run on an event loop
        self.clock = clock
        self._runs: dict[UUID, _Run] = {}
        self._parents: dict[UUID, UUID | None] = {}
        self._tasks: dict[str, tuple[str | None, str | None]] = {}
        """Per session, the last known (task_id, parent_task_id); the ``MAX_SESSIONS`` most
        recent (a server lives for days, one session per customer)."""
        self._pending: dict[str, list[TraceRecord]] = {}
        """Per open turn, its records so far: written together when the turn ends."""
        self._lock = threading.Lock()

    @property
    def audit(self) -> AuditLog:
        """Return the log, opening it on first use."""
        if not isinstance(self._audit, AuditLog):
            with self._lock:
                if self._audit is None:
                    self._audit = AuditLog(self._path)
                elif not isinstance(self._audit, AuditLog):
                    self._audit = self._audit()
        assert isinstance(self._audit, AuditLog)
        return self._audit

    # ---- callbacks ----------------------------------------------------------------------

    def on_chain_start(
        self,
        serialized: Mapping[str, Any] | None,  # LangChain's callback signature
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Open a turn (the graph's own run) or a node run."""
        metadata = metadata or {}
        node = metadata.get("langgraph_node")
        name = str(kwargs.get("name") or "")
        with self._lock:
            self._parents[run_id] = parent_run_id
            owner = self._owner(parent_run_id)
        session = str(metadata.get("thread_id") or (owner.session_id if owner else ""))
        now = self.clock()
        if node is None and owner is None:
            self._start_turn(run_id, name, session, inputs, now)
        elif node == name and node != "__start__" and is_step(tags) and owner is not None:
            self._start_node(run_id, str(node), owner, inputs, metadata, now)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """Close a turn or node run and write its records."""
        with self._lock:
            run = self._runs.pop(run_id, None)
            self._parents.pop(run_id, None)
        if run is None:
            return
        if run.kind == "turn":
            self._end_turn(run, outputs, error=None)
        else:
            self._end_node(run, outputs)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """Close a run that raised; an interrupt (a confirmation) is recorded as such."""
        with self._lock:
            run = self._runs.pop(run_id, None)
            self._parents.pop(run_id, None)
        if run is None:
            return
        if run.kind == "turn":
            interrupted = isinstance(error, GraphBubbleUp)
            self._end_turn(run, None, error=None if interrupted else type(error).__name__)
            return
        if isinstance(error, GraphInterrupt):
            self._note_interrupt(run, error)
            self._write_node(run, status="interrupted", sizes=[])
            tracing.pop_node(run.session_id, run.span)
            tracing.end_span(run.span)
            return
        status: RunStatus = "interrupted" if isinstance(error, GraphBubbleUp) else "error"
        self._write_node(run, status=status, sizes=[])
        tracing.pop_node(run.session_id, run.span)
        tracing.end_span(run.span, error=None if status == "interrupted" else type(error).__name__)

    # ---- turns --------------------------------------------------------------------------

    def _start_turn(self, run_id: UUID, name: str, session: str, inputs: Any, now: float) -> None:
        task_id, parent = self._tasks.get(session, (None, None))
        run = _Run("turn", name, session, str(run_id), now, task_id=task_id, parent_task_id=parent)
        text = last_user_text(inputs)
        resume = resume_value(inputs)
        run.span = tracing.start_span(
            "turn", attributes={"session.id": session, "graph": name, "resume": resume is not None}
        )
        with self._lock:
            self._runs[run_id] = run
            self._pending[run.turn_id] = []
        record: TurnStartRecord = {**self._header(run, "turn"), "event": "start", "graph": name}
        if text is not None:
            record["text"] = text
        if resume is not None:
            record["resume"] = resume
        self._write(run, record)

    def _end_turn(self, run: _Run, outputs: Any, *, error: str | None) -> None:
        interrupts = outputs.get("__interrupt__") if isinstance(outputs, Mapping) else None
        status: RunStatus = (
            "error" if error else "interrupted" if run.interrupted or interrupts else "ok"
        )
        elapsed = self.clock() - run.started
        self._write(
            run,
            {
                **self._header(run, "turn"),
                "event": "end",
                "status": status,
                "error": error,
                "nodes": run.nodes,
                "latency_ms": round(elapsed * 1000, 3),
            },
        )
        with self._lock:
            records = self._pending.pop(run.turn_id, [])
        self.audit.write_many(records)
        tracing.set_attributes(
            run.span, {"turn.status": status, "nodes": run.nodes, "task.id": run.task_id}
        )
        tracing.end_span(run.span, error=error)

    # ---- nodes --------------------------------------------------------------------------

    def _start_node(
        self,
        run_id: UUID,
        node: str,
        owner: _Run,
        inputs: Any,
        metadata: Mapping[str, Any],
        now: float,
    ) -> None:
        state = inputs if isinstance(inputs, Mapping) else {}
        turn = self._turn_of(owner)
        task_id = as_str(state.get("task_id")) or owner.task_id
        run = _Run(
            "node",
            node,
            owner.session_id,
            owner.turn_id,
            now,
            task_id=task_id,
            parent_task_id=owner.parent_task_id,
            inputs=state,
            namespace=str(metadata.get("langgraph_checkpoint_ns") or ""),
        )
        run.span = tracing.start_span(
            f"node {node}",
            parent=owner.span,
            attributes={"session.id": owner.session_id, "node": node, "task.id": task_id},
        )
        tracing.push_node(owner.session_id, run.span)
        if turn is not None:
            turn.nodes.append(node if "|" not in run.namespace else f"{_outer(run)}/{node}")
        with self._lock:
            self._runs[run_id] = run

    def _end_node(self, run: _Run, outputs: Any) -> None:
        update = outputs if isinstance(outputs, Mapping) else {}
        sizes = self._learn_task(run, update)
        attributes: dict[str, object] = {"task.id": run.task_id}  # span attributes
        if "intent" in update and isinstance(update.get("intent"), str):
            self._write_intent(run, update)
            attributes.update(intent=update.get("intent"), confidence=update.get("confidence"))
        elif "missing_slots" in update or as_list(update.get("pending_tool_calls")):
            self._write_arguments(run, update)
        results = as_list(update.get("tool_results"))
        if results:
            calls = self._write_execution(run, results)
            attributes.update(
                tool=[str(c["tool"]) for c in calls],
                status=[str(c["status"]) for c in calls],
                attempts=sum(int(c.get("attempts") or 0) for c in calls),
                request_id=[str(c["request_id"]) for c in calls if c.get("request_id")],
            )
        reply = reply_text(update.get("messages"))
        if reply is not None and "|" not in run.namespace:
            self._write(run, {**self._header(run, "answer"), "node": run.name, "text": reply})
        self._write_node(run, status="ok", sizes=sizes)
        tracing.set_attributes(run.span, attributes)
        tracing.pop_node(run.session_id, run.span)
        tracing.end_span(run.span)

    def _learn_task(self, run: _Run, update: Mapping[str, Any]) -> list[int]:
        """Pick up the task ids a node set, and measure its protocol messages."""
        sizes: list[int] = []
        protocol = as_list(update.get("protocol"))
        for message in protocol:
            if isinstance(message, Mapping):
                measured = getattr(message, "size", None)  # a ValidatedProtocol's, if known
                sizes.append(measured if measured is not None else json_bytes(message))
                run.parent_task_id = as_str(message.get("parent_task_id")) or run.parent_task_id
        task_id = as_str(update.get("task_id"))
        if task_id is None and protocol and isinstance(protocol[-1], Mapping):
            task_id = as_str(protocol[-1].get("task_id"))
        if task_id is not None:
            run.task_id = task_id
        if "|" not in run.namespace:
            turn = self._turn_of(run)
            if turn is not None and run.task_id:
                turn.task_id, turn.parent_task_id = run.task_id, run.parent_task_id
                self._tasks.pop(run.session_id, None)  # newest last: the oldest go first
                self._tasks[run.session_id] = (run.task_id, run.parent_task_id)
                while len(self._tasks) > MAX_SESSIONS:
                    self._tasks.pop(next(iter(self._tasks)), None)
        return sizes

    def _write_intent(self, run: _Run, update: Mapping[str, Any]) -> None:
        record: IntentRecord = {
            **self._header(run, "intent"),
            "node": run.name,
            "text": last_user_text(run.inputs),
            "intent": update.get("intent"),
            "confidence": update.get("confidence"),
            "evidence": update.get("intent_evidence"),
            "candidates": update.get("intent_candidates"),
            "decision": update.get("decision"),
        }
        model_error = _model_error(update)
        if model_error:
            record["model_error"] = model_error
        self._write(run, record)

    def _write_arguments(self, run: _Run, update: Mapping[str, Any]) -> None:
        proposed: list[ProposedCall] = [
            {"id": call.get("id"), "tool": call.get("name"), "parameters": call.get("parameters")}
            for call in as_list(update.get("pending_tool_calls"))
            if isinstance(call, Mapping)
        ]
        written = update.get("slots")
        slots = getattr(written, "value", written)  # an ``Overwrite`` replaces them all
        if not isinstance(written, Overwrite):  # else merged into the slots the node read
            before = run.inputs.get("slots") if isinstance(run.inputs, Mapping) else None
            merged = {**(before or {}), **(slots or {})}
            slots = {name: value for name, value in merged.items() if value is not None}
        self._write(
            run,
            {
                **self._header(run, "arguments"),
                "node": run.name,
                "slots": slots,
                "missing": as_list(update.get("missing_slots")),
                "invalid": update.get("invalid_slots") or {},
                "proposed": proposed,
                "planner": next(  # model, rules or a learned plan (cache): nodes.plan_cache
                    (c.get("planner") for c in contents_of(update) if c.get("planner")), None
                ),
            },
        )

    def _write_execution(self, run: _Run, results: Sequence[Any]) -> list[ExecutedCall]:
        calls: list[ExecutedCall] = [
            {
                "tool": result.get("tool"),
                "status": result.get("status"),
                "error_type": result.get("error_type"),
                "message": result.get("message"),
                "request_id": result.get("request_id"),
                "attempts": result.get("attempts"),
                "latency_ms": result.get("latency_ms"),
                "duplicated": result.get("duplicated"),
                "retryable": result.get("retryable"),
                "flags": result.get("flags"),
                "summary": result.get("summary"),
                "shape": shape_of(result.get("data")),
                "rolled_back": rolled_back(result),
            }
            for result in results
            if isinstance(result, Mapping)
        ]
        record: ExecutionRecord = {
            **self._header(run, "execution"),
            "node": run.name,
            "calls": calls,
            "parallel": len(calls) > 1,
        }
        request_ids = [call["request_id"] or "" for call in calls if call.get("request_id")]
        if request_ids:
            record["request_id"] = request_ids[0] if len(request_ids) == 1 else request_ids
        self._write(run, record)
        return calls

    def _note_interrupt(self, run: _Run, error: GraphInterrupt) -> None:
        turn = self._turn_of(run)
        if turn is not None:
            if turn.interrupted:
                return  # the same interrupt, bubbling up through the parent graph's node
            turn.interrupted = True
        values = [getattr(item, "value", item) for item in (error.args[0] if error.args else [])]
        self._write(run, {**self._header(run, "interrupt"), "node": run.name, "values": values})

    def _write_node(self, run: _Run, *, status: RunStatus, sizes: list[int]) -> None:
        elapsed = self.clock() - run.started
        self._write(
            run,
            {
                **self._header(run, "node"),
                "node": run.name,
                "namespace": run.namespace.split(":")[0] if run.namespace else "",
                "nested": "|" in run.namespace,
                "status": status,
                "latency_ms": round(elapsed * 1000, 3),
                "protocol_sizes": sizes,
            },
        )

    # ---- helpers ------------------------------------------------------------------------

    def _header(self, run: _Run, kind: TraceKind) -> TraceHeader:
        return {
            "ts": self.clock(),
            "kind": kind,
            "session_id": run.session_id,
            "task_id": run.task_id,
            "parent_task_id": run.parent_task_id,
            "turn_id": run.turn_id,
        }

    def _write(self, run: _Run, record: TraceRecord) -> None:
        with self._lock:
            pending = self._pending.get(run.turn_id)
            if pending is not None:  # the turn is open: its records go out together at its end
                pending.append(jsonable(record))
                return
        self.audit.write(jsonable(record))

    def _owner(self, parent: UUID | None) -> _Run | None:
        """Return the nearest turn or node run above ``parent`` (lock held)."""
        while parent is not None:
            run = self._runs.get(parent)
            if run is not None:
                return run
            parent = self._parents.get(parent)
        return None

    def _turn_of(self, run: _Run) -> _Run | None:
        if run.kind == "turn":
            return run
        with self._lock:
            for candidate in self._runs.values():
                if candidate.kind == "turn" and candidate.turn_id == run.turn_id:
                    return candidate
        return None


def trace_callbacks(
    audit: AuditLog | Callable[[], AuditLog] | None = None,
) -> list[BaseCallbackHandler]:
    """Return the graph's default callbacks: a ``TraceRecorder``, unless ``REACH_TRACE=0``."""
    return [TraceRecorder(audit)] if get_settings().trace_enabled else []


# ---- pure helpers --------------------------------------------------------------------------


def _outer(run: _Run) -> str:
    return run.namespace.split(":")[0]


def _model_error(update: Mapping[str, Any]) -> str | None:
    """The error of the understanding note a node wrote: its model call gave nothing usable."""
    for message in as_list(update.get("protocol")):
        if not isinstance(message, Mapping):
            continue
        content = message.get("content")
        error = message.get("error")
        if isinstance(content, Mapping) and content.get("stage") == "intent" and error:
            return str(error)[:200]
    return None


__all__ = ["TraceRecorder", "rolled_back", "shape_of", "trace_callbacks"]
