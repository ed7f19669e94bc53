"""Metrics computed from records, masking of trace records, the Redis stream writer (fake)."""

from __future__ import annotations

import uuid
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from prometheus_client.parser import text_string_to_metric_families

import observability.trace_callbacks as trace_callbacks
from observability.audit import AuditLog, RedisStreamSink, read_stream
from observability.metrics import Metrics, Tally, percentile, render_latest
from observability.trace_callbacks import TraceRecorder, jsonable, rolled_back, shape_of
from tools.executor.guards import CircuitBreakers

VALID_ID = "110101199001011237"


def call(tool: str = "query_order_status", **fields: Any) -> dict[str, Any]:
    record = {
        "kind": "tool_call",
        "session_id": "s1",
        "task_id": "t1",
        "tool": tool,
        "status": "success",
        "error_type": None,
        "attempts": 1,
        "latency_ms": 10.0,
        "flags": [],
        "ts": 100.0,
    }
    record.update(fields)
    return record


# ---- metric computation ------------------------------------------------------------------


def test_tool_call_rates_follow_their_definitions():
    records = [
        call(),
        call(status="failed", error_type="system", attempts=3),  # retried, failed
        call(attempts=2, ts=200.0),  # retried, succeeded
        call(status="failed", error_type="validation", attempts=0),  # intercepted
        call(status="pending", attempts=0),  # awaiting confirmation: not a call outcome
        call(attempts=0, flags=["cached"], ts=300.0),  # answered from the cache
    ]
    rates = Tally.from_records(records).rates()
    assert rates["tool_call_success_rate"] == 3 / 5
    assert rates["validation_intercept_rate"] == 1 / 5
    assert rates["tool_call_retry_rate"] == 2 / 3  # of the three executed calls
    assert rates["tool_call_retry_success_rate"] == 1 / 2
    assert rates["cache_hit_rate"] == 1 / 4  # three executed + one cached were admitted


def test_only_calls_that_overlapped_in_the_same_task_count_as_parallel():
    records = [
        call("list_departments", ts=10.0, latency_ms=100.0),  # 9.9–10.0
        call("list_doctors", ts=10.05, latency_ms=100.0),  # 9.95–10.05: overlaps the first
        call("book_slot", ts=11.0, latency_ms=100.0),  # after both
        call("list_doctors", task_id="t2", ts=10.0, latency_ms=100.0),  # another task
    ]
    tally = Tally.from_records(records)
    assert tally.parallel_calls == 2
    assert tally.rates()["parallel_tool_call_ratio"] == 2 / 4


def test_slot_filling_completion_and_refill_turns_per_task():
    def args(task: str, turn: str, missing: list[str]) -> dict[str, Any]:
        return {"kind": "arguments", "session_id": "s", "task_id": task, "turn_id": turn,
                "missing": missing}  # fmt: skip

    records = [
        args("a", "1", ["order_id"]),
        args("a", "2", ["order_id"]),
        args("a", "3", []),  # complete after two turns of asking
        args("b", "4", []),  # complete at once
        args("c", "5", ["city"]),  # abandoned
    ]
    tally = Tally.from_records(records)
    assert tally.rates()["slot_filling_completion_rate"] == 2 / 3
    assert sorted(tally.refill_turns) == [0, 2]
    assert tally.summary()["slot_refill_turns_avg"] == 1.0


def test_handoff_rollback_breaker_and_eval_records():
    records = [
        {"kind": "turn", "event": "start"},
        {"kind": "turn", "event": "end", "nodes": ["intent", "tool", "handoff"]},
        {"kind": "turn", "event": "end", "nodes": ["intent", "clarify"]},
        call("execute_transfer", status="failed", error_type="system"),
        {"kind": "execution", "calls": [{"tool": "execute_transfer", "rolled_back": True}]},
        call("weather", status="rejected", error_type="circuit_open", attempts=0),
        {"kind": "eval", "intent_accuracy": 0.93},
    ]
    tally = Tally.from_records(records)
    rates = tally.rates()
    assert rates["human_handoff_rate"] == 1 / 2
    assert rates["rollback_rate"] == 1 / 1
    assert rates["intent_recognition_accuracy"] == 0.93
    assert tally.breaker == {"weather": "open"}
    tally.add(call("weather"))  # an executed success closes it
    assert tally.breaker == {"weather": "closed"}


def test_percentile_is_nearest_rank():
    assert percentile(range(1, 101), 99) == 99
    assert percentile([5.0], 99) == 5.0
    assert percentile([], 99) is None


def test_prometheus_exposition_has_the_design_names_and_registries_are_isolated():
    metrics = Metrics()
    for latency in (5.0, 20.0, 2500.0):
        metrics.observe(call(latency_ms=latency))
    metrics.observe({"kind": "node", "protocol_sizes": [300, 900]})
    metrics.set_intent_accuracy(0.9)
    families = {f.name: f for f in text_string_to_metric_families(render_latest(metrics).decode())}
    for name in (
        "tool_call_latency",
        "protocol_message_size",
        "tool_call_success_rate",
        "intent_recognition_accuracy",
        "tool_calls",
        "circuit_breaker_state",
        "slot_refill_turns",
    ):
        assert name in families, name
    buckets = {
        s.labels["le"]: s.value
        for s in families["tool_call_latency"].samples
        if s.name.endswith("_bucket")
    }
    assert buckets["0.005"] == 1 and buckets["0.025"] == 2 and buckets["+Inf"] == 3
    assert families["tool_call_success_rate"].samples[0].value == 1.0
    other = Metrics()
    assert "tool_call_success_rate" not in render_latest(other).decode()  # nothing shared


def test_live_breakers_override_what_records_imply():
    breakers = CircuitBreakers(fail_max=1)
    breakers.get("weather").record_failure()
    metrics = Metrics()
    metrics.watch_breakers(breakers)
    assert metrics.breaker_states() == {"weather": 1}


# ---- trace records -----------------------------------------------------------------------


def drive(recorder: TraceRecorder, text: str, update: dict[str, Any], node: str = "intent"):
    """Call the recorder as LangGraph would for one turn with one node."""
    turn, step = uuid.uuid4(), uuid.uuid4()
    meta = {"thread_id": "s1"}
    recorder.on_chain_start({}, {"messages": [("user", text)]}, run_id=turn, metadata=meta,
                            name="agent")  # fmt: skip
    recorder.on_chain_start(
        {},
        {"messages": [HumanMessage(text)], "task_id": "task_old"},
        run_id=step,
        parent_run_id=turn,
        tags=["graph:step:1"],
        metadata={**meta, "langgraph_node": node, "langgraph_checkpoint_ns": f"{node}:x"},
        name=node,
    )
    recorder.on_chain_end(update, run_id=step)
    recorder.on_chain_end({}, run_id=turn)


def test_trace_records_are_masked_and_linked():
    audit = AuditLog()
    recorder = TraceRecorder(audit, clock=iter(range(100, 200)).__next__)
    text = f"乘客张三，身份证{VALID_ID}，电话13812345678"
    drive(
        recorder,
        text,
        {
            "intent": "BOOK_FLIGHT",
            "confidence": 0.9,
            "task_id": "task_new",
            "protocol": [{"role": "user", "content": text, "task_id": "task_new"}],
            "messages": [AIMessage(f"已记录乘客 {VALID_ID}")],
        },
    )
    audit.flush()
    kinds = [r["kind"] for r in audit.records]
    assert kinds == ["turn", "intent", "answer", "node", "turn"]
    dumped = repr(audit.records)
    assert VALID_ID not in dumped and "13812345678" not in dumped
    assert "110101********1237" in dumped and "138****5678" in dumped
    intent = audit.records[1]
    assert (intent["intent"], intent["confidence"], intent["task_id"]) == ("BOOK_FLIGHT", 0.9,
                                                                           "task_new")  # fmt: skip
    assert {r["session_id"] for r in audit.records} == {"s1"}
    assert len({r["turn_id"] for r in audit.records}) == 1
    assert audit.records[3]["protocol_sizes"][0] > len(text)  # bytes of the JSON message


def test_execution_record_keeps_the_shape_not_the_values():
    audit = AuditLog()
    recorder = TraceRecorder(audit)
    envelope = {
        "tool": "request_refund",
        "status": "success",
        "request_id": "req_1",
        "attempts": 1,
        "latency_ms": 3.0,
        "data": {"refund_id": "RF-1", "amount": 36.0, "items": [{"name": "黄焖鸡"}]},
    }
    drive(recorder, "确认", {"tool_results": [envelope]}, node="tool")
    audit.flush()
    execution = next(r for r in audit.records if r["kind"] == "execution")
    assert execution["request_id"] == "req_1"
    assert execution["calls"][0]["shape"] == {
        "refund_id": "str",
        "amount": "float",
        "items": [{"name": "str"}, 1],
    }
    assert "RF-1" not in repr(execution) and "黄焖鸡" not in repr(execution)


def test_shape_and_rollback_helpers():
    assert shape_of(None) == "null" and shape_of([]) == []
    assert rolled_back({"data": {"reason": "compensated"}})
    assert rolled_back({"data": {"slot_id": 3, "released": True}})
    assert not rolled_back({"data": {"reason": "other"}})


# ---- the Redis stream writer -------------------------------------------------------------


class FakeStreams:
    """The two stream commands, in memory, with exact trimming."""

    def __init__(self) -> None:
        self.entries: dict[str, list[tuple[bytes, dict[bytes, bytes]]]] = {}
        self.seq = 0

    def xadd(self, name, fields, maxlen=None, approximate=True):
        self.seq += 1
        entry_id = f"{self.seq}-0".encode()
        stream = self.entries.setdefault(name, [])
        stream.append((entry_id, {k.encode(): str(v).encode() for k, v in fields.items()}))
        if maxlen is not None:
            del stream[:-maxlen]
        return entry_id

    def xrange(self, name, min="-", max="+", count=None):
        entries = self.entries.get(name, [])
        if min.startswith("("):
            after = int(min[1:].split("-")[0])
            entries = [e for e in entries if int(e[0].split(b"-")[0]) > after]
        return entries[:count] if count else entries


def test_stream_sink_writes_capped_entries_and_reads_one_session_back():
    client = FakeStreams()
    sink = RedisStreamSink(client, "reach:audit", maxlen=1500)
    audit = AuditLog(sinks=[sink])
    for index in range(1600):
        audit.write(call(session_id="s1" if index % 2 else "s2", ts=float(index),
                         arguments={"id": VALID_ID}))  # fmt: skip
    audit.flush()
    assert len(client.entries["reach:audit"]) == 1500
    records = read_stream(client, "reach:audit", session_id="s1")
    assert len(records) == 750  # paged through in batches of 1000
    assert all(r["session_id"] == "s1" for r in records)
    assert VALID_ID not in repr(client.entries)


def test_a_plain_record_is_passed_on_as_it_is_and_the_rest_made_plain():
    plain = {"kind": "node", "nodes": ["intent", "tool"], "slots": {"order_id": "OD-1"}, "n": 2}
    assert jsonable(plain) is plain
    odd = {"kind": "turn", 1: {"a"}, "m": [HumanMessage("你好")], "t": (1, 2), "ok": [1, "x"]}
    out = jsonable(odd)
    assert out == {
        "kind": "turn",
        "1": ["a"],
        "m": [{"type": "human", "content": "你好"}],
        "t": [1, 2],
        "ok": [1, "x"],
    }
    assert out["ok"] is odd["ok"] and odd[1] == {"a"}  # the input is left as it was


def test_the_recorder_remembers_a_bounded_number_of_sessions(monkeypatch):
    monkeypatch.setattr(trace_callbacks, "MAX_SESSIONS", 3)
    recorder = TraceRecorder(AuditLog())
    for i in range(6):
        run = trace_callbacks._Run("turn", "agent", f"s{i}", f"turn-{i}", 0.0)
        recorder._learn_task(run, {"task_id": f"t{i}"})
    assert list(recorder._tasks) == ["s3", "s4", "s5"]
