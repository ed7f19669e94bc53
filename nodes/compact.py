"""Keep the checkpointed state bounded: recent turns in state, everything older in the transcript.

A thread that lives for days (one per customer) would otherwise carry every message and
every protocol message in every checkpoint, and every turn would pay to copy, serialize and
write them. At the end of each turn the state keeps what the next turn needs: the last
``keep_turns`` turns of messages, the last ``keep_protocol`` protocol messages, and a short
rule-based summary of the turns before. What leaves the state is first appended to the
transcript store (``storage.transcript``), so nothing is lost: ``full_transcript`` joins the
two.

Compaction rides on the nodes that end a turn (reply, clarify, handoff) instead of being a
node of its own: a separate node would add a superstep, and so a checkpoint write, to every
turn. It uses LangGraph's own means, so time travel is unchanged: ``RemoveMessage`` for the
old messages and one ``Overwrite`` of the protocol list. Each checkpoint holds the trimmed
state of its own point, and rolling back or forking restores exactly that. Two rules keep the
conversation valid for a chat model and for the confirmation flow:

- an AI message that requested tool calls is removed only together with the tool messages
  that answer it (the cut moves back to the turn that made the calls);
- nothing is removed while an action is ``awaiting`` a confirmation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    ToolMessage,
    message_to_dict,
    messages_from_dict,
)
from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from language import sentence
from nodes.common import Node, message_text, session_id
from security.pii import mask_pii
from state import (
    AgentState,
    Context,
    ConversationSummary,
    ProtocolRecord,
    StateUpdate,
    append_protocol,
)
from storage.transcript import TranscriptEntry, TranscriptStore, entry_key

if TYPE_CHECKING:
    from nodes.services import Services

SUMMARY_LINES = 6
"""Lines of the running summary kept in state: the most recent older turns."""
SUMMARY_CLIP = 60
"""Characters of each side of a turn kept in its summary line."""


def cut_index(messages: Sequence[AnyMessage], keep_turns: int) -> int:
    """Return the index of the first message to keep: the start of the last ``keep_turns``.

    A turn starts at a user message. The cut never separates an AI message with tool calls
    from the tool messages that answer it: when a kept tool message answers a call made
    before the cut, the cut moves back to the start of that call's turn.
    """
    starts = [i for i, message in enumerate(messages) if isinstance(message, HumanMessage)]
    if len(starts) <= keep_turns:
        return 0
    cut = starts[-keep_turns]
    while cut > 0:
        answered = {m.tool_call_id for m in messages[cut:] if isinstance(m, ToolMessage)}
        caller = next(
            (
                i
                for i in range(cut)
                if isinstance(messages[i], AIMessage)
                and any(call["id"] in answered for call in messages[i].tool_calls)  # type: ignore[union-attr]
            ),
            None,
        )
        if caller is None:
            break
        cut = max((s for s in starts if s <= caller), default=0)
    return cut


def summarize(
    previous: ConversationSummary | None, evicted: Sequence[AnyMessage]
) -> ConversationSummary:
    """Fold the evicted turns into the running summary: one line per turn, the last few kept.

    Rule-based on purpose: no model is needed, and the same turns always give the same text.
    """
    turns = previous["turns"] if previous else 0
    lines = [line for line in (previous["text"] if previous else "").split("\n") if line]
    user = ""
    answer = ""
    for message in [*evicted, HumanMessage(content="")]:
        if isinstance(message, HumanMessage):
            if user or answer:
                turns += 1
                lines.append(f"{user[:SUMMARY_CLIP]} → {answer[:SUMMARY_CLIP]}")
            user, answer = message_text(message).replace("\n", " "), ""
        elif isinstance(message, AIMessage) and not message.tool_calls:
            answer = message_text(message).replace("\n", " ")
    return {"turns": turns, "text": "\n".join(lines[-SUMMARY_LINES:])}


def summary_text(summary: ConversationSummary | None, language: str = "zh") -> str:
    """Render the summary for a prompt or a person (the catalog's ``summary.earlier``)."""
    if not summary or not summary.get("turns"):
        return ""
    template = sentence("summary.earlier", language)
    return template.format(turns=summary["turns"], text=summary.get("text", ""))


def compact_update(
    state: AgentState,
    update: StateUpdate,
    *,
    keep_turns: int,
    keep_protocol: int,
    store: TranscriptStore,
    thread_id: str,
) -> StateUpdate:
    """Return ``update`` plus the removals that bound the state after it is applied.

    What is removed is appended to ``store`` first, so a crash between the two loses nothing
    (appending is idempotent, and the next turn tries again).
    """
    messages = list(state.get("messages") or [])
    awaiting = update.get("awaiting", state.get("awaiting"))
    evicted: list[AnyMessage] = []
    if not awaiting:
        cut = cut_index(messages, keep_turns)
        evicted = [m for m in messages[:cut] if m.id]
    old = list(state.get("protocol") or [])
    out = dict(update)
    written = [_message_entry(m) for m in evicted]
    if len(old) + len(_as_list(update.get("protocol"))) > keep_protocol:
        # validate the node's new messages as the reducer would, then replace the list once
        combined = [*old, *append_protocol(None, _as_list(update.get("protocol")))]
        dropped = combined[:-keep_protocol]
        written.extend(_protocol_entry(p) for p in dropped)
        out["protocol"] = Overwrite(combined[-keep_protocol:])
    if written:
        store.append(thread_id, written)
    if evicted:
        out["messages"] = [
            *(RemoveMessage(id=str(m.id)) for m in evicted),
            *_as_list(update.get("messages")),
        ]
        out["summary"] = summarize(state.get("summary"), evicted)
    return out


def with_compaction(
    node: Node,
    *,
    store: Callable[[], TranscriptStore],
    keep_turns: int,
    keep_protocol: int,
) -> Node:
    """Wrap a node that ends a turn so that its update also compacts the state."""

    def compacted(state: AgentState, runtime: Runtime[Context]) -> StateUpdate:
        update = node(state, runtime=runtime)
        return compact_update(
            state,
            update,
            keep_turns=keep_turns,
            keep_protocol=keep_protocol,
            store=store(),
            thread_id=session_id(runtime),
        )

    compacted.__name__ = getattr(node, "__name__", "compacted")
    compacted.__doc__ = node.__doc__
    return compacted


def full_transcript(
    store: TranscriptStore, thread_id: str, values: Mapping[str, Any]
) -> tuple[list[BaseMessage], list[ProtocolRecord]]:
    """Return every message and protocol message of a thread: the store's, then the state's.

    ``values`` is a checkpoint's state (``graph.get_state(config).values``); entries already
    moved to the store are not repeated.
    """
    entries = store.read(thread_id)
    stored = [e["body"] for e in entries if e["kind"] == "message"]
    seen = {body["data"].get("id") for body in stored}
    messages = messages_from_dict(stored)
    messages.extend(m for m in values.get("messages") or [] if m.id not in seen)
    protocol = [e["body"] for e in entries if e["kind"] == "protocol"]
    known = {e["key"] for e in entries if e["kind"] == "protocol"}
    protocol.extend(
        p for p in values.get("protocol") or [] if _protocol_entry(p)["key"] not in known
    )
    return messages, protocol


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


def _message_entry(message: AnyMessage) -> TranscriptEntry:
    # the checkpoint's serializer masks ID numbers; the transcript must not hold them either
    body = mask_pii(message_to_dict(message))
    return {"kind": "message", "key": str(message.id), "body": body}


def _protocol_entry(message: ProtocolRecord) -> TranscriptEntry:
    return {"kind": "protocol", "key": entry_key("protocol", message), "body": message}


__all__ = [
    "compact_update",
    "cut_index",
    "full_transcript",
    "summarize",
    "summary_text",
    "with_compaction",
]


def unpinning_tools(node: Node, services: Services) -> Node:
    """Wrap a node that ends a task so the task's tool-version pins are dropped after it.

    The executor pins each task to the version of a tool it first got (``registry.get(...,
    task_id=...)``), so a version registered mid-task does not change its contract; once
    the task is answered or handed over, the pins only hold an old version back.
    """

    def ended(state: AgentState, runtime: Any) -> StateUpdate:
        out = node(state, runtime=runtime)
        task_id = state.get("task_id")
        if task_id:
            services.tools.release(task_id)
        return out

    ended.__name__ = getattr(node, "__name__", "ended")
    ended.__doc__ = node.__doc__
    return ended
