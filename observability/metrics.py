"""The design's metrics, computed from the audit and trace records.

Every number here is derived from the records ``AuditLog`` writes (the executor's
``tool_call`` records and ``TraceRecorder``'s ``turn``/``intent``/``arguments``/
``execution``/``answer``/``node`` records). So the same code serves two readers:

* a live process: ``default_metrics()`` is a sink on every file-backed ``AuditLog`` and
  exposes Prometheus metrics from its own ``CollectorRegistry`` (never the global default,
  so tests and embedding applications stay isolated);
* ``reach stats``: ``Tally.from_records`` over the log file, which works across processes.

Rates are exposed as gauges computed at scrape time from the counts below; the counts are
exposed as counters too, so PromQL can compute windowed or per-tool rates. How each is
computed (the denominator is 0 → the rate is absent):

==============================  ===========================================================
intent_recognition_accuracy     set by the evaluation (``set_intent_accuracy`` or an
                                ``{"kind": "eval", "intent_accuracy": x}`` record)
slot_filling_completion_rate    tasks whose slots became complete / tasks that entered
                                slot filling
tool_call_success_rate          tool calls with status ``success`` / tool calls (a call
                                awaiting confirmation, ``pending``, is not counted)
tool_call_latency               histogram (seconds) of each call's latency, per tool
protocol_message_size           histogram (bytes) of each protocol message a node emitted
cache_hit_rate                  calls answered from the result cache / calls that were
                                admitted (cache hit, or at least one attempt)
parallel_tool_call_ratio        executed calls whose run overlapped another call of the
                                same task / executed calls
rollback_rate                   executed calls whose result says they were compensated
                                or released / executed calls
slot_refill_turns               histogram of turns spent asking for missing slots before
                                a task's slots were complete
tool_call_retry_rate            executed calls that needed more than one attempt /
                                executed calls
tool_call_retry_success_rate    of those, the share that succeeded
validation_intercept_rate       calls stopped by validation (``error_type: validation``)
                                / tool calls
human_handoff_rate              turns that ended in the ``handoff`` node / turns (a
                                user asking for a person, or complaining, counts too)
model_errors                    (a counter) turns whose understanding model call gave
                                nothing usable: a timeout, a server error, bad output
circuit_breaker_state           per tool, 0 closed, 1 open, 2 half-open: the last record
                                seen (``circuit_open`` → 1, an executed success → 0), or
                                the live breakers given to ``watch_breakers``
==============================  ===========================================================
"""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict, defaultdict, deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector


class BreakerStates(Protocol):
    """Live circuit breakers (``tools.executor.guards.CircuitBreakers``), as metrics read them."""

    def states(self) -> dict[str, str]:
        """Return each tool's breaker state: ``closed``, ``open`` or ``half-open``."""
        ...


BREAKER_STATES = {"closed": 0, "open": 1, "half-open": 2}
LATENCY_BUCKETS_S = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
SIZE_BUCKETS_B = (128, 256, 512, 1024, 2048, 3072, 4096, 5120, 8192)
REFILL_BUCKETS = (0, 1, 2, 3, 4, 5, 8)
ROLLBACK_MARKERS = ("compensated", "released", "rolled_back")
"""Keys or ``reason`` values of a result that say an earlier effect was undone."""


def percentile(values: Iterable[float], q: float) -> float | None:
    """Return the ``q``-th percentile (0–100) by nearest rank; ``None`` for no values."""
    ordered = sorted(values)
    if not ordered:
        return None
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


@dataclass
class Tally:
    """Counts behind every metric, fed one record at a time. Pure: no I/O, no clock."""

    calls: int = 0
    successes: int = 0
    calls_by_tool: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))
    errors_by_type: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))
    admitted: int = 0
    cache_hits: int = 0
    executed: int = 0
    retried: int = 0
    retried_ok: int = 0
    validation_intercepts: int = 0
    parallel_calls: int = 0
    rollbacks: int = 0
    latencies_ms: deque[float] = field(default_factory=lambda: deque(maxlen=100_000))
    tool_latencies: dict[str, deque[float]] = field(default_factory=dict)
    protocol_sizes: deque[int] = field(default_factory=lambda: deque(maxlen=100_000))
    breaker: dict[str, str] = field(default_factory=dict)
    turns: int = 0
    handoff_turns: int = 0
    slot_tasks: set[str] = field(default_factory=set)
    slot_completed: set[str] = field(default_factory=set)
    refill_turns: list[int] = field(default_factory=list)
    intent_accuracy: float | None = None
    model_errors: int = 0
    _asked: dict[str, set[str]] = field(default_factory=dict, repr=False)
    _intervals: OrderedDict[str, list[list[Any]]] = field(default_factory=OrderedDict, repr=False)

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]]) -> Tally:
        """Tally a whole log."""
        tally = cls()
        for record in records:
            tally.add(record)
        return tally

    def add(self, record: Mapping[str, Any]) -> None:
        """Count one record; unknown kinds are ignored."""
        kind = record.get("kind", "tool_call")
        if kind == "tool_call":
            self._tool_call(record)
        elif kind == "turn" and record.get("event") == "end":
            self.turns += 1
            if "handoff" in (record.get("nodes") or []):
                self.handoff_turns += 1
        elif kind == "arguments":
            self._arguments(record)
        elif kind == "execution":
            for call in record.get("calls") or []:
                if call.get("rolled_back"):
                    self.rollbacks += 1
        elif kind == "node":
            self.protocol_sizes.extend(int(size) for size in record.get("protocol_sizes") or [])
        elif kind == "intent" and record.get("model_error"):
            self.model_errors += 1
        elif kind == "eval" and record.get("intent_accuracy") is not None:
            self.intent_accuracy = float(record["intent_accuracy"])

    def _tool_call(self, record: Mapping[str, Any]) -> None:
        status = str(record.get("status"))
        if status == "pending":
            return
        tool = str(record.get("tool") or "?")
        attempts = int(record.get("attempts") or 0)
        flags = record.get("flags") or []
        error_type = record.get("error_type")
        self.calls += 1
        self.calls_by_tool[(tool, status)] += 1
        if error_type:
            self.errors_by_type[(tool, str(error_type))] += 1
        if status == "success":
            self.successes += 1
        if error_type == "validation":
            self.validation_intercepts += 1
        latency = record.get("latency_ms")
        if latency is not None:
            self.latencies_ms.append(float(latency))
            per_tool = self.tool_latencies.setdefault(tool, deque(maxlen=10_000))
            per_tool.append(float(latency))
        cached = "cached" in flags
        if cached:
            self.cache_hits += 1
        if cached or attempts >= 1:
            self.admitted += 1
        if error_type == "circuit_open":
            self.breaker[tool] = "open"
        elif attempts >= 1 and status == "success":
            self.breaker[tool] = "closed"
        if attempts < 1:
            return
        self.executed += 1
        if attempts > 1:
            self.retried += 1
            if status == "success":
                self.retried_ok += 1
        self._overlap(record)

    def _overlap(self, record: Mapping[str, Any]) -> None:
        """Count calls whose run overlapped another call of the same task."""
        end = float(record.get("ts") or 0.0)
        start = end - float(record.get("latency_ms") or 0.0) / 1000
        task = f"{record.get('session_id')}|{record.get('task_id')}"
        intervals = self._intervals.setdefault(task, [])
        self._intervals.move_to_end(task)
        if len(self._intervals) > 256:
            self._intervals.popitem(last=False)
        mine = [start, end, False]
        for other in intervals:
            if other[0] < end and start < other[1]:  # the two runs overlapped in time
                if not other[2]:
                    other[2] = True
                    self.parallel_calls += 1
                if not mine[2]:
                    mine[2] = True
                    self.parallel_calls += 1
        intervals.append(mine)
        del intervals[:-32]

    def _arguments(self, record: Mapping[str, Any]) -> None:
        task = f"{record.get('session_id')}|{record.get('task_id')}"
        if task in self.slot_completed:
            return
        self.slot_tasks.add(task)
        if record.get("missing"):
            self._asked.setdefault(task, set()).add(str(record.get("turn_id")))
            return
        self.slot_completed.add(task)
        self.refill_turns.append(len(self._asked.pop(task, set())))

    # ---- derived -----------------------------------------------------------------------

    def rates(self) -> dict[str, float | None]:
        """Return every rate by its metric name; ``None`` where nothing was counted."""
        return {
            "intent_recognition_accuracy": self.intent_accuracy,
            "slot_filling_completion_rate": _ratio(len(self.slot_completed), len(self.slot_tasks)),
            "tool_call_success_rate": _ratio(self.successes, self.calls),
            "cache_hit_rate": _ratio(self.cache_hits, self.admitted),
            "parallel_tool_call_ratio": _ratio(self.parallel_calls, self.executed),
            "rollback_rate": _ratio(self.rollbacks, self.executed),
            "tool_call_retry_rate": _ratio(self.retried, self.executed),
            "tool_call_retry_success_rate": _ratio(self.retried_ok, self.retried),
            "validation_intercept_rate": _ratio(self.validation_intercepts, self.calls),
            "human_handoff_rate": _ratio(self.handoff_turns, self.turns),
        }

    def summary(self) -> dict[str, float | None]:
        """Return the rates plus the distributions' headline figures, for ``reach stats``."""
        sizes = list(self.protocol_sizes)
        return {
            **self.rates(),
            "tool_call_latency_p50_ms": percentile(self.latencies_ms, 50),
            "tool_call_latency_p99_ms": percentile(self.latencies_ms, 99),
            "protocol_message_size_avg_bytes": sum(sizes) / len(sizes) if sizes else None,
            "protocol_message_size_max_bytes": max(sizes) if sizes else None,
            "slot_refill_turns_avg": (
                sum(self.refill_turns) / len(self.refill_turns) if self.refill_turns else None
            ),
            "tool_calls": self.calls,
            "turns": self.turns,
            "model_errors": self.model_errors,
        }


class Metrics:
    """Prometheus metrics of one process, in a registry of their own."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        """Register the metrics in ``registry`` (a new one by default)."""
        self.registry = registry or CollectorRegistry(auto_describe=True)
        self.tally = Tally()
        self._lock = threading.Lock()
        self._breakers: list[BreakerStates] = []
        self.tool_call_latency = Histogram(
            "tool_call_latency",
            "Latency of one tool call through the executor, in seconds.",
            ["tool"],
            buckets=LATENCY_BUCKETS_S,
            registry=self.registry,
        )
        self.protocol_message_size = Histogram(
            "protocol_message_size",
            "Size of one protocol message as compact UTF-8 JSON, in bytes.",
            buckets=SIZE_BUCKETS_B,
            registry=self.registry,
        )
        self.slot_refill_turns = Histogram(
            "slot_refill_turns",
            "Turns spent asking for missing slots before a task's slots were complete.",
            buckets=REFILL_BUCKETS,
            registry=self.registry,
        )
        self.registry.register(_Derived(self))

    def observe(self, record: Mapping[str, Any]) -> None:
        """Feed one audit or trace record (an ``AuditLog`` sink)."""
        with self._lock:
            refills = len(self.tally.refill_turns)
            self.tally.add(record)
            new_refills = self.tally.refill_turns[refills:]
        kind = record.get("kind", "tool_call")
        if kind == "tool_call" and record.get("status") != "pending":
            latency = record.get("latency_ms")
            if latency is not None:
                self.tool_call_latency.labels(str(record.get("tool") or "?")).observe(
                    float(latency) / 1000
                )
        elif kind == "node":
            for size in record.get("protocol_sizes") or []:
                self.protocol_message_size.observe(int(size))
        for turns in new_refills:
            self.slot_refill_turns.observe(turns)

    def set_intent_accuracy(self, accuracy: float) -> None:
        """Record the evaluation's intent accuracy (0–1)."""
        self.observe({"kind": "eval", "intent_accuracy": accuracy})

    def watch_breakers(self, breakers: BreakerStates) -> None:
        """Report these live breakers' states instead of the state inferred from records."""
        self._breakers.append(breakers)

    def breaker_states(self) -> dict[str, int]:
        """Return each tool's breaker state as 0 closed, 1 open, 2 half-open."""
        with self._lock:
            states = {tool: BREAKER_STATES[state] for tool, state in self.tally.breaker.items()}
        for breakers in self._breakers:
            for tool, state in breakers.states().items():
                states[tool] = BREAKER_STATES.get(state, 0)
        return states


class _Derived(Collector):
    """Counters and rates computed from the tally at scrape time."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Metric]:
        metrics = self.metrics
        with metrics._lock:
            tally = metrics.tally
            rates = tally.rates()
            by_tool = dict(tally.calls_by_tool)
            by_error = dict(tally.errors_by_type)
            counts = {
                "tool_call_cache_hits": tally.cache_hits,
                "tool_call_retries": tally.retried,
                "tool_call_retry_successes": tally.retried_ok,
                "validation_intercepts": tally.validation_intercepts,
                "parallel_tool_calls": tally.parallel_calls,
                "rollbacks": tally.rollbacks,
                "turns": tally.turns,
                "human_handoffs": tally.handoff_turns,
                "model_errors": tally.model_errors,
            }
        calls = CounterMetricFamily(
            "tool_calls", "Tool calls by tool and final status.", labels=["tool", "status"]
        )
        for (tool, status), count in sorted(by_tool.items()):
            calls.add_metric([tool, status], count)
        yield calls
        errors = CounterMetricFamily(
            "tool_call_errors", "Failed tool calls by error type.", labels=["tool", "error_type"]
        )
        for (tool, error_type), count in sorted(by_error.items()):
            errors.add_metric([tool, error_type], count)
        yield errors
        for name, value in counts.items():
            yield CounterMetricFamily(name, f"Count behind the {name} rate.", value=value)
        for name, rate in rates.items():
            if rate is not None:
                yield GaugeMetricFamily(name, f"{name} (see observability/metrics.py).", value=rate)
        breaker = GaugeMetricFamily(
            "circuit_breaker_state",
            "Circuit breaker per tool: 0 closed, 1 open, 2 half-open.",
            labels=["tool"],
        )
        for tool, state in sorted(metrics.breaker_states().items()):
            breaker.add_metric([tool], state)
        yield breaker


@lru_cache(maxsize=1)
def default_metrics() -> Metrics:
    """Return the process's metrics, fed by every file-backed ``AuditLog``."""
    return Metrics()


def render_latest(metrics: Metrics | None = None) -> bytes:
    """Return the Prometheus text exposition of ``metrics`` (the process's by default)."""
    return generate_latest((metrics or default_metrics()).registry)


__all__ = [
    "BREAKER_STATES",
    "Metrics",
    "LogTail",
    "Tally",
    "default_metrics",
    "percentile",
    "render_latest",
]


class LogTail:
    """Feed ``metrics`` from a JSON-lines audit log, reading only what was appended since.

    ``reach serve-metrics`` runs in its own process: it sees the agents' records through the
    file they share, not through a sink.
    """

    def __init__(self, path: str | Path, metrics: Metrics | None = None) -> None:
        """Tail ``path`` into ``metrics`` (a new ``Metrics`` by default)."""
        self.path = Path(path)
        self.metrics = metrics or Metrics()
        self._offset = 0
        self._lock = threading.Lock()

    def poll(self) -> int:
        """Read the complete lines appended since the last poll; return how many."""
        with self._lock:
            if not self.path.exists():
                return 0
            if self.path.stat().st_size < self._offset:
                self._offset = 0  # the log was rotated or truncated
            read = 0
            with self.path.open("rb") as log:
                log.seek(self._offset)
                for raw in log:
                    if not raw.endswith(b"\n"):
                        break  # a line still being written: read it next time
                    self._offset += len(raw)
                    try:
                        record = json.loads(raw)
                    except ValueError:
                        continue
                    if isinstance(record, dict):
                        self.metrics.observe(record)
                        read += 1
            return read
