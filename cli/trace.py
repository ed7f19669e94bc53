"""``reach trace THREAD``: one conversation's decision points as a readable timeline.

Reads the audit log (``REACH_AUDIT_PATH``, or ``audit.jsonl`` in the data directory), or
the Redis stream when Redis is configured, and prints per turn what was understood
(intent), what was proposed and validated (arguments, the executor's tool calls), what ran
(execution: status, attempts, latency, result shape) and what was answered.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from config.limits import JsonObject
from config.settings import get_settings
from observability.audit import default_audit_path, read_jsonl, read_stream

Source = Literal["auto", "file", "redis"]

_STYLE = {
    "intent": "cyan",
    "arguments": "yellow",
    "tool_call": "magenta",
    "execution": "green",
    "interrupt": "bold yellow",
    "answer": "bold",
    "node": "dim",
}


def load_records(
    thread: str, *, source: Source = "auto", audit: Path | None = None
) -> list[JsonObject]:  # records read back: whatever a writer of any version put there
    """Return the thread's records in time order, from the stream or the file."""
    settings = get_settings()
    use_redis = source == "redis" or (
        source == "auto" and audit is None and bool(settings.redis_url and settings.trace_stream)
    )
    if use_redis:
        from redis import Redis  # noqa: PLC0415 - optional and heavy: only for --source redis

        if not settings.redis_url:
            msg = "REDIS_URL is not set"
            raise typer.BadParameter(msg)
        client = Redis.from_url(settings.redis_url)
        try:
            records = read_stream(client, settings.trace_stream, session_id=thread)
        finally:
            client.close()
    else:
        records = read_jsonl(audit or default_audit_path(), session_id=thread)
    return sorted(records, key=lambda record: float(record.get("ts") or 0.0))


def render_timeline(
    records: Iterable[Mapping[str, Any]], console: Console, *, show_nodes: bool = False
) -> int:
    """Print one table per turn; return the number of turns shown."""
    turns: list[tuple[Mapping[str, Any] | None, list[Mapping[str, Any]]]] = []
    for record in records:
        kind = record.get("kind", "tool_call")
        if kind == "turn" and record.get("event") == "start":
            turns.append((record, []))
            continue
        if not turns:
            turns.append((None, []))
        turns[-1][1].append(record)
    for number, (start, items) in enumerate(turns, 1):
        end = next((r for r in items if r.get("kind") == "turn" and r.get("event") == "end"), None)
        console.print(_turn_title(number, start, end))
        table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
        table.add_column("+ms", justify="right", style="dim", no_wrap=True)
        table.add_column("point", no_wrap=True)
        table.add_column("detail", overflow="fold")
        origin = float((start or (items[0] if items else {})).get("ts") or 0.0)
        for record in items:
            kind = str(record.get("kind", "tool_call"))
            if kind == "turn" or (kind == "node" and not show_nodes):
                continue
            offset = (float(record.get("ts") or origin) - origin) * 1000
            label = kind if kind != "tool_call" else "tool call"
            table.add_row(
                f"{offset:.0f}",
                Text(label, style=_STYLE.get(kind, "")),
                Text(_detail(kind, record)),  # plain text: "[tool]" is not rich markup
            )
        console.print(table)
        console.print()
    return len(turns)


def _turn_title(
    number: int, start: Mapping[str, Any] | None, end: Mapping[str, Any] | None
) -> Text:
    title = Text(f"turn {number}", style="bold underline")
    if start is not None:
        moment = datetime.fromtimestamp(float(start.get("ts") or 0.0)).strftime("%H:%M:%S")
        title.append(f"  {moment}", style="dim")
        if "text" in start:
            title.append(f"  user: {start['text']}")
        elif "resume" in start:
            title.append(f"  resume: {_short(start['resume'])}")
    if end is not None:
        status = str(end.get("status"))
        title.append(f"  [{status}]", style="green" if status == "ok" else "yellow")
        title.append(f"  {end.get('latency_ms')} ms", style="dim")
        title.append(f"  {' → '.join(end.get('nodes') or [])}", style="dim")
    return title


def _detail(kind: str, record: Mapping[str, Any]) -> str:
    task = f"  task={record.get('task_id')}" if record.get("task_id") else ""
    parent = f" parent={record['parent_task_id']}" if record.get("parent_task_id") else ""
    if kind == "intent":
        evidence = record.get("evidence") or []
        return (
            f"{_short(record.get('text'))!s} → {record.get('intent')} "
            f"(confidence {record.get('confidence')}) evidence={evidence} "
            f"[{record.get('node')}]{task}{parent}"
        )
    if kind == "arguments":
        proposed = "; ".join(
            f"{call.get('tool')}({_short(call.get('parameters'))})"
            for call in record.get("proposed") or []
        )
        parts = [f"slots={_short(record.get('slots'))}"]
        if record.get("missing"):
            parts.append(f"missing={record['missing']}")
        if record.get("invalid"):
            parts.append(f"invalid={_short(record['invalid'])}")
        if proposed:
            parts.append(f"proposed: {proposed}")
        if isinstance(record.get("planner"), Mapping):  # where the calls came from
            planner = record["planner"]
            parts.append(f"planner={planner.get('source')} {planner.get('plan') or ''}".rstrip())
        return " ".join(parts) + task
    if kind == "tool_call":
        error = (
            f" {record.get('error_type')}: {record.get('message')}"
            if record.get("error_type")
            else ""
        )
        flags = f" flags={record['flags']}" if record.get("flags") else ""
        dup = " duplicated" if record.get("duplicated") else ""
        return (
            f"{record.get('tool')}({_short(record.get('arguments'))}) → {record.get('status')}"
            f"{error} attempts={record.get('attempts')} {record.get('latency_ms')} ms{dup}{flags}"
            f"  {record.get('request_id')}"
        )
    if kind == "execution":
        lines = []
        for call in record.get("calls") or []:
            extra = " rolled back" if call.get("rolled_back") else ""
            lines.append(
                f"{call.get('tool')} → {call.get('status')}"
                f"{' ' + str(call.get('error_type')) if call.get('error_type') else ''} "
                f"attempts={call.get('attempts')} {call.get('latency_ms')} ms "
                f"shape={_short(call.get('shape'), 120)}{extra}"
            )
        prefix = "parallel: " if record.get("parallel") else ""
        return prefix + "\n".join(lines)
    if kind == "interrupt":
        values = record.get("values") or []
        question = next(
            (v.get("question") for v in values if isinstance(v, Mapping) and v.get("question")),
            None,
        )
        return f"asks [{record.get('node')}]: {_short(question or values, 200)}"
    if kind == "answer":
        return f"[{record.get('node')}] {record.get('text')}"
    if kind == "node":
        return (
            f"{record.get('node')} {record.get('status')} {record.get('latency_ms')} ms "
            f"protocol bytes={record.get('protocol_sizes')}"
        )
    return _short(dict(record), 200)


def _short(value: Any, limit: int = 160) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = text.replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def trace(
    thread: Annotated[str, typer.Argument(help="The thread (session) id.")],
    source: Annotated[
        str, typer.Option("--source", help="auto (Redis stream if configured), file or redis.")
    ] = "auto",
    audit: Annotated[
        Path | None, typer.Option("--audit", help="Read this JSON-lines audit log.")
    ] = None,
    nodes: Annotated[bool, typer.Option("--nodes", help="Also show every node's timing.")] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the records as JSON lines.")
    ] = False,
) -> None:
    """Show a thread's decision points (intent, arguments, execution, answer) as a timeline."""
    if source not in ("auto", "file", "redis"):
        msg = "--source must be auto, file or redis"
        raise typer.BadParameter(msg)
    records = load_records(thread, source=source, audit=audit)  # type: ignore[arg-type]
    console = Console()
    if not records:
        console.print(f"no trace records for thread {thread!r}")
        raise typer.Exit(1)
    if as_json:
        for record in records:
            typer.echo(json.dumps(record, ensure_ascii=False))
        return
    render_timeline(records, console, show_nodes=nodes)
