"""A small local weather API for the demo, so `make demo` needs no network.

It speaks the same HTTP contract the weather tool expects (``GET /weather?city=...``) and
answers 404 for a city it does not know.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

DEMO_WEATHER = {
    "Beijing": {"temp_c": 26.0, "condition": "晴", "humidity": 35},
    "Shanghai": {"temp_c": 29.5, "condition": "多云", "humidity": 72},
    "Hangzhou": {"temp_c": 28.0, "condition": "小雨", "humidity": 85},
}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
        url = urlparse(self.path)
        city = (parse_qs(url.query).get("city") or [""])[0]
        if url.path != "/weather" or city not in DEMO_WEATHER:
            self._send(404, {"error": f"unknown city {city!r}"})
            return
        self._send(200, {"city": city, **DEMO_WEATHER[city]})

    def _send(self, status: int, body: dict[str, object]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        """Keep the demo's output clean."""


def start_demo_weather_server() -> tuple[ThreadingHTTPServer, str]:
    """Serve the demo weather API on a free loopback port; return the server and its URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    # polled every 50 ms, so that ``shutdown()`` returns at once (at the default 0.5 s every
    # test that starts one waited half a second to stop it)
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    ).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"
