"""The trace handler, metrics, `reach trace`/`stats` and OTLP spans on the real graph."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
import typer
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from starlette.testclient import TestClient
from typer.testing import CliRunner

from cli.metrics import make_server, stats
from cli.trace import trace
from graph.builder import build_graph
from graph.http_app import app as http_app
from nodes.services import Services
from observability import tracing
from observability.audit import AuditLog, read_jsonl
from observability.metrics import LogTail, Metrics, Tally, default_metrics
from scenarios import SCENARIOS
from tests.conftest import ALICE, fast_executor

VALID_ID = "110101199001011237"


@pytest.fixture
def traced(db, tmp_path: Path):
    """A graph whose executor and trace recorder write one audit file, feeding metrics.

    ``build_graph`` attaches the recorder itself, writing into the executor's log; adding a
    second one here would record every decision point twice.
    """
    metrics = Metrics()
    audit = AuditLog(tmp_path / "audit.jsonl", sinks=[metrics.observe])
    app = build_graph(
        checkpointer=InMemorySaver(),
        database_factory=lambda: db,
        executor_factory=lambda registry: fast_executor(registry, audit=audit),
    )
    yield app, audit, metrics
    audit.close()


def turn(app: Any, message: Any, thread: str = "t1") -> dict[str, Any]:
    payload = message if isinstance(message, Command) else {"messages": [("user", message)]}
    return app.invoke(payload, {"configurable": {"thread_id": thread}}, context=ALICE)


def refund(app: Any) -> None:
    turn(app, "订单 OD-20240618-002 送到了但是洒了，我要退款")
    turn(app, Command(resume="确认退款"))


def test_refund_with_confirmation_records_the_four_decision_points(traced):
    app, audit, metrics = traced
    refund(app)
    audit.flush()
    records = audit.records
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        by_kind.setdefault(record["kind"], []).append(record)

    (intent,) = by_kind["intent"]
    assert intent["text"].endswith("我要退款")
    assert intent["intent"] == "REQUEST_REFUND" and intent["confidence"] >= 0.6
    (arguments,) = by_kind["arguments"]
    assert arguments["missing"] == []
    assert arguments["proposed"][0]["tool"] == "request_refund"
    assert arguments["proposed"][0]["parameters"]["order_id"] == "OD-20240618-002"
    (interrupt,) = by_kind["interrupt"]
    assert interrupt["values"][0]["type"] == "confirm_action"
    executed = [r for r in by_kind["tool_call"] if r["status"] == "success"]
    (call,) = executed  # what validation made of the proposal: the executor's own record
    assert call["arguments"]["order_id"] == "OD-20240618-002"
    (execution,) = by_kind["execution"]
    assert execution["request_id"] == call["request_id"]
    assert execution["calls"][0]["attempts"] == 1
    assert "refund_id" in execution["calls"][0]["shape"]
    # the confirmation question is what the first turn said (it announces no tool call)
    question, answer = by_kind["answer"]
    assert question["node"] == "propose" and "退款" in question["text"]
    assert "退款" in answer["text"] and answer["node"] == "reply"

    # one session, one task, two turns (the question and the confirmation)
    task_ids = {r["task_id"] for r in records if r["kind"] != "turn" or r["event"] == "end"}
    assert task_ids == {intent["task_id"]}
    assert {r["session_id"] for r in records} == {"t1"}
    assert len({r["turn_id"] for r in records if "turn_id" in r}) == 2
    ends = [r for r in by_kind["turn"] if r["event"] == "end"]
    assert [e["status"] for e in ends] == ["interrupted", "ok"]
    assert ends[1]["nodes"] == ["tool", "reply"]

    # the same records fed the metrics
    rates = metrics.tally.rates()
    assert rates["tool_call_success_rate"] == 1.0
    assert rates["slot_filling_completion_rate"] == 1.0
    assert rates["human_handoff_rate"] == 0.0
    assert metrics.tally.refill_turns == [0]


def test_nested_finance_agent_links_its_task_to_the_parent(traced):
    app, audit, _ = traced
    turn(app, "帮我转500元给ACC-2001，密码123456")
    audit.flush()
    nested = [r for r in audit.records if r["kind"] == "node" and r["nested"]]
    assert {r["node"] for r in nested} >= {"verify_identity", "check_balance"}
    main_task = next(r["task_id"] for r in audit.records if r["kind"] == "intent")
    linked = [r for r in nested if r["parent_task_id"] == main_task]
    assert linked and all(r["task_id"] != main_task for r in linked)
    assert "123456" not in (Path(audit.path).read_text() if audit.path else "")


def test_identifiers_never_reach_the_trace(traced):
    app, audit, _ = traced
    turn(app, "帮我订一张6月20号从上海去北京的机票")
    turn(app, f"乘客张三，身份证{VALID_ID}")
    audit.flush()
    assert audit.path is not None
    text = audit.path.read_text(encoding="utf-8")
    kinds = {json.loads(line)["kind"] for line in text.splitlines()}
    assert {"intent", "arguments"} <= kinds
    assert VALID_ID not in text
    assert "110101********1237" in text


def trace_cli() -> typer.Typer:
    cli = typer.Typer()
    cli.command()(trace)
    cli.command()(stats)
    return cli


def test_reach_trace_prints_the_thread_as_a_timeline(traced):
    app, audit, _ = traced
    refund(app)
    turn(app, "嗯……那个……", thread="other")
    audit.flush()
    runner = CliRunner()
    result = runner.invoke(
        trace_cli(), ["trace", "t1", "--audit", str(audit.path)], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    out = result.output
    assert "turn 1" in out and "turn 2" in out and "turn 3" not in out  # only this thread
    assert "REQUEST_REFUND" in out
    assert "proposed: request_refund" in out
    assert "asks [tool]" in out
    assert "request_refund(" in out and "→ success" in out
    assert "提交退款申请" in out
    assert out.index("REQUEST_REFUND") < out.index("→ success") < out.index("提交退款申请")
    missing = runner.invoke(trace_cli(), ["trace", "nope", "--audit", str(audit.path)])
    assert missing.exit_code == 1


def test_reach_stats_and_serve_metrics_read_the_log_across_processes(traced):
    app, audit, _ = traced
    refund(app)
    turn(app, "OD-20240618-001 到哪了")
    audit.flush()
    assert audit.path is not None
    result = CliRunner().invoke(
        trace_cli(), ["stats", "--audit", str(audit.path)], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    assert "tool_call_success_rate" in result.output and "100.0%" in result.output
    assert "request_refund" in result.output and "query_order_status" in result.output

    tail = LogTail(audit.path)
    server = make_server("127.0.0.1", 0, tail)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
    )
    thread.start()
    try:
        port = server.server_address[1]
        body = httpx.get(f"http://127.0.0.1:{port}/metrics").text
        assert 'tool_calls_total{status="success",tool="request_refund"} 1.0' in body
        assert "tool_call_latency_bucket" in body
        turn(app, "OD-20240618-001 到哪了", thread="t2")
        audit.flush()
        body = httpx.get(f"http://127.0.0.1:{port}/metrics").text  # picks up the new lines
        assert 'tool_calls_total{status="success",tool="query_order_status"} 2.0' in body
        assert httpx.get(f"http://127.0.0.1:{port}/other").status_code == 404
    finally:
        server.shutdown()
        server.server_close()
    assert Tally.from_records(read_jsonl(audit.path)).calls == tail.metrics.tally.calls


def test_http_app_serves_the_process_metrics():
    default_metrics().observe({"kind": "tool_call", "tool": "probe_tool", "status": "success",
                               "attempts": 1, "latency_ms": 1.0, "ts": 1.0})  # fmt: skip
    with TestClient(http_app) as client:
        response = client.get("/metrics")
        assert response.status_code == 200
        assert 'tool_calls_total{status="success",tool="probe_tool"}' in response.text
        assert client.get("/stats").json()["tool_calls"] >= 1
        under_langgraph = client.get("/reach/metrics")  # the API server keeps /metrics
        assert 'tool_calls_total{status="success",tool="probe_tool"}' in under_langgraph.text


# ---- OpenTelemetry -------------------------------------------------------------------------


class _Receiver(BaseHTTPRequestHandler):
    """A minimal OTLP/HTTP collector: decodes ExportTraceServiceRequest protobufs."""

    spans: list[Any] = []

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        for resource in request.resource_spans:
            for scope in resource.scope_spans:
                type(self).spans.extend(scope.spans)
        reply = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200 if self.path == "/v1/traces" else 404)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        return


@pytest.fixture
def otlp_receiver() -> Iterator[tuple[str, list[Any]]]:
    _Receiver.spans = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
    )
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", _Receiver.spans
    tracing.shutdown()
    server.shutdown()
    server.server_close()


def _attrs(span: Any) -> dict[str, Any]:
    values = {}
    for kv in span.attributes:
        value = kv.value
        kind = value.WhichOneof("value")
        values[kv.key] = (
            [v.string_value for v in value.array_value.values]
            if kind == "array_value"
            else getattr(value, kind)
        )
    return values


def test_one_turn_exports_turn_node_and_tool_spans_with_parent_links(traced, otlp_receiver):
    endpoint, spans = otlp_receiver
    assert tracing.configure(endpoint)
    app, audit, _ = traced
    refund(app)
    audit.flush()
    tracing.flush()
    names = [s.name for s in spans]
    assert names.count("turn") == 2
    tool_span = next(s for s in spans if s.name == "tool request_refund")
    node = next(s for s in spans if s.span_id == tool_span.parent_span_id)
    root = next(s for s in spans if s.span_id == node.parent_span_id)
    assert node.name == "node tool" and root.name == "turn"
    assert root.parent_span_id == b""
    assert {tool_span.trace_id, node.trace_id} == {root.trace_id}
    assert root.start_time_unix_nano <= node.start_time_unix_nano
    assert node.start_time_unix_nano <= tool_span.start_time_unix_nano
    assert tool_span.end_time_unix_nano <= node.end_time_unix_nano

    tool = _attrs(tool_span)
    assert tool["tool"] == "request_refund" and tool["status"] == "success"
    assert tool["attempts"] == 1 and tool["request_id"].startswith("req_")
    intent_span = next(s for s in spans if s.name == "node intent")
    intent = _attrs(intent_span)
    assert intent["intent"] == "REQUEST_REFUND" and 0.6 <= intent["confidence"] <= 1
    siblings = {s.name for s in spans if s.parent_span_id == intent_span.parent_span_id}
    assert {"node intent", "node slot_filling", "node tool"} <= siblings
    # arguments never go on a span
    everything = repr([_attrs(s) for s in spans])
    assert "OD-20240618-002" not in everything and "用户申请退款" not in everything


def test_the_default_wiring_shares_the_executors_log(db):
    """``build_graph`` attaches the recorder, and it writes into the executor's log."""
    audit = AuditLog()
    services = Services(
        scenarios=SCENARIOS,
        database_factory=lambda: db,
        executor_factory=lambda registry: fast_executor(registry, audit=audit),
    )
    app = build_graph(checkpointer=InMemorySaver(), services=services)
    turn(app, "OD-20240618-001 到哪了")
    audit.flush()
    kinds = [r["kind"] for r in audit.records]
    assert {"turn", "intent", "arguments", "tool_call", "execution", "answer"} <= set(kinds)
    assert kinds.count("intent") == 1  # one recorder, not one per wiring


def test_every_intent_update_carries_the_decision_record(app):
    """The trace's intent record and ``reach demo`` read these keys from each intent update,
    also when a second, identical request leaves them unchanged in state."""
    seen = []
    for _ in range(2):
        for chunk in app.stream(
            {"messages": [("user", "OD-20240618-001 到哪了")]},
            {"configurable": {"thread_id": "same-twice"}},
            context=ALICE,
            stream_mode="updates",
        ):
            if "intent" in chunk:
                seen.append(chunk["intent"])
    assert len(seen) == 2
    for update in seen:
        assert {"intent", "confidence", "intent_evidence", "decision"} <= set(update)


def test_a_pin_typed_alone_is_starred_in_the_trace(traced, tmp_path):
    app, audit, _ = traced
    turn(app, "我要转账给ACC-2001")
    turn(app, "200")
    turn(app, "123456")
    audit.close()
    text = (tmp_path / "audit.jsonl").read_text(encoding="utf-8")
    assert '"text":"******"' in text and "123456" not in text
