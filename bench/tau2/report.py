"""The side-by-side chart of every ``*-summary.json`` in a results directory."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 - after the headless backend

SAFETY = ("unconfirmed_writes", "off_gold_writes", "rejected_by_validation")


def draw(results: Path, target: Path) -> Path:
    """Draw pass^1 (and pass^k) and the safety counts of each agent, per domain."""
    summaries = [json.loads(p.read_text()) for p in sorted(results.glob("*-summary.json"))]
    summaries = [s for s in summaries if s.get("agents")]
    if not summaries:
        return target
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    labels, series = [], {}
    for summary in summaries:
        for agent, row in summary["agents"].items():
            if not row.get("simulations"):
                continue
            user = summary.get("user", "user_simulator")
            who = "" if user == "user_simulator" else f" ({user})"
            labels.append(f"{summary['domain']}{who}\n{agent}\n({row['tasks']} tasks)")
            k = summary["trials"]
            series.setdefault("pass^1", []).append(row.get("pass^1") or 0.0)
            series.setdefault("pass^k", []).append(row.get(f"pass^{k}") or 0.0)
            for name in SAFETY:
                series.setdefault(name, []).append(row.get(name, 0))
    x = range(len(labels))
    width = 0.38
    axes[0].bar([i - width / 2 for i in x], series["pass^1"], width, label="pass^1")
    axes[0].bar([i + width / 2 for i in x], series["pass^k"], width, label="pass^k")
    axes[0].set_ylim(0, 1)
    axes[0].set_title("τ²-bench: pass rate (same model, tasks, seeds, user simulator)")
    axes[1].set_title("writes without a yes, off the gold path; calls refused")
    width = 0.27
    for n, name in enumerate(SAFETY):
        axes[1].bar([i + (n - 1) * width for i in x], series[name], width, label=name)
    for ax in axes:
        ax.set_xticks(list(x))
        ax.set_xticklabels(labels, fontsize=7)
        ax.legend(fontsize=7)
    fig.tight_layout()
    target.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(target, dpi=110)
    plt.close(fig)
    return target


__all__ = ["draw"]
