"""Helpers every node shares: who is talking, on which thread, about which task."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from langchain_core.messages import AnyMessage, HumanMessage
from langgraph.config import get_config
from langgraph.runtime import Runtime

from config.limits import JsonObject
from security.permissions import ROLES
from state import (
    AgentState,
    Context,
    Overwrite,
    ProtocolMessage,
    StateUpdate,
    ToolResult,
    ValidatedProtocol,
)
from tools.registry.context import TaskHistory, ToolContext

if TYPE_CHECKING:
    from nodes.services import Services

EPHEMERAL_SESSION = "ephemeral"


class Node(Protocol):
    """A graph node: a function of the state and the runtime returning the keys it changes."""

    def __call__(self, state: AgentState, *, runtime: Runtime[Context]) -> StateUpdate:
        """Run the node."""
        ...


def session_id(runtime: Runtime[Context] | None) -> str:
    """Return the thread id, which the protocol calls the session id."""
    info = getattr(runtime, "execution_info", None)
    return str(getattr(info, "thread_id", None) or EPHEMERAL_SESSION)


def context_of(runtime: Runtime[Context] | None) -> Context:
    """Return the trusted caller: the authenticated user when served, else the given context.

    Under ``langgraph dev`` (or any LangGraph server with ``graph/auth.py``) the server puts
    the verified token's user in ``configurable.langgraph_auth_user``; identity (``user_id``,
    ``user_role``) then comes only from there, and whatever identity the client wrote into its
    run ``context`` is ignored, since any caller can write anything there. Other settings in
    the context (model, endpoint) are still honoured. In-process ``build_graph`` callers have
    no authenticated user and keep passing identity in ``Context``.
    """
    context = getattr(runtime, "context", None)
    if isinstance(context, Context):
        given = context
    elif isinstance(context, dict):
        known = {key: value for key, value in context.items() if key in Context.__annotations__}
        given = Context(**known)
    else:
        given = Context()
    authenticated = _authenticated_user()
    if authenticated is None:
        return given
    user_id, role = authenticated
    return dataclasses.replace(given, user_id=user_id, user_role=role)


def _authenticated_user() -> tuple[str, str] | None:
    """Return ``(user_id, role)`` of the server-authenticated caller, if this run has one."""
    try:
        config = get_config()
    except RuntimeError:  # not inside a runnable (a plain function call, a unit test)
        return None
    user = (config.get("configurable") or {}).get("langgraph_auth_user")
    if user is None:
        return None
    identity = _user_field(user, "identity")
    if not identity:
        # A server user without an identity must not fall back to the client's claim.
        return ("anonymous", "customer")
    role = _user_field(user, "role")
    return (str(identity), str(role) if role in ROLES else "customer")


def _user_field(user: Any, name: str) -> Any:
    """Read a field of the server's user object (a proxy object or, once stored, a dict)."""
    if isinstance(user, Mapping):
        return user.get(name)
    getter = getattr(user, "get", None)
    if callable(getter):
        try:
            value = getter(name)
        except (TypeError, KeyError):
            value = None
        if value is not None:
            return value
    try:
        return getattr(user, name, None)
    except Exception:  # noqa: BLE001 - a proxy may raise anything for a missing attribute
        return None


def tool_context(
    runtime: Runtime[Context] | None,
    services: Services,
    *,
    task_id: str,
    results: Sequence[ToolResult],
    step_count: int = 0,
) -> ToolContext:
    """Build what a tool call may know: the trusted caller, the thread, the task so far."""
    context = context_of(runtime)
    return ToolContext(
        user_id=context.user_id,
        user_role=context.user_role,
        session_id=session_id(runtime),
        task_id=task_id,
        resources=services.database,
        history=TaskHistory.from_results(list(results), step_count),
        settings=services.settings,
    )


def latest_user_message(state: AgentState) -> HumanMessage | None:
    """Return the most recent user message, if any."""
    for message in reversed(state.get("messages") or []):
        if isinstance(message, HumanMessage):
            return message
    return None


def message_text(message: AnyMessage | None) -> str:
    """Return a message's text content, joining text parts of multimodal content."""
    if message is None:
        return ""
    if isinstance(message.content, str):
        return message.content
    parts = [
        part.get("text", "") if isinstance(part, dict) else str(part) for part in message.content
    ]
    return " ".join(parts)


def derive_task_id(
    session: str,
    message: AnyMessage | None,
    messages: Sequence[AnyMessage] = (),
    *,
    earlier_turns: int = 0,
) -> str:
    """Derive the task id from what every replay of the turn keeps.

    The anchor is the thread, the message's place in the conversation (how many user
    messages came before it: ``earlier_turns``, the turns compaction has moved out of the
    state, plus those still in ``messages``) and a hash of its text. Counting only the
    messages in state gave the same place to every turn once compaction kept the state at
    its last few turns, so the same words sent again later were the same task: their calls
    got the same request ids and were answered from the first one's record, not run.

    Not the message id: LangGraph gives the input a new id when a run is replayed from the
    turn's input (``__start__``) checkpoint, and a task id that changed would make every
    request id new and let a side effect run twice. So resuming, replaying from any
    checkpoint of the turn and forking before the turn with the same text all keep the task;
    a fork that edits the text, or the same text sent again later in the thread, is a new
    task.
    """
    position = earlier_turns + _user_messages_before(message, messages)
    text = message_text(message)
    content = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    digest = hashlib.sha256(f"{session}|{position}|{content}".encode()).hexdigest()
    return f"task_{digest[:16]}"


def _user_messages_before(message: AnyMessage | None, messages: Sequence[AnyMessage]) -> int:
    """Count the user messages before ``message`` (all of them when it is not in the list)."""
    count = 0
    for item in messages:
        if item is message or (
            message is not None and item.id is not None and item.id == message.id
        ):
            return count
        if isinstance(item, HumanMessage):
            count += 1
    return count


def protocol_fields(
    state: AgentState | StateUpdate,
    runtime: Runtime[Context] | None,
    *,
    role: str,
    content: Any,
    **fields: Any,
) -> JsonObject:  # fields before ``ProtocolMessage`` checks them, a peer's extras kept
    """Collect a protocol message's fields, stamped with the session, task and caller role."""
    context = context_of(runtime)
    base: JsonObject = {  # as above
        "role": role,
        "content": content,
        "session_id": session_id(runtime),
        "task_id": state.get("task_id", ""),
        "user_role": context.user_role,
        "retry_count": state.get("retry_count", 0),
    }
    base.update(fields)
    return base


def protocol_message(
    state: AgentState | StateUpdate,
    runtime: Runtime[Context] | None,
    *,
    role: str,
    content: Any,
    **fields: Any,
) -> ValidatedProtocol:
    """Build a validated protocol message stamped with the session, task and caller role.

    It is returned as a JSON-ready dict: node outputs are checkpointed as pending writes,
    and plain data keeps them readable by any saver and any peer.
    """
    message = ProtocolMessage(
        **protocol_fields(state, runtime, role=role, content=content, **fields)
    )
    # marked as validated, so the ``protocol`` reducer does not validate it a second time
    return message.validated()


_ALWAYS_WRITTEN = frozenset(("messages", "protocol"))
"""Keys written even when unchanged: appends."""


def only_changes(
    state: Mapping[str, Any], update: StateUpdate, *, keep: Collection[str] = ()
) -> StateUpdate:
    """Drop the keys of ``update`` that would leave the state as it is.

    Every key a node returns is a channel write: LangGraph bumps its version, and the
    checkpointer serializes it twice (the write and the new blob). Starting a task resets
    eighteen keys, most of them already at their reset value. ``keep`` names keys a reader
    of the node's update needs every time (the trace's intent record, the CLI's line).
    """
    out: StateUpdate = {}
    for key, value in update.items():
        current = state.get(key)
        plain = value.value if isinstance(value, Overwrite) else value
        if (
            key in _ALWAYS_WRITTEN
            or key in keep
            or plain != current
            or (plain is None and key not in state)
        ):
            out[key] = value
    return out
