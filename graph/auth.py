"""Custom authentication and thread ownership for the served API (``langgraph dev``).

Registered in ``langgraph.json`` as ``"auth": {"path": "./graph/auth.py:auth"}``. Every request
must carry a token from ``reach token`` (``security.tokens``), either as
``Authorization: Bearer <token>`` or as ``x-api-key: <token>`` (the header agent-chat-ui's API
key field sends). Without a valid one the server answers 401. The verified user reaches the
graph as ``config["configurable"]["langgraph_auth_user"]``; ``nodes.common.context_of`` takes
identity from there and ignores any ``user_id`` the client put in its run ``context``.

Who sees which thread (``metadata.owner`` is stamped on create and cannot be changed by
anyone but an admin):

============  ==============================  ===========================================
role          read / list / history           run, update, delete
============  ==============================  ===========================================
customer      own threads                     own threads
analyst       own threads                     own threads
agent         own threads and customers'      own threads only (staff look, they do not
              threads (support staff)         act inside a customer's conversation)
admin         every thread                    every thread
============  ==============================  ===========================================

Assistants are readable by everyone and changed only by admins; crons follow thread
ownership; the store is namespaced by user. Anything not listed is refused unless the
caller is an admin.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Final, TypedDict, cast

from langgraph_sdk import Auth

from contract.scenario import ScenarioSet
from graph.intake import tokenize_run
from scenarios import SCENARIOS
from security.client_messages import drop_from_payload
from security.permissions import ROLES, Permissions
from security.tokens import InvalidToken, read_token, token_from_headers

PERMISSIONS = Permissions.merged(ScenarioSet(SCENARIOS).grants())
"""What each role may do, from the shipped scenarios' grants."""

auth = Auth()

OWNER_KEY: Final = "owner"
READERS_KEY: Final = "readers"
AGENT_READABLE = "role:agent"
"""Put in ``metadata.readers`` of threads that support staff may read."""
_STAFF_READABLE_OWNERS = frozenset({"customer", "agent"})

Filter = Auth.types.FilterType
"""A metadata filter the server applies (``{"owner": id}``, ``{"readers": {"$contains": x}}``)."""


class ReachUser(Auth.types.MinimalUserDict):
    """The user the server is handed: LangGraph's minimal user and the caller's role."""

    role: str


class OwnerMetadata(TypedDict):
    """What is stamped on a thread (or cron) a user creates: who owns it and who may read it."""

    owner: str
    readers: list[str]
    owner_role: str


@auth.authenticate
async def authenticate(headers: dict[bytes, bytes]) -> Auth.types.MinimalUserDict:
    """Verify the request's token and return the user it names, or answer 401."""
    token = token_from_headers(headers or {})
    if token is None:
        raise Auth.exceptions.HTTPException(
            status_code=401,
            detail="missing token: send 'Authorization: Bearer <token>' or 'x-api-key: <token>'"
            " (get one with `reach token USER_ID`)",
        )
    # Reading the key may touch the data directory: keep blocking I/O off the event loop.
    result = await asyncio.to_thread(read_token, token)
    if isinstance(result, InvalidToken):
        raise Auth.exceptions.HTTPException(status_code=401, detail=result.reason)
    user: ReachUser = {
        "identity": result.user_id,
        "display_name": result.user_id,
        "is_authenticated": True,
        "permissions": sorted(PERMISSIONS.grants.get(result.role, frozenset())),
        "role": result.role,
    }
    return user


def user_role(user: Any) -> str:
    """Return the authenticated user's role; a user without one gets the least privilege."""
    role: Any = None
    if isinstance(user, Mapping) or hasattr(user, "get"):
        try:
            role = user.get("role")
        except (TypeError, KeyError, AttributeError):
            role = None
    if role is None:
        role = getattr(user, "role", None)
    return str(role) if role in ROLES else "customer"


def owner_metadata(user: Any) -> OwnerMetadata:
    """Return the metadata stamped on a thread (or cron) the user creates."""
    role = user_role(user)
    readers = [user.identity]
    if role in _STAFF_READABLE_OWNERS:
        readers.append(AGENT_READABLE)
    return {OWNER_KEY: user.identity, READERS_KEY: readers, "owner_role": role}


def _stamp(value: Any, user: Any) -> None:
    """Overwrite ownership in ``value["metadata"]``, whatever the client sent.

    The dict is changed in place: the server keeps its own reference to it.
    """
    metadata = value.get("metadata")
    if metadata is None:
        metadata = {}
        value["metadata"] = metadata
    metadata.update(owner_metadata(user))


def read_filter(user: Any) -> Filter | None:
    """Return the metadata filter for reading or listing threads (``None``: everything)."""
    role = user_role(user)
    if role == "admin":
        return None
    if role == "agent":
        return cast("Filter", {READERS_KEY: {"$contains": AGENT_READABLE}})  # mypy: the union
    return {OWNER_KEY: user.identity}


def write_filter(user: Any) -> Filter | None:
    """Return the filter for running, updating or deleting (``None``: everything)."""
    if user_role(user) == "admin":
        return None
    return {OWNER_KEY: user.identity}


@auth.on
async def deny_by_default(ctx: Auth.types.AuthContext, value: Any) -> bool:
    """Refuse any resource or action without its own rule below, except to admins."""
    return user_role(ctx.user) == "admin"


@auth.on.threads.create
async def on_thread_create(ctx: Auth.types.AuthContext, value: Any) -> Filter:
    """Stamp the creator as owner; an existing id must already be theirs."""
    _stamp(value, ctx.user)
    return {OWNER_KEY: ctx.user.identity}


@auth.on.threads.read
async def on_thread_read(ctx: Auth.types.AuthContext, value: Any) -> Filter | None:
    """Let a user read their threads (staff more, see the module docstring)."""
    return read_filter(ctx.user)


@auth.on.threads.search
async def on_thread_search(ctx: Auth.types.AuthContext, value: Any) -> Filter | None:
    """List only the threads the user may read."""
    return read_filter(ctx.user)


@auth.on.threads.update
async def on_thread_update(ctx: Auth.types.AuthContext, value: Any) -> Filter | None:
    """Let owners update their threads, without handing them to someone else."""
    if user_role(ctx.user) != "admin" and value.get("metadata"):
        _stamp(value, ctx.user)
    return write_filter(ctx.user)


@auth.on.threads.delete
async def on_thread_delete(ctx: Auth.types.AuthContext, value: Any) -> Filter | None:
    """Let owners delete their threads."""
    return write_filter(ctx.user)


def dismissal_as_rejection(value: Any) -> None:
    """Read a bare ``command: {goto: "__end__"}`` as a rejection of what is waiting.

    agent-chat-ui's "Mark as resolved" sends it on a thread paused for a confirmation.
    LangGraph drops a write to ``__end__`` and runs the paused node again, which asks again:
    the action would stay pending, and a later "确认" would run it. Adding a ``reject``
    resume makes it what the user meant: nothing runs, the question is closed (``awaiting``
    cleared), and a later "确认" is a new message, not an answer. On a thread that is not
    paused, the resume is ignored.
    """
    kwargs = value.get("kwargs") if isinstance(value, dict) else None
    command = kwargs.get("command") if isinstance(kwargs, dict) else None
    if not isinstance(command, dict) or command.get("resume") is not None:
        return
    goto = command.get("goto")
    if goto == "__end__" or goto == ["__end__"]:
        command["resume"] = {"decision": "reject"}


@auth.on.threads.create_run
async def on_run_create(ctx: Auth.types.AuthContext, value: Any) -> Filter | None:
    """Run only on one's own threads; a thread the run creates is stamped as theirs.

    The run's input and resume are masked here too (``graph.intake``): a LangGraph server
    stores the very ``kwargs`` it hands this handler, so no ID number or PIN reaches its
    run table or checkpoints even when the ``http.app`` middleware is not loaded.
    """
    if user_role(ctx.user) != "admin":
        _stamp(value, ctx.user)
    dismissal_as_rejection(value)
    kwargs = value.get("kwargs") if isinstance(value, dict) else None
    payload = kwargs if isinstance(kwargs, dict) else value
    drop_from_payload(payload, where=f"run of {ctx.user.identity}")  # no client tool results
    await tokenize_run(payload, ctx.user.identity)
    return write_filter(ctx.user)


@auth.on.assistants(actions=["read", "search"])
async def on_assistant_read(ctx: Auth.types.AuthContext, value: Any) -> bool:
    """Let every authenticated user find the served graphs (front-ends search them)."""
    return True


@auth.on.crons
async def on_cron(ctx: Auth.types.AuthContext, value: Any) -> Filter | None:
    """Scope crons like threads: created as the caller's, visible and changed by the owner."""
    if ctx.action == "create":
        _stamp(value, ctx.user)
    if ctx.action in {"read", "search"}:
        return read_filter(ctx.user)
    return write_filter(ctx.user)


@auth.on.store
async def on_store(ctx: Auth.types.AuthContext, value: Any) -> bool:
    """Confine non-admins to the store namespace that starts with their user id."""
    if user_role(ctx.user) == "admin":
        return True
    namespace = tuple(value.get("namespace") or ())
    return bool(namespace) and namespace[0] == ctx.user.identity
