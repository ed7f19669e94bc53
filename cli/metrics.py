"""``reach serve-metrics`` and ``reach stats``: the design's metrics, live or as a table.

Both read the audit log, so they see every process that writes to it: the ``reach chat``
sessions, ``langgraph dev``, the evaluation.
"""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Annotated, Any

import typer
from prometheus_client import CONTENT_TYPE_LATEST
from rich.console import Console
from rich.table import Table

from config.settings import get_settings
from nodes.services import Services
from observability.audit import default_audit_path, iter_jsonl
from observability.metrics import BREAKER_STATES, LogTail, Tally, percentile, render_latest
from scenarios import SCENARIOS
from tools.registry.lifecycle import coverage_lines, tool_coverage

TARGETS: dict[str, tuple[str, str]] = {
    # metric: (target as the design states it, how to format)
    "intent_recognition_accuracy": ("> 90%", "pct"),
    "slot_filling_completion_rate": ("> 85%", "pct"),
    "tool_call_success_rate": ("> 95%", "pct"),
    "tool_call_latency_p50_ms": ("", "ms"),
    "tool_call_latency_p99_ms": ("< 3 s", "ms"),
    "protocol_message_size_avg_bytes": ("< 5 KB", "bytes"),
    "protocol_message_size_max_bytes": ("≤ 5 KB", "bytes"),
    "cache_hit_rate": ("> 70%", "pct"),
    "parallel_tool_call_ratio": ("> 30%", "pct"),
    "rollback_rate": ("< 1%", "pct"),
    "slot_refill_turns_avg": ("< 2", "num"),
    "tool_call_retry_rate": ("", "pct"),
    "tool_call_retry_success_rate": ("", "pct"),
    "validation_intercept_rate": ("", "pct"),
    "human_handoff_rate": ("", "pct"),
    "tool_calls": ("", "int"),
    "turns": ("", "int"),
}


def make_server(host: str, port: int, tail: LogTail) -> ThreadingHTTPServer:
    """Return an HTTP server answering ``/metrics`` from ``tail`` (polled per scrape)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the http.server name)
            if self.path.split("?")[0] != "/metrics":
                self.send_error(404, "only /metrics is served here")
                return
            tail.poll()
            body = render_latest(tail.metrics)
            self.send_response(200)
            self.send_header("Content-Type", CONTENT_TYPE_LATEST)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return  # scrapes every few seconds would flood the terminal

    return ThreadingHTTPServer((host, port), Handler)


def serve_metrics(
    port: Annotated[int | None, typer.Option("--port", help="Default REACH_METRICS_PORT.")] = None,
    host: Annotated[str | None, typer.Option("--host", help="Default REACH_METRICS_HOST.")] = None,
    audit: Annotated[Path | None, typer.Option("--audit", help="The audit log to read.")] = None,
) -> None:
    """Serve the metrics over HTTP (``/metrics``, Prometheus text format) from the audit log."""
    settings = get_settings()
    path = audit or default_audit_path()
    server = make_server(
        host or settings.metrics_host, port or settings.metrics_port, LogTail(path)
    )
    address, bound = server.server_address[:2]
    Console().print(f"serving metrics of {path} on http://{address!s}:{bound}/metrics")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def _format(value: float | None, how: str) -> str:
    if value is None:
        return "–"
    if how == "pct":
        return f"{value * 100:.1f}%"
    if how == "ms":
        return f"{value:.1f} ms"
    if how == "bytes":
        return f"{value:,.0f} B"
    if how == "int":
        return f"{value:,.0f}"
    return f"{value:.2f}"


def stats_tables(tally: Tally) -> list[Table]:
    """Build the headline table and the per-tool table of ``reach stats``."""
    headline = Table(title="Agent-Reach metrics (from the audit log)")
    headline.add_column("metric")
    headline.add_column("value", justify="right")
    headline.add_column("design target", style="dim")
    for name, value in tally.summary().items():
        target, how = TARGETS.get(name, ("", "num"))
        headline.add_row(name, _format(value, how), target)

    tools = Table(title="Per tool")
    for column in ("tool", "calls", "success", "p99 latency", "breaker"):
        tools.add_column(column, justify="left" if column == "tool" else "right")
    per_tool: dict[str, list[int]] = {}
    for (tool, status), count in tally.calls_by_tool.items():
        counts = per_tool.setdefault(tool, [0, 0])
        counts[0] += count
        if status == "success":
            counts[1] += count
    latencies = tally.tool_latencies
    for tool, (calls, ok) in sorted(per_tool.items()):
        p99 = percentile(latencies.get(tool, []), 99)
        state = tally.breaker.get(tool, "closed")
        tools.add_row(
            tool,
            str(calls),
            _format(ok / calls if calls else None, "pct"),
            _format(p99, "ms"),
            f"{state} ({BREAKER_STATES[state]})",
        )
    return [headline, tools]


def stats(
    audit: Annotated[Path | None, typer.Option("--audit", help="The audit log to read.")] = None,
) -> None:
    """Print the design's metrics computed from the audit log."""
    path = audit or default_audit_path()
    tally = Tally.from_records(iter_jsonl(path))
    console = Console()
    if tally.calls == 0 and tally.turns == 0:
        console.print(f"no records in {path}")
    for table in stats_tables(tally):
        console.print(table)
    for line in coverage_lines(tool_coverage(_offered_tools(), iter_jsonl(path))):
        console.print(line)


def _offered_tools() -> list[str]:
    """Return the serving tools of the shipped scenarios, under the shared lifecycle state."""
    settings = get_settings()
    return Services(scenarios=SCENARIOS, settings=settings).tools.names()
