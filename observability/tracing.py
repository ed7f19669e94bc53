"""OpenTelemetry spans per turn, per node and per tool call, exported over OTLP/HTTP.

Nothing is exported unless ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set (read through
``config.settings``): then a tracer provider of this module's own (not the global one, so tests
and embedding applications are not disturbed) sends spans in batches to
``<endpoint>/v1/traces``. Without it every function here is a cheap no-op.

Span tree of one turn::

    turn                      (session.id, turn.status, nodes)
    └── node <name>           (intent, confidence, tool, status, request ids)
        └── tool <name>       (tool, status, error_type, attempts, request_id, duplicated)

Turn and node spans come from ``observability.trace_callbacks.TraceRecorder``; tool spans from the
executor's audit record (``AuditLog.write`` calls ``tool_span_from_record``), which carries
the call's end time and latency, so the executor needs no change. Arguments are never put
on a span: only names, statuses, counts and ids.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.trace import Span, Status, StatusCode

from config.settings import get_settings

_state_lock = threading.Lock()
_provider: TracerProvider | None = None
_configured = False
_open_nodes: dict[str, list[Span]] = {}
"""Per session, the node spans now running (innermost last): the parents of tool spans."""


def configure(
    endpoint: str | None = None,
    *,
    service_name: str | None = None,
    exporter: SpanExporter | None = None,
) -> bool:
    """Set up export; return whether spans are exported.

    Args:
        endpoint: OTLP/HTTP base URL; ``None`` reads ``OTEL_EXPORTER_OTLP_ENDPOINT`` from
            the settings. Neither set (and no ``exporter``): tracing stays off.
        service_name: ``service.name``; defaults to the settings' ``OTEL_SERVICE_NAME``.
        exporter: Use this exporter instead (tests, or another backend).
    """
    global _provider, _configured
    settings = get_settings()
    endpoint = endpoint if endpoint is not None else settings.otel_endpoint
    with _state_lock:
        if _provider is not None:
            _provider.shutdown()
            _provider = None
        _configured = True
        if exporter is None and not endpoint:
            return False
        if exporter is None:
            # protobuf and the HTTP exporter load only when spans are really exported
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # noqa: PLC0415
                OTLPSpanExporter,
            )

            exporter = OTLPSpanExporter(endpoint=f"{str(endpoint).rstrip('/')}/v1/traces")
        resource = Resource.create({"service.name": service_name or settings.otel_service_name})
        provider = TracerProvider(resource=resource)
        provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=500))
        _provider = provider
        return True


def enabled() -> bool:
    """Return whether spans are exported (configuring from the settings on first use)."""
    if not _configured:
        configure()
    return _provider is not None


def tracer() -> trace.Tracer:
    """Return this module's tracer; a no-op one when export is off."""
    if enabled() and _provider is not None:
        return _provider.get_tracer("agent-reach")
    return trace.NoOpTracer()


def flush(timeout_ms: int = 5_000) -> None:
    """Export every finished span now (end of a test, a command, a process)."""
    if _provider is not None:
        _provider.force_flush(timeout_ms)


def shutdown() -> None:
    """Flush and stop export; the next use configures again from the settings."""
    global _provider, _configured
    with _state_lock:
        if _provider is not None:
            _provider.shutdown()
        _provider, _configured = None, False
        _open_nodes.clear()


# ---- spans ---------------------------------------------------------------------------------


def start_span(
    name: str,
    *,
    parent: Span | None = None,
    attributes: Mapping[str, Any] | None = None,
    start_ns: int | None = None,
) -> Span | None:
    """Start a span under ``parent`` (a root span without); ``None`` when export is off."""
    if not enabled():
        return None
    context = trace.set_span_in_context(parent) if parent is not None else None
    span = tracer().start_span(name, context=context, start_time=start_ns)
    if attributes:
        set_attributes(span, attributes)
    return span


def set_attributes(span: Span | None, attributes: Mapping[str, Any]) -> None:
    """Set the attributes OpenTelemetry accepts; skip ``None`` and stringify the rest."""
    if span is None:
        return
    for key, value in attributes.items():
        if value is None:
            continue
        if isinstance(value, bool | int | float | str):
            span.set_attribute(key, value)
        elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            span.set_attribute(key, list(value))
        else:
            span.set_attribute(key, str(value))


def end_span(span: Span | None, *, error: str | None = None, end_ns: int | None = None) -> None:
    """End ``span``, marking it failed with ``error``."""
    if span is None:
        return
    if error is not None:
        span.set_status(Status(StatusCode.ERROR, error))
    span.end(end_time=end_ns)


def push_node(session_id: str, span: Span | None) -> None:
    """Note that ``span`` (a node) is running in ``session_id``: tool spans nest under it."""
    if span is not None:
        with _state_lock:
            _open_nodes.setdefault(session_id, []).append(span)


def pop_node(session_id: str, span: Span | None) -> None:
    """Note that the node ``span`` finished."""
    if span is None:
        return
    with _state_lock:
        stack = _open_nodes.get(session_id)
        if stack and span in stack:
            stack.remove(span)
        if not stack:
            _open_nodes.pop(session_id, None)


def current_node(session_id: str) -> Span | None:
    """Return the innermost node span running in ``session_id``."""
    with _state_lock:
        stack = _open_nodes.get(session_id)
        return stack[-1] if stack else None


def tool_span_from_record(record: Mapping[str, Any]) -> None:
    """Emit the span of one executed tool call from its (masked) audit record.

    The record's ``ts`` is the end of the call and ``latency_ms`` its duration, so the span
    has the call's real times; its parent is the node that is running the call.
    """
    if not enabled():
        return
    end_s = float(record.get("ts") or time.time())
    latency_s = float(record.get("latency_ms") or 0.0) / 1000
    session = str(record.get("session_id") or "")
    span = start_span(
        f"tool {record.get('tool', '?')}",
        parent=current_node(session),
        start_ns=int((end_s - latency_s) * 1e9),
        attributes={
            "session.id": session,
            "task.id": record.get("task_id"),
            "tool": record.get("tool"),
            "status": record.get("status"),
            "error_type": record.get("error_type"),
            "attempts": record.get("attempts"),
            "request_id": record.get("request_id"),
            "duplicated": record.get("duplicated"),
            "latency_ms": record.get("latency_ms"),
        },
    )
    failed = record.get("status") not in ("success", "pending")
    end_span(span, error=str(record.get("error_type")) if failed else None, end_ns=int(end_s * 1e9))


__all__ = [
    "configure",
    "current_node",
    "enabled",
    "end_span",
    "flush",
    "pop_node",
    "push_node",
    "set_attributes",
    "shutdown",
    "start_span",
    "tool_span_from_record",
    "tracer",
]
