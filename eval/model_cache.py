"""A caching reverse proxy for the model endpoint, for evaluations only.

Evaluating a local model on this machine costs ~20 s per agent turn, and an evaluation asks
the same questions many times: the bare baseline runs the same graph as the agent (so the
same understanding and planning prompts), and fault trials 2–4 repeat trial 1 until a fault
changes what the model is shown. With ``reach eval --model-cache PATH`` every model request
goes through this proxy; a request whose exact body (canonical JSON, headers ignored) was
answered before is served from the SQLite file at ``PATH``, any other is forwarded to the
real endpoint and its answer stored. At temperature 0 this is what the model would answer
anyway; it also makes agent and bare see the same answer to the same prompt, which is the
point of the A/B.

Honesty rules: only ``200`` answers are stored, and only when they came back within the
client's timeout (a client that gave up fell back to the rules; replaying the late answer
would make the next run see something the first never saw). Latency figures must come from
turns with no cache hit; the proxy counts hits and misses so the harness can tell.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

HOP_HEADERS = frozenset(
    {"connection", "keep-alive", "transfer-encoding", "content-length", "host", "content-encoding"}
)
"""Headers that describe one connection, not the message; never relayed."""


def request_key(method: str, path: str, body: bytes) -> str:
    """Hash a request: method, path and the body as canonical JSON (raw bytes if not JSON)."""
    try:
        canonical = json.dumps(
            json.loads(body), sort_keys=True, ensure_ascii=False, separators=(",", ":")
        ).encode()
    except ValueError:
        canonical = body
    digest = hashlib.sha256()
    for part in (method.encode(), b"\0", path.encode(), b"\0", canonical):
        digest.update(part)
    return digest.hexdigest()


@dataclass
class CacheStats:
    """What the proxy did, for the report: hits, misses and the misses' upstream times."""

    hits: int = 0
    misses: int = 0
    stored: int = 0
    not_stored: int = 0
    """Misses whose answer was not kept (an error status, or slower than the client's timeout)."""
    passthrough: int = 0
    """Requests never cached (``GET``, streaming)."""
    miss_seconds: list[float] = field(default_factory=list)
    statuses: dict[int, int] = field(default_factory=dict)
    """Upstream status codes of the misses."""


class ModelCache:
    """A response store in one SQLite file, safe across the proxy's threads."""

    def __init__(self, path: Path) -> None:
        """Open (or create) the store at ``path``."""
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, status INTEGER,"
            " content_type TEXT, body BLOB, seconds REAL, created REAL)"
        )
        self._db.commit()

    def get(self, key: str) -> tuple[int, str, bytes] | None:
        """Return ``(status, content type, body)`` stored under ``key``, or ``None``."""
        with self._lock:
            row = self._db.execute(
                "SELECT status, content_type, body FROM responses WHERE key = ?", (key,)
            ).fetchone()
        return None if row is None else (int(row[0]), str(row[1]), bytes(row[2]))

    def put(self, key: str, status: int, content_type: str, body: bytes, seconds: float) -> None:
        """Store one answer (the first one stored for a key wins)."""
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO responses VALUES (?, ?, ?, ?, ?, ?)",
                (key, status, content_type, body, seconds, time.time()),
            )
            self._db.commit()

    def __len__(self) -> int:
        """Return the number of stored answers."""
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._db.close()


class CachingProxy:
    """An OpenAI-compatible endpoint on loopback that answers from a ``ModelCache``.

    ``upstream`` is the real endpoint's base URL (``http://127.0.0.1:8181/v1``); the proxy's
    ``base_url`` has the same path, so a client only swaps the host and port.
    """

    def __init__(
        self, cache: ModelCache, upstream: str, *, client_timeout_s: float, port: int = 0
    ) -> None:
        """Bind a loopback port (``0``: any free one); call ``start`` to serve."""
        self.cache = cache
        self.upstream = upstream.rstrip("/")
        parts = urlsplit(self.upstream)
        self._origin = f"{parts.scheme}://{parts.netloc}"
        self._prefix = parts.path
        self.client_timeout_s = client_timeout_s
        self.stats = CacheStats()
        self._stats_lock = threading.Lock()
        self._http = httpx.Client(timeout=httpx.Timeout(max(120.0, 4 * client_timeout_s)))
        self._server = ThreadingHTTPServer(("127.0.0.1", port), self._handler_class())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """The URL clients use instead of ``upstream``."""
        return f"http://127.0.0.1:{self._server.server_address[1]}{self._prefix}"

    def start(self) -> CachingProxy:
        """Serve in a daemon thread."""
        # ``stop`` waits for the loop to look: every 0.05 s, not the default 0.5 s
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the upstream client (the cache stays open)."""
        self._server.shutdown()
        self._server.server_close()
        self._http.close()

    def __enter__(self) -> CachingProxy:
        """Start serving."""
        return self.start()

    def __exit__(self, *_: object) -> None:
        """Stop serving."""
        self.stop()

    def _count(self, **deltas: int) -> None:
        with self._stats_lock:
            for name, delta in deltas.items():
                setattr(self.stats, name, getattr(self.stats, name) + delta)

    def forward(
        self, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, str, bytes]:
        """Answer one request: from the cache if its body was seen, else from upstream."""
        cacheable = method == "POST" and not _streaming(body)
        key = request_key(method, path, body)
        if cacheable:
            hit = self.cache.get(key)
            if hit is not None:
                self._count(hits=1)
                return hit
        if cacheable:
            # counted on arrival, so a turn whose client gave up still owns its miss
            self._count(misses=1)
        started = time.perf_counter()
        relay = {k: v for k, v in headers.items() if k.lower() not in HOP_HEADERS}
        response = self._http.request(method, self._origin + path, headers=relay, content=body)
        seconds = time.perf_counter() - started
        content_type = response.headers.get("content-type", "application/json")
        if not cacheable:
            self._count(passthrough=1)
        else:
            with self._stats_lock:
                self.stats.miss_seconds.append(seconds)
                code = response.status_code
                self.stats.statuses[code] = self.stats.statuses.get(code, 0) + 1
            if response.status_code == 200 and seconds < self.client_timeout_s:
                self.cache.put(key, 200, content_type, response.content, seconds)
                self._count(stored=1)
            else:
                self._count(not_stored=1)
        return response.status_code, content_type, response.content

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                """Stay quiet: the evaluation prints its own progress."""

            def _relay(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                try:
                    status, content_type, payload = proxy.forward(
                        self.command, self.path, dict(self.headers.items()), body
                    )
                except httpx.HTTPError as exc:
                    status, content_type = 502, "application/json"
                    payload = json.dumps({"error": {"message": f"upstream: {exc}"}}).encode()
                # a client past its timeout has hung up; its answer is simply dropped
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.send_response(status)
                    self.send_header("content-type", content_type)
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)

            def do_POST(self) -> None:  # noqa: N802 - the http.server hook name
                """Relay a POST (chat completions), cached."""
                self._relay()

            def do_GET(self) -> None:  # noqa: N802 - the http.server hook name
                """Relay a GET (``/models``, health), never cached."""
                self._relay()

        return Handler


def _streaming(body: bytes) -> bool:
    try:
        return bool(json.loads(body).get("stream"))
    except (ValueError, AttributeError):
        return False
