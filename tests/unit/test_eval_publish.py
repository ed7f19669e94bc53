"""``reach eval`` hands its intent accuracy to the metrics: an audit record and the gauge."""

from __future__ import annotations

from pathlib import Path

from cli.eval import publish_intent_accuracy
from eval.harness import Evaluation, RunResult
from observability.audit import AuditLog, read_jsonl
from observability.metrics import Metrics, default_metrics


def run(case: str, intent: str | None, expected: str | None) -> RunResult:
    return RunResult(
        case=case, scenario="delivery", agent="agent", trial=0, passed=intent == expected,
        cause=None, intent=intent, reached=[], db_diff={}, duplicates=0, invalid_calls=0,
        permission_violations=0, handoff=False, proposed_calls=0, intercepted_calls=0,
        latencies_ms=[1.0], faults=[], expected_intent=expected,
    )  # fmt: skip


def test_intent_accuracy_goes_to_the_log_and_the_gauge(tmp_path: Path):
    evaluation = Evaluation(
        mode="rules",
        fault_rate=0.0,
        trials=1,
        seed=0,
        runs=[
            run("a", "CHECK_ORDER_STATUS", "CHECK_ORDER_STATUS"),
            run("b", "UNKNOWN", "REQUEST_REFUND"),
            run("c", "QUERY_WEATHER", None),  # states no intent: not judged
        ],
    )
    audit = AuditLog(tmp_path / "audit.jsonl", sinks=[])
    assert publish_intent_accuracy(evaluation, audit) == 0.5
    audit.close()
    (record,) = [r for r in read_jsonl(tmp_path / "audit.jsonl") if r["kind"] == "eval"]
    assert record["intent_accuracy"] == 0.5 and record["mode"] == "rules"
    assert default_metrics().tally.intent_accuracy == 0.5
    tailed = Metrics()
    tailed.observe(record)  # what ``reach serve-metrics`` does with the line
    assert tailed.tally.intent_accuracy == 0.5
