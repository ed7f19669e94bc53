"""A real OpenAI-compatible HTTP server on loopback, with scripted answers, for tests.

It speaks the Chat Completions wire format (plain JSON and SSE streaming) so that
``langchain_openai.ChatOpenAI`` and the ``openai`` client talk to it exactly as they would to
llama-server or a hosted endpoint. Each answer is a ``Scripted`` reply: text ``content`` (JSON,
fenced JSON, prose), ``tool_calls``, ``logprobs``, an HTTP error status, or a delay longer than
the client's timeout. Answers are taken in order, or chosen by a matcher function that sees the
request body. Every request body is recorded so tests can assert what was sent.

Use the ``openai_server`` fixture (``from tests.fakes.openai_server import openai_server`` in a
conftest, or import it into the test module)::

    def test_x(openai_server):
        openai_server.push(Scripted(content='{"intent": "QUERY_WEATHER"}'))
        llm = ChatOpenAI(base_url=openai_server.base_url, api_key="test", model="fake")
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

TokenLogprob = tuple[str, float, dict[str, float]]
"""(token, logprob, {alternative token: logprob}) for one generated token."""


@dataclass
class Scripted:
    """One scripted answer to a chat completion request."""

    content: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    """``{"name", "arguments" (dict or raw string), "id"?}`` each."""
    logprobs: list[TokenLogprob] | None = None
    status: int = 200
    """Anything but 200 answers with an OpenAI-style error body."""
    delay_s: float = 0.0
    """Hold the answer this long (released early when the server stops)."""
    finish_reason: str | None = None
    raw: dict[str, Any] | None = None
    """A complete response body sent as is (for malformed-response tests)."""


def label_logprobs(
    content: str, label: str, logprob: float, **alternatives: float
) -> list[TokenLogprob]:
    """Split ``content`` into tokens so that ``label`` is one token with the given logprob.

    The other tokens get logprob 0 (certain), as grammar-forced JSON punctuation does.
    """
    start = content.index(label)
    before, after = content[:start], content[start + len(label) :]
    tokens: list[TokenLogprob] = [(ch, 0.0, {}) for ch in before]
    tokens.append((label, logprob, dict(alternatives)))
    tokens.extend((ch, 0.0, {}) for ch in after)
    return tokens


Matcher = Callable[[dict[str, Any]], "Scripted | None"]


class FakeOpenAIServer:
    """A loopback Chat Completions server answering from a script."""

    def __init__(self, model_ids: tuple[str, ...] = ("fake-model",)) -> None:
        self.requests: list[dict[str, Any]] = []
        """Every request body received on ``/v1/chat/completions``, in order."""
        self.model_ids = model_ids
        self._queue: list[Scripted] = []
        self._matchers: list[Matcher] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        # a short poll: ``shutdown`` waits for the loop to look, 0.5 s by default, per test
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    # ---- scripting -----------------------------------------------------------------------
    def push(self, *answers: Scripted) -> FakeOpenAIServer:
        """Queue answers, served in order to requests no matcher claims."""
        with self._lock:
            self._queue.extend(answers)
        return self

    def match(self, matcher: Matcher) -> FakeOpenAIServer:
        """Add a function that may answer a request (return ``None`` to pass)."""
        self._matchers.append(matcher)
        return self

    @property
    def base_url(self) -> str:
        """The ``/v1`` URL to give to a client."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def root_url(self) -> str:
        """The URL without ``/v1`` (``/health`` lives here, as on llama-server)."""
        return self.base_url.removesuffix("/v1")

    def last_prompt(self) -> str:
        """All message contents of the last request, joined, for assertions."""
        messages = self.requests[-1]["messages"]
        return "\n".join(str(m.get("content") or "") for m in messages)

    # ---- lifecycle -----------------------------------------------------------------------
    def start(self) -> FakeOpenAIServer:
        """Serve in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Release delayed answers and shut down."""
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    # ---- serving -------------------------------------------------------------------------
    def _next(self, body: dict[str, Any]) -> Scripted:
        for matcher in self._matchers:
            answer = matcher(body)
            if answer is not None:
                return answer
        with self._lock:
            if not self._queue:
                return Scripted(status=500, content="fake server: no scripted answer left")
            return self._queue.pop(0)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

            def _send_json(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                if self.path.rstrip("/") in ("/health", "/v1/health"):
                    self._send_json(200, {"status": "ok"})
                elif self.path.rstrip("/") == "/v1/models":
                    data = [
                        {"id": m, "object": "model", "owned_by": "fake"} for m in server.model_ids
                    ]
                    self._send_json(200, {"object": "list", "data": data})
                else:
                    self._send_json(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send_json(404, {"error": {"message": "not found"}})
                    return
                server.requests.append(body)
                answer = server._next(body)
                if answer.delay_s:
                    server._stopping.wait(answer.delay_s)
                if answer.status != 200:
                    self._send_json(
                        answer.status,
                        {
                            "error": {
                                "message": answer.content or "scripted failure",
                                "type": "server_error",
                                "code": answer.status,
                            }
                        },
                    )
                    return
                if answer.raw is not None:
                    self._send_json(200, answer.raw)
                    return
                if body.get("stream"):
                    self._stream(body, answer)
                else:
                    self._send_json(200, completion(body, answer))

            def _stream(self, body: dict[str, Any], answer: Scripted) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for chunk in stream_chunks(body, answer):
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

        return Handler


# ---- wire format ---------------------------------------------------------------------------


def _tool_call_wire(index: int, call: dict[str, Any]) -> dict[str, Any]:
    arguments = call.get("arguments", {})
    return {
        "id": call.get("id", f"call_{index}"),
        "type": "function",
        "function": {
            "name": call["name"],
            "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
        },
    }


def _logprobs_wire(tokens: list[TokenLogprob]) -> dict[str, Any]:
    return {
        "content": [
            {
                "token": token,
                "logprob": logprob,
                "bytes": list(token.encode()),
                "top_logprobs": [
                    {"token": token, "logprob": logprob, "bytes": list(token.encode())},
                    *(
                        {"token": alt, "logprob": lp, "bytes": list(alt.encode())}
                        for alt, lp in top.items()
                    ),
                ],
            }
            for token, logprob, top in tokens
        ]
    }


def _usage(body: dict[str, Any], answer: Scripted) -> dict[str, int]:
    prompt = sum(len(str(m.get("content") or "")) for m in body.get("messages", [])) // 4
    completion_tokens = len(answer.content or "") // 4 + 1
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt + completion_tokens,
    }


def completion(body: dict[str, Any], answer: Scripted) -> dict[str, Any]:
    """Build a non-streaming ``chat.completion`` body for ``answer``."""
    message: dict[str, Any] = {"role": "assistant", "content": answer.content}
    if answer.tool_calls:
        message["tool_calls"] = [_tool_call_wire(i, c) for i, c in enumerate(answer.tool_calls)]
    choice: dict[str, Any] = {
        "index": 0,
        "message": message,
        "finish_reason": answer.finish_reason or ("tool_calls" if answer.tool_calls else "stop"),
        "logprobs": _logprobs_wire(answer.logprobs) if answer.logprobs else None,
    }
    return {
        "id": f"chatcmpl-fake-{int(time.time() * 1000)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake-model"),
        "choices": [choice],
        "usage": _usage(body, answer),
    }


def stream_chunks(body: dict[str, Any], answer: Scripted) -> Iterator[dict[str, Any]]:
    """Yield ``chat.completion.chunk`` bodies for ``answer``: role, content pieces, calls, end."""
    base = {
        "id": "chatcmpl-fake-stream",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": body.get("model", "fake-model"),
    }

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish, **extra}]}

    yield chunk({"role": "assistant", "content": ""})
    if answer.logprobs:
        for token, logprob, top in answer.logprobs:
            yield chunk({"content": token}, logprobs=_logprobs_wire([(token, logprob, top)]))
    elif answer.content:
        text = answer.content
        for start in range(0, len(text), 8):
            yield chunk({"content": text[start : start + 8]})
    for index, call in enumerate(answer.tool_calls):
        wire = _tool_call_wire(index, call)
        yield chunk(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": wire["id"],
                        "type": "function",
                        "function": {"name": wire["function"]["name"], "arguments": ""},
                    }
                ]
            }
        )
        arguments = wire["function"]["arguments"]
        for start in range(0, len(arguments), 10):
            yield chunk(
                {
                    "tool_calls": [
                        {"index": index, "function": {"arguments": arguments[start : start + 10]}}
                    ]
                }
            )
    yield chunk({}, answer.finish_reason or ("tool_calls" if answer.tool_calls else "stop"))
    if (body.get("stream_options") or {}).get("include_usage"):
        yield {**base, "choices": [], "usage": _usage(body, answer)}


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAIServer]:
    """A started fake server, stopped after the test."""
    server = FakeOpenAIServer().start()
    try:
        yield server
    finally:
        server.stop()
