"""Time travel for people: read a thread's history, replay, roll back and fork it.

These wrap LangGraph's own primitives (``get_state_history``, ``invoke(None, config)`` from a
checkpoint, ``update_state`` on an old checkpoint), so they work with every saver. Nothing is
ever deleted: a rollback or a fork adds a branch, and the abandoned steps stay in history.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Required, cast

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import StateSnapshot

from contract.scenario import Scenario, ScenarioSet
from nodes.slot_filling import plan_tool_calls
from scenarios import SCENARIOS
from state import AgentState, Context, ProtocolRecord, SlotValues, StateUpdate


class CheckpointNotFoundError(LookupError):
    """The thread has no checkpoint with that id."""


@dataclass(frozen=True)
class HistoryEntry:
    """One checkpoint of a thread, summarized for a person."""

    checkpoint_id: str
    """The checkpoint, for ``replay`` and ``fork``."""
    parent_id: str | None
    """The checkpoint it follows; several children of one parent are branches."""
    step: int
    """LangGraph's step number (-1 for a turn's input)."""
    source: str
    """``input``, ``loop``, ``update`` (rollback or fork) or ``fork``."""
    node: str
    """The node whose output this checkpoint holds (``input`` for user input)."""
    next: tuple[str, ...]
    """The nodes that would run from here."""
    intent: str | None
    """The task's intent at this point."""
    confidence: float | None
    """The intent's confidence at this point."""
    slots: SlotValues
    """Slots gathered so far."""
    last_protocol: str
    """The newest protocol message, as ``role: content``."""
    on_head_branch: bool
    """Whether the thread's current head descends from this checkpoint."""


class ForkResult(AgentState, total=False):
    """A fork: the new branch's config, and with ``run``, the state it reached."""

    config: Required[RunnableConfig]


def _config(thread_id: str, checkpoint_id: str | None = None) -> RunnableConfig:
    configurable: dict[str, str] = {"thread_id": thread_id, "checkpoint_ns": ""}
    if checkpoint_id:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


def _id(snapshot: StateSnapshot) -> str:
    return str(snapshot.config["configurable"]["checkpoint_id"])


def _parent_id(snapshot: StateSnapshot) -> str | None:
    if not snapshot.parent_config:
        return None
    return str(snapshot.parent_config["configurable"]["checkpoint_id"])


def _describe(message: ProtocolRecord | None) -> str:
    if not message:
        return ""
    content = message.get("content")
    if isinstance(content, dict):
        content = content.get("stage") or content.get("status") or content
    return f"{message.get('role')}: {str(content)[:80]}"


def history(app: CompiledStateGraph[Any, Any, Any, Any], thread_id: str) -> list[HistoryEntry]:
    """Return every checkpoint of the thread, oldest first, branches included."""
    snapshots = list(app.get_state_history(_config(thread_id)))
    if not snapshots:
        return []
    by_id = {_id(s): s for s in snapshots}
    head = app.get_state(_config(thread_id))
    on_head: set[str] = set()
    cursor: str | None = _id(head) if head.config else None
    while cursor is not None and cursor in by_id:
        on_head.add(cursor)
        cursor = _parent_id(by_id[cursor])
    entries = []
    for snapshot in reversed(snapshots):
        parent = by_id.get(_parent_id(snapshot) or "")
        source = str(snapshot.metadata.get("source", "")) if snapshot.metadata else ""
        if source == "input":
            node = "input"
        elif source == "update":
            node = "update"
        elif parent is not None and parent.next:
            node = ",".join(parent.next)
        else:
            node = "-"
        values = snapshot.values or {}
        protocol = values.get("protocol") or []
        entries.append(
            HistoryEntry(
                checkpoint_id=_id(snapshot),
                parent_id=_parent_id(snapshot),
                step=int(snapshot.metadata.get("step", 0)) if snapshot.metadata else 0,
                source=source,
                node=node,
                next=tuple(snapshot.next),
                intent=values.get("intent"),
                confidence=values.get("confidence"),
                slots=dict(values.get("slots") or {}),
                last_protocol=_describe(protocol[-1] if protocol else None),
                on_head_branch=_id(snapshot) in on_head,
            )
        )
    return entries


def get_checkpoint(
    app: CompiledStateGraph[Any, Any, Any, Any], thread_id: str, checkpoint_id: str
) -> StateSnapshot:
    """Return the state at one checkpoint, or raise ``CheckpointNotFoundError``."""
    snapshot = app.get_state(_config(thread_id, checkpoint_id))
    if not snapshot.config or snapshot.created_at is None:
        msg = f"thread {thread_id!r} has no checkpoint {checkpoint_id!r}"
        raise CheckpointNotFoundError(msg)
    return snapshot


def replay(
    app: CompiledStateGraph[Any, Any, Any, Any],
    thread_id: str,
    checkpoint_id: str,
    context: Context,
) -> AgentState:
    """Re-run the thread from a checkpoint: the nodes after it execute again.

    Tools with side effects run again too, unless the executor de-duplicates them.
    """
    snapshot = get_checkpoint(app, thread_id, checkpoint_id)
    return cast("AgentState", dict(app.invoke(None, snapshot.config, context=context) or {}))


def rollback(
    app: CompiledStateGraph[Any, Any, Any, Any],
    thread_id: str,
    steps: int,
    *,
    context: Context | None = None,
    run: bool = False,
) -> RunnableConfig:
    """Continue the thread from ``steps`` checkpoints back along its current branch.

    The target becomes the head through a copy (``update_state`` with no values), so the
    abandoned steps stay in history as another branch. With ``run=True`` the graph carries
    on from there immediately; otherwise the next message continues from it.
    """
    if steps < 1:
        msg = f"steps must be at least 1, got {steps}"
        raise ValueError(msg)
    branch = [entry for entry in history(app, thread_id) if entry.on_head_branch]
    if not branch:
        msg = f"thread {thread_id!r} has no history"
        raise CheckpointNotFoundError(msg)
    target = branch[max(len(branch) - 1 - steps, 0)]
    snapshot = get_checkpoint(app, thread_id, target.checkpoint_id)
    new_config = app.update_state(snapshot.config, None)
    if run:
        app.invoke(None, new_config, context=context or Context())
    return new_config


def parse_assignments(assignments: list[str]) -> StateUpdate:
    """Turn ``["slots.order_id=OD-1", "intent=URGE_DELIVERY"]`` into a state update."""
    update: StateUpdate = {}
    for assignment in assignments:
        path, sep, value = assignment.partition("=")
        if not sep or not path:
            msg = f"expected key=value or key.sub=value, got {assignment!r}"
            raise ValueError(msg)
        head, _, rest = path.partition(".")
        if rest:
            update.setdefault(head, {})[rest] = value
        else:
            update[head] = value
    return update


def fork(
    app: CompiledStateGraph[Any, Any, Any, Any],
    thread_id: str,
    checkpoint_id: str,
    values: StateUpdate,
    context: Context,
    *,
    run: bool = True,
    scenarios: Sequence[Scenario] = SCENARIOS,
) -> ForkResult:
    """Edit state at a checkpoint and run on from there, on a new branch.

    Changing ``slots`` re-plans the tool call from the edited slots, as slot filling would,
    so the fork acts on the new values rather than on the plan made from the old ones.
    """
    snapshot = get_checkpoint(app, thread_id, checkpoint_id)
    update = dict(values)
    as_node: str | None = None
    if "slots" in update:
        merged = {**(snapshot.values.get("slots") or {}), **update["slots"]}
        intent = str(update.get("intent") or snapshot.values.get("intent") or "")
        task = ScenarioSet(scenarios).task(intent)
        if task is not None:
            task_id = str(snapshot.values.get("task_id") or "")
            calls, missing = plan_tool_calls(task, merged, task_id)
            update.update(pending_tool_calls=calls, missing_slots=missing)
        as_node = "slot_filling"
    new_config = app.update_state(snapshot.config, update, as_node=as_node)
    if not run:
        return {"config": new_config}
    result = app.invoke(None, new_config, context=context) or {}
    return cast("ForkResult", {"config": new_config, **result})
