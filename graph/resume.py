"""A resume the graph cannot read is refused at our boundary, before LangGraph sees it.

A pending confirmation is answered with ``Command(resume=...)``: the user's words (a string)
or a decision object (``{"decisions": [...]}``, ``{"decision": ...}``, or LangGraph's map of
interrupt ids to such answers). Anything else (``None``, a bare list, bytes, a number) is
not an answer: ``Command(resume=None)`` even crashed inside LangGraph (an
``UnboundLocalError``), and a list or bytes was silently asked again.

So every way into the graph checks the value first and raises ``UnreadableResume`` (a
``ValueError`` with a ``code`` and the sentence in the thread's language, the catalog's
``resume.unreadable``): in Python, the compiled graph's ``stream``/``astream`` (and so
``invoke``/``ainvoke`` and the event streams, which go through them); under ``langgraph dev``
or Aegra, ``ResumeCheckMiddleware`` answers 422 before a run is created. Nothing runs; the
confirmation stays pending.

The same gate drops the tool messages a client put in its input (``client_input``): tool
results come only from the executor.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, MutableMapping
from typing import Any

from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from language import LANGUAGES, sentences
from security.client_messages import logged, without_tool_messages

CODE = "unreadable_resume"
"""The error's machine-readable code (the HTTP body's ``error``)."""
_INTERRUPT_ID = re.compile(r"^[0-9a-f]{32}$")


class UnreadableResume(ValueError):  # noqa: N818 - named for what it says, like KeyError
    """A resume value that is not an answer; nothing ran, the confirmation still waits."""

    code = CODE

    def __init__(self, value: Any, *, language: str = "zh") -> None:
        """Say what arrived and what an answer looks like, in ``language``."""
        self.kind = kind_of(value)
        self.language = language if language in LANGUAGES else "zh"
        said = sentences(self.language)
        shown = said.get(f"resume.kind.{self.kind}", self.kind)
        self.user_message = said["resume.unreadable"].format(kind=shown)
        super().__init__(self.user_message)


def kind_of(value: Any) -> str:
    """Name the type of what arrived (``null``, ``bytes``, ``list`` or the type's name)."""
    if value is None:
        return "null"
    if isinstance(value, bytes | bytearray):
        return "bytes"
    if isinstance(value, list | tuple):
        return "list"
    return type(value).__name__


def readable(value: Any) -> bool:
    """Whether ``value`` can answer a confirmation: words, or a decision object.

    A map of interrupt ids (LangGraph's resume map) is readable when each of its answers is.
    """
    if isinstance(value, str):
        return True
    if not isinstance(value, Mapping):
        return False
    if value and all(isinstance(key, str) and _INTERRUPT_ID.match(key) for key in value):
        return all(isinstance(answer, str | Mapping) for answer in value.values())
    return True


def unreadable_resume(command: Mapping[str, Any] | Command[Any]) -> Any | None:
    """Return the value of a command's unreadable resume, or ``None`` when it is fine.

    A command with nothing in it (no resume, no update, no goto) is unreadable too: it is
    what ``Command(resume=None)`` is.
    """
    if isinstance(command, Command):
        resume, rest = command.resume, (command.update, command.goto)
    else:
        resume, rest = command.get("resume"), (command.get("update"), command.get("goto"))
    if resume is None:
        return _Empty if not any(rest) else None
    return None if readable(resume) else resume


class _EmptyType:
    """Stands for an empty command's missing resume (``None`` means "fine")."""


_Empty = _EmptyType()


def _refused(value: Any) -> Any:
    return None if value is _Empty else value


DURABILITY_KEY = "reach_durability"
"""A ``configurable`` key: the durability of a run that names none (``Settings.durability``)."""


class CheckedGraph(CompiledStateGraph[Any, Any, Any, Any]):
    """The compiled graph, refusing an unreadable resume before LangGraph runs anything.

    It also gives a run that names no ``durability`` the graph's default, set with
    ``with_config(configurable={DURABILITY_KEY: ...})``: LangGraph's own default key is private.
    """

    def stream(self, input: Any, config: Any = None, **kwargs: Any) -> Iterator[Any]:  # noqa: A002
        """Check the input, then stream as LangGraph does."""
        if isinstance(input, Command) and (bad := unreadable_resume(input)) is not None:
            raise UnreadableResume(_refused(bad), language=self._language(config))
        return super().stream(client_input(input), config, **self._durable(config, kwargs))

    async def astream(self, input: Any, config: Any = None, **kwargs: Any) -> AsyncIterator[Any]:  # noqa: A002
        """Check the input, then stream as LangGraph does."""
        if isinstance(input, Command) and (bad := unreadable_resume(input)) is not None:
            raise UnreadableResume(_refused(bad), language=await self._alanguage(config))
        durable = self._durable(config, kwargs)
        async for chunk in super().astream(client_input(input), config, **durable):
            yield chunk

    def _durable(self, config: Any, kwargs: dict[str, Any]) -> dict[str, Any]:  # stream kwargs
        """``kwargs`` with the default durability when the run names none."""
        if kwargs.get("durability") is not None:
            return kwargs
        configurable = {
            **(self.config or {}).get("configurable", {}),
            **(config or {}).get("configurable", {}),
        }
        default = configurable.get(DURABILITY_KEY)
        return {**kwargs, "durability": default} if default is not None else kwargs

    def _language(self, config: Any) -> str:
        """The thread's language, for the message; Chinese when there is no thread yet."""
        if not config or not self.checkpointer:
            return "zh"
        try:
            values = self.get_state(config).values
        except (ValueError, KeyError, RuntimeError, NotImplementedError):
            return "zh"  # a thread the checkpointer cannot read here: the default language
        return str((values or {}).get("language") or "zh")

    async def _alanguage(self, config: Any) -> str:
        """``_language`` on an async checkpointer (a server's)."""
        if not config or not self.checkpointer:
            return "zh"
        try:
            values = (await self.aget_state(config)).values
        except (ValueError, KeyError, RuntimeError, NotImplementedError):
            return "zh"
        return str((values or {}).get("language") or "zh")


def client_input(value: Any) -> Any:
    """A run's input (or a command's update) without the tool messages a client put in it.

    Tool results come only from the executor (``security.client_messages``); the client's
    other messages (what the user typed) go on as they came.
    """
    if isinstance(value, Command) and value.update is not None:
        update, dropped = without_tool_messages(value.update)
        if dropped:
            logged(dropped, where="command update")
            return Command(graph=value.graph, update=update, resume=value.resume, goto=value.goto)
        return value
    cleaned, dropped = without_tool_messages(value)
    if dropped:
        logged(dropped, where="run input")
    return cleaned


def checked(compiled: CompiledStateGraph[Any, Any, Any, Any]) -> CheckedGraph:
    """Return ``compiled`` as a ``CheckedGraph`` (its copies, ``with_config``, stay checked)."""
    fields = {k: v for k, v in compiled.__dict__.items() if k != "__orig_class__"}
    return CheckedGraph(**fields)


# ---- HTTP: langgraph dev and Aegra -----------------------------------------------------------

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
_PATHS = ("/threads", "/runs")


class ResumeCheckMiddleware:
    """Answer 422 to a run whose ``command.resume`` is not an answer, before any run starts."""

    def __init__(self, app: ASGIApp) -> None:
        """Wrap ``app``."""
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Read a run request's body, refuse it or replay it to the app unchanged."""
        path = str(scope.get("path", ""))
        if scope.get("type") != "http" or scope.get("method") != "POST" or "/runs" not in path:
            await self.app(scope, receive, send)
            return
        if not path.startswith(_PATHS):
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request" or not message.get("more_body", False):
                break
        body = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.request")
        bad = _bad_resume(body)
        if bad is not None:
            await _refuse(send, bad, _language(scope))
            return
        await self.app(scope, replay(messages, receive), send)


def _bad_resume(body: bytes) -> Any | None:
    try:
        payload = json.loads(body) if body else None
    except (ValueError, UnicodeDecodeError):
        return None  # not JSON: the route answers 422 itself
    command = payload.get("command") if isinstance(payload, dict) else None
    if not isinstance(command, dict) or "resume" not in command:
        return None
    return unreadable_resume(command)


def _language(scope: Scope) -> str:
    headers = dict(scope.get("headers") or [])
    accepted = headers.get(b"accept-language", b"").decode("latin-1").strip().lower()
    return "en" if accepted.startswith("en") else "zh"


async def _refuse(send: Send, bad: Any, language: str) -> None:
    error = UnreadableResume(_refused(bad), language=language)
    body = json.dumps(
        {"error": CODE, "detail": error.user_message, "got": error.kind}, ensure_ascii=False
    ).encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": 422,
            "headers": [
                (b"content-type", b"application/json; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def replay(messages: list[Message], receive: Receive) -> Receive:
    """Hand out ``messages`` first, then the real ``receive`` (disconnects, for streams)."""
    pending = list(messages)

    async def replayed() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed


__all__ = [
    "CODE",
    "CheckedGraph",
    "ResumeCheckMiddleware",
    "UnreadableResume",
    "checked",
    "client_input",
    "readable",
    "unreadable_resume",
]
