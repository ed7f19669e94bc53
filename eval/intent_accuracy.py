"""Measure an ``Understanding`` on the labelled set: accuracy, UNKNOWN precision, calibration.

``uv run python -m eval.intent_accuracy`` measures the rules; ``--model local`` (or any model
name with ``--base-url``) measures ``ModelUnderstanding`` over the rules. ``--limit``
pick a fixed slice. Reported:

* accuracy per intent and overall (a row is right when ``classify`` returns its label);
* UNKNOWN precision (of the messages called UNKNOWN, how many are) and recall (of the UNKNOWN
  messages, how many were called UNKNOWN): a recognizer that triggers on small talk loses
  precision on the tasks, one that gives up too easily loses it on UNKNOWN;
* notify accuracy: rows with ``notify: true`` and the other CHECK_ORDER_STATUS rows, checked
  through ``extract_slots`` (the on-request notification must be found only when asked);
* Brier score (mean (confidence − correct)²) and ECE (10 equal-width bins, |accuracy −
  mean confidence| weighted by bin size) of the confidence as a probability of being right;
* latency per call (median, p95) when a model is involved.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from config.settings import get_settings
from contract.scenario import ScenarioSet
from nodes.services import Services
from scenarios import SCENARIOS
from understanding.chat import chat_model_for
from understanding.model_recognizer import ModelUnderstanding, options_from_scenarios

LABELS = Path(__file__).with_name("intents.jsonl")
UNKNOWN = "UNKNOWN"


class Labelled(TypedDict):
    """One line of the labelled set: a text, its intent, and for an order check, ``notify``."""

    text: str
    intent: str
    notify: NotRequired[bool]


class Misread(TypedDict):
    """A row the understanding got wrong."""

    text: str
    want: str
    got: str
    confidence: float
    error: str | None


class IntentReport(TypedDict):
    """The figures ``measure`` gives (see the module docstring)."""

    n: int
    accuracy: float
    per_intent: dict[str, float]
    unknown_precision: float | None
    unknown_recall: float | None
    notify_accuracy: float | None
    brier: float
    ece: float
    latency_median_s: float | None
    latency_p95_s: float | None
    sources: dict[str, int]
    errors: NotRequired[list[Misread]]
    """The misread rows (the command line leaves them out unless ``--errors``)."""


def load(path: Path = LABELS) -> list[Labelled]:
    """Read the labelled set (one JSON object per line)."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def fixed_slice(rows: Sequence[Labelled], size: int) -> list[Labelled]:
    """Every k-th row so that ``size`` rows cover all intents, the same rows every time."""
    if size >= len(rows):
        return list(rows)
    step = len(rows) / size
    return [rows[int(i * step)] for i in range(size)]


def brier(pairs: Iterable[tuple[float, bool]]) -> float:
    """Mean squared gap between confidence and outcome (0 is perfect)."""
    values = [(c - float(ok)) ** 2 for c, ok in pairs]
    return sum(values) / len(values) if values else 0.0


def ece(pairs: Sequence[tuple[float, bool]], bins: int = 10) -> float:
    """Expected calibration error over equal-width confidence bins."""
    buckets: dict[int, list[tuple[float, bool]]] = defaultdict(list)
    for confidence, ok in pairs:
        buckets[min(int(confidence * bins), bins - 1)].append((confidence, ok))
    total = len(pairs)
    error = 0.0
    for items in buckets.values():
        mean_conf = sum(c for c, _ in items) / len(items)
        accuracy = sum(ok for _, ok in items) / len(items)
        error += len(items) / total * abs(accuracy - mean_conf)
    return error


def measure(
    understanding: Any,
    rows: Sequence[Labelled],
    *,
    clock: Callable[[], float] = time.perf_counter,
    check_notify: bool = True,
) -> IntentReport:
    """Classify every row; return the figures (see the module docstring)."""
    per_intent: dict[str, list[bool]] = defaultdict(list)
    pairs: list[tuple[float, bool]] = []
    predicted_unknown = actual_unknown = true_unknown = 0
    notify_right: list[bool] = []
    latencies: list[float] = []
    errors: list[Misread] = []
    sources: dict[str, int] = defaultdict(int)
    for row in rows:
        started = clock()
        result = understanding.classify(row["text"])
        latencies.append(clock() - started)
        sources[getattr(result, "source", "rules")] += 1
        ok = result.intent == row["intent"]
        per_intent[row["intent"]].append(ok)
        pairs.append((float(result.confidence), ok))
        predicted_unknown += result.intent == UNKNOWN
        actual_unknown += row["intent"] == UNKNOWN
        true_unknown += result.intent == UNKNOWN and row["intent"] == UNKNOWN
        if not ok:
            errors.append(
                {
                    "text": row["text"],
                    "want": row["intent"],
                    "got": result.intent,
                    "confidence": result.confidence,
                    "error": getattr(result, "error", None),
                }
            )
        if check_notify and row["intent"] == "CHECK_ORDER_STATUS" and ok:
            slots = understanding.extract_slots(row["text"], "CHECK_ORDER_STATUS").slots
            notify_right.append(bool(slots.get("notify")) == bool(row.get("notify")))
    total = sum(len(v) for v in per_intent.values())
    right = sum(sum(v) for v in per_intent.values())
    report: IntentReport = {
        "n": total,
        "accuracy": round(right / total, 3) if total else 0.0,
        "per_intent": {k: round(sum(v) / len(v), 3) for k, v in sorted(per_intent.items())},
        "unknown_precision": round(true_unknown / predicted_unknown, 3)
        if predicted_unknown
        else None,
        "unknown_recall": round(true_unknown / actual_unknown, 3) if actual_unknown else None,
        "notify_accuracy": round(sum(notify_right) / len(notify_right), 3)
        if notify_right
        else None,
        "brier": round(brier(pairs), 4),
        "ece": round(ece(pairs), 4),
        "latency_median_s": round(statistics.median(latencies), 3) if latencies else None,
        "latency_p95_s": round(sorted(latencies)[int(0.95 * (len(latencies) - 1))], 3)
        if latencies
        else None,
        "sources": dict(sources),
        "errors": errors,
    }
    return report


def main(argv: Sequence[str] | None = None) -> int:
    """Measure the rules, or a model over the rules, and print the figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="rules", help="rules, local, or a model name")
    parser.add_argument("--base-url", default=None)
    parser.add_argument("--limit", type=int, default=0, help="a fixed slice of this many rows")
    parser.add_argument(
        "--mixed", type=float, default=None, help="ask the model only below this rules confidence"
    )
    parser.add_argument("--errors", action="store_true", help="list the misclassified rows")
    args = parser.parse_args(argv)

    catalog = ScenarioSet(SCENARIOS)
    rules = Services(scenarios=catalog).recognizer
    rows = load()
    if args.limit:
        rows = fixed_slice(rows, args.limit)
    understanding: Any = rules
    if args.model != "rules":
        settings = get_settings().model_copy(
            update={"model": args.model, "base_url": args.base_url or get_settings().base_url}
        )
        llm = chat_model_for(args.model, settings)
        understanding = ModelUnderstanding(
            llm, options_from_scenarios(catalog), rules, consult_below=args.mixed
        )
    report = measure(understanding, rows)
    if not args.errors:
        report.pop("errors")
    print(json.dumps(report, ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
