"""An ASGI app with the metrics, for ``langgraph dev`` (``langgraph.json``'s ``http.app``).

Under the LangGraph API server the metrics are at ``/reach/metrics`` (the server keeps
``/metrics`` for its own); mounted elsewhere, ``/metrics`` works too.

It runs in the server's own process, so it exposes the live ``default_metrics()`` that
every file-backed ``AuditLog`` (and so the executor and ``TraceRecorder``) feeds.
"""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tools.metrics import default_metrics, render_latest


async def metrics(request: Request) -> Response:
    """Serve the Prometheus text exposition."""
    return Response(render_latest(), media_type=CONTENT_TYPE_LATEST)


async def stats(request: Request) -> Response:
    """Serve the headline figures as JSON (what ``reach stats`` prints)."""
    return JSONResponse(default_metrics().tally.summary())


app = Starlette(
    routes=[
        # the LangGraph API server answers /metrics itself (its own metrics), so under
        # ``langgraph dev`` ours are at /reach/metrics
        Route("/reach/metrics", metrics),
        Route("/reach/stats", stats),
        Route("/metrics", metrics),
        Route("/stats", stats),
    ]
)
