"""Measure the rules on a deterministic tuning/held-out split of the labelled set.

Tuning rules on the whole labelled set and reporting accuracy on it would only show that the
rules memorize it. So the set is split by position: every fifth row (index % 5 == 4) is held
out and never listed while tuning; the rest is the tuning part. ``eval/intents_holdout.jsonl``
holds phrasings written before the tuning started. ``--errors`` lists misclassified rows of
the tuning part only.

``uv run python -m eval.intent_split [--errors]``
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from eval.intent_accuracy import LABELS, IntentReport, Labelled, load, measure
from nodes.services import Services
from scenarios import SCENARIOS

HOLDOUT = Path(__file__).with_name("intents_holdout.jsonl")
HELD_OUT_EVERY = 5


def split(rows: Sequence[Labelled]) -> tuple[list[Labelled], list[Labelled]]:
    """Return (tuning rows, held-out rows): every fifth row by position is held out."""
    tune = [row for i, row in enumerate(rows) if i % HELD_OUT_EVERY != HELD_OUT_EVERY - 1]
    held = [row for i, row in enumerate(rows) if i % HELD_OUT_EVERY == HELD_OUT_EVERY - 1]
    return tune, held


def _summary(report: IntentReport) -> dict[str, object]:  # figures by name, to print
    figures: Mapping[str, object] = report
    keys = ("n", "accuracy", "unknown_precision", "unknown_recall", "notify_accuracy")
    return {key: figures[key] for key in (*keys, "brier", "ece", "per_intent")}


def main(argv: Sequence[str] | None = None) -> int:
    """Print the figures of the whole set, its two parts and the held-out phrasings."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--errors", action="store_true", help="list tuning-part errors")
    args = parser.parse_args(argv)
    rules = Services(scenarios=SCENARIOS).recognizer
    rows = load(LABELS)
    tune, held = split(rows)
    reports = {
        "all": measure(rules, rows),
        "tune": measure(rules, tune),
        "held_out_every_5th": measure(rules, held),
        "new_phrasings": measure(rules, load(HOLDOUT)),
    }
    out: dict[str, object] = {name: _summary(report) for name, report in reports.items()}
    if args.errors:
        out["tune_errors"] = reports["tune"]["errors"]
    print(json.dumps(out, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
