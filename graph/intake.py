"""Mask at intake on a server: the ASGI middleware and the vault both entry points use.

A server stores a run's input before our graph runs, with its own checkpointer and run
table, so ``security.intake`` must rewrite the request first. Two places can:

- ``IntakeMiddleware``, in ``graph/http_app.py``'s app. Both ``langgraph dev`` (LangGraph API
  server) and Aegra wrap their own routes in the middleware of the ``http.app`` they load,
  so it sees every ``/threads…`` and ``/runs…`` request body before any route does. It is
  the only intake point on Aegra, whose ``create_run`` handler gets a copy of the request
  and keeps only the ``config`` and ``context`` it returns, so a changed ``input`` is
  dropped (0.11; 0.6.0 skipped the handler on ``runs.wait``/``runs.stream`` altogether).
- ``graph/auth.py``'s ``create_run`` handler, on LangGraph servers, which hand it the very
  ``kwargs`` they store: a second net when the ``http.app`` is not loaded.

The owner of the tokens is the user the request's token names (read with
``security.tokens.read_token``, as ``graph/auth.py`` does); a request without a valid token is
passed on untouched, for the server to refuse.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from config.settings import get_settings
from graph.resume import Message, Receive, Scope, Send, replay
from scenarios import SCENARIOS
from security.client_messages import drop_from_payload
from security.intake import payload_has_secrets, tokenize_payload
from security.tokens import InvalidToken, read_token, token_from_headers
from security.vault import IdentityVault
from storage.db import Database, data_dir

_log = logging.getLogger(__name__)

ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_DATABASES: dict[Path, Database] = {}
_DATABASES_LOCK = threading.Lock()
_WRITES = frozenset(("POST", "PUT", "PATCH"))
_PATHS = ("/threads", "/runs")
"""Where run inputs, resumes and state updates arrive (Agent Protocol and LangGraph API)."""


def business_vault() -> IdentityVault:
    """Return the identity vault in the served graph's business database.

    The same file and seeds as ``nodes.services.Services.database`` by default (opening it
    first without the scenarios' seeds would leave a new database without their rows).
    """
    path = (data_dir(get_settings()) / "business.db").resolve()
    with _DATABASES_LOCK:
        database = _DATABASES.get(path)
        if database is None:
            seeds = [s.seed for s in SCENARIOS if s.seed is not None]
            database = Database(path, seeds=seeds)
            _DATABASES[path] = database
    return IdentityVault(database)


def tokenize_for(payload: Any, owner: str) -> bool:
    """Tokenize a payload's content fields in place for ``owner`` (blocking: vault writes).

    The vault (the business database) is opened only when there is something to vault.
    """
    if not payload_has_secrets(payload):
        return False
    return tokenize_payload(payload, owner, business_vault())


async def tokenize_run(payload: Any, owner: str) -> bool:
    """Do ``tokenize_for`` off the event loop."""
    return await asyncio.to_thread(tokenize_for, payload, owner)


def _token(headers: list[tuple[bytes, bytes]]) -> str | None:
    """The request's bearer token or API key, as ``graph/auth.py`` reads it."""
    return token_from_headers(dict(headers))


def _owner(token: str | None) -> str | None:
    if token is None:
        return None
    identity = read_token(token)
    return None if isinstance(identity, InvalidToken) else identity.user_id


def rewrite_body(body: bytes, token: str | None) -> bytes | None:
    """Return the body with its content tokenized, or ``None`` to pass it on as it came.

    A tool message the client put in it is dropped first (``security.client_messages``:
    tool results come only from the executor). Blocking (token check, vault writes): call
    it off the event loop.
    """
    owner = _owner(token)
    if owner is None or not body:
        return None
    try:
        payload = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None  # not JSON: the route answers 422 itself
    dropped = drop_from_payload(payload, where=f"request of {owner}")
    if not tokenize_for(payload, owner) and not dropped:
        return None
    return json.dumps(payload, ensure_ascii=False).encode("utf-8")


class IntakeMiddleware:
    """Tokenize ID numbers and PINs in run and state request bodies before any route reads them."""

    def __init__(self, app: ASGIApp) -> None:
        """Wrap ``app`` (the server's whole app, its own routes included)."""
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Buffer a write to ``/threads…`` or ``/runs…``, rewrite it, and replay it."""
        path = str(scope.get("path", ""))
        if (
            scope.get("type") != "http"
            or scope.get("method") not in _WRITES
            or not path.startswith(_PATHS)
        ):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away before the body
                await self.app(scope, replay([message], receive), send)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        headers = list(scope.get("headers") or [])
        new = await asyncio.to_thread(rewrite_body, body, _token(headers))
        if new is not None:
            body = new
            kept = [
                (k, v)
                for k, v in headers
                if k.lower() not in (b"content-length", b"transfer-encoding")
            ]
            scope = {**scope, "headers": [*kept, (b"content-length", str(len(body)).encode())]}
        request: Message = {"type": "http.request", "body": body, "more_body": False}
        await self.app(scope, replay([request], receive), send)


__all__ = ["IntakeMiddleware", "business_vault", "rewrite_body", "tokenize_for", "tokenize_run"]
