"""The served app (``langgraph.json``'s ``http.app``): metrics routes and intake masking.

Under the LangGraph API server the metrics are at ``/reach/metrics`` (the server keeps
``/metrics`` for its own); mounted elsewhere, ``/metrics`` works too.

It runs in the server's own process, so it exposes the live ``default_metrics()`` that
every file-backed ``AuditLog`` (and so the executor and ``TraceRecorder``) feeds.

Its middleware, ``graph.intake.IntakeMiddleware``, is what masks ID numbers and PINs in run
requests before the server stores them: both the LangGraph API server and Aegra apply an
``http.app``'s middleware to their own routes. The app is a FastAPI app when FastAPI is
installed (Aegra requires one, and installs FastAPI; the ``aegra`` dependency group), else a
plain Starlette app (all ``langgraph dev`` needs), so one ``langgraph.json`` serves both.
"""

from __future__ import annotations

import importlib
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from graph.intake import IntakeMiddleware
from graph.resume import ResumeCheckMiddleware
from observability.metrics import default_metrics, render_latest


async def metrics(request: Request) -> Response:
    """Serve the Prometheus text exposition."""
    return Response(render_latest(), media_type=CONTENT_TYPE_LATEST)


async def stats(request: Request) -> Response:
    """Serve the headline figures as JSON (what ``reach stats`` prints)."""
    return JSONResponse(default_metrics().tally.summary())


def app_class() -> Any:
    """Return FastAPI when it is installed (Aegra mounts only FastAPI apps), else Starlette."""
    try:
        return importlib.import_module("fastapi").FastAPI
    except ImportError:
        return Starlette


app = app_class()(
    # an unreadable resume is refused (422) before a run exists; then intake masking
    middleware=[Middleware(ResumeCheckMiddleware), Middleware(IntakeMiddleware)],
    routes=[
        # the LangGraph API server answers /metrics itself (its own metrics), so under
        # ``langgraph dev`` ours are at /reach/metrics
        Route("/reach/metrics", metrics),
        Route("/reach/stats", stats),
        Route("/metrics", metrics),
        Route("/stats", stats),
    ],
)
