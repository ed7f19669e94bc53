"""Write an evaluation as Markdown and HTML with matplotlib charts, and a printed summary."""

from __future__ import annotations

import html
import json
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any, TypedDict

from eval.harness import Evaluation
from eval.truth import truth_rows


def _pyplot() -> Any:
    """Return matplotlib's pyplot (Agg), imported when a chart is drawn.

    ``cli.app`` imports this module, so a top-level import cost every ``reach`` start 1.3 s.
    """
    import matplotlib  # noqa: PLC0415 - see above

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    return plt


ROWS: tuple[tuple[str, str, str], ...] = (
    ("task_success", "task success rate", "pct"),
    ("pass_k", "pass^k", "pct"),
    ("intent_accuracy", "intent accuracy (cases that state one)", "pct"),
    ("duplicate_side_effects", "duplicate side effects", "int"),
    ("invalid_calls_reaching_backend", "invalid calls reaching a backend", "int"),
    ("permission_violations", "permission violations", "int"),
    ("human_interventions", "human interventions (handoffs)", "int"),
    ("validation_intercept_rate", "validation intercept rate", "pct"),
    ("crashes", "crashes", "int"),
    ("latency_mean_ms", "mean latency per turn (ms)", "ms"),
    ("latency_p99_ms", "p99 latency per turn (ms)", "ms"),
    ("latency_turns", "turns timed (no cached model answer)", "int"),
    ("model_calls", "model calls through the cache", "int"),
    ("model_calls_cached", "of which answered from the cache", "int"),
)


def _fmt(value: Any, kind: str) -> str:
    if kind == "pct":
        return f"{value * 100:.1f}%"
    if kind == "ms":
        return f"{value:.1f}"
    return str(value)


def headline(evaluation: Evaluation) -> list[tuple[str, str, str]]:
    """Return (metric, agent, bare) rows of the A/B table."""
    agents = {run.agent for run in evaluation.runs}
    summaries: dict[str, Mapping[str, Any]] = {  # read by the ROWS' keys
        agent: evaluation.summary(agent) for agent in ("agent", "bare") if agent in agents
    }
    rows = []
    for key, label, kind in ROWS:
        if key.startswith("model_calls") and not evaluation.cache:
            continue  # no cache proxy: these would be zeros that look like "no model calls"
        if key == "pass_k":
            label = f"pass^{evaluation.trials}"
        rows.append(
            (
                label,
                _fmt(summaries["agent"][key], kind) if "agent" in summaries else "–",
                _fmt(summaries["bare"][key], kind) if "bare" in summaries else "–",
            )
        )
    return rows


def _charts(evaluation: Evaluation, out: Path) -> list[str]:
    names = []
    agents = sorted({run.agent for run in evaluation.runs})
    scenarios = sorted({run.scenario for run in evaluation.runs})
    plt = _pyplot()
    # success by scenario and agent (mode in the title)
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / max(1, len(agents))
    for i, agent in enumerate(agents):
        rates = []
        for scenario in scenarios:
            runs = [r for r in evaluation.runs if r.agent == agent and r.scenario == scenario]
            rates.append(100 * sum(r.passed for r in runs) / len(runs) if runs else 0)
        ax.bar([x + i * width for x in range(len(scenarios))], rates, width, label=agent)
    ax.set_xticks([x + width * (len(agents) - 1) / 2 for x in range(len(scenarios))])
    ax.set_xticklabels(scenarios, rotation=20)
    ax.set_ylabel("task success %")
    ax.set_title(f"Success by scenario — mode {evaluation.mode}, faults {evaluation.fault_rate}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "success_by_scenario.png", dpi=110)
    plt.close(fig)
    names.append("success_by_scenario.png")
    # failure causes
    fig, ax = plt.subplots(figsize=(8, 4))
    causes = sorted({r.cause for r in evaluation.runs if r.cause})
    for i, agent in enumerate(agents):
        counts = Counter(r.cause for r in evaluation.runs if r.agent == agent and r.cause)
        ax.barh(
            [y + i * width for y in range(len(causes))],
            [counts[c] for c in causes],
            width,
            label=agent,
        )
    ax.set_yticks([y + width * (len(agents) - 1) / 2 for y in range(len(causes))])
    ax.set_yticklabels(causes)
    ax.set_xlabel("failed runs")
    ax.set_title("Failure causes")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "failure_causes.png", dpi=110)
    plt.close(fig)
    names.append("failure_causes.png")
    # latency distribution
    fig, ax = plt.subplots(figsize=(8, 4))
    for agent in agents:
        values = [ms for r in evaluation.runs if r.agent == agent for ms in r.latencies_ms]
        if values:
            ax.hist(values, bins=40, alpha=0.6, label=agent)
    ax.set_xlabel("latency per turn (ms)")
    ax.set_ylabel("turns")
    ax.set_title("Latency distribution")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "latency.png", dpi=110)
    plt.close(fig)
    names.append("latency.png")
    # A/B side by side
    if len(agents) > 1:
        summaries: dict[str, Mapping[str, Any]] = {  # read by the keys below
            agent: evaluation.summary(agent)  # type: ignore[arg-type]
            for agent in agents
        }
        keys = [("task_success", "success"), ("pass_k", f"pass^{evaluation.trials}")]
        tallies = [
            ("duplicate_side_effects", "duplicates"),
            ("permission_violations", "perm. violations"),
            ("invalid_calls_reaching_backend", "invalid calls"),
            ("human_interventions", "handoffs"),
        ]
        fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
        for i, agent in enumerate(agents):
            left.bar(
                [x + i * width for x in range(len(keys))],
                [100 * summaries[agent][k] for k, _ in keys],
                width,
                label=agent,
            )
            right.bar(
                [x + i * width for x in range(len(tallies))],
                [summaries[agent][k] for k, _ in tallies],
                width,
                label=agent,
            )
        left.set_xticks([x + width / 2 for x in range(len(keys))])
        left.set_xticklabels([label for _, label in keys])
        left.set_ylabel("%")
        right.set_xticks([x + width / 2 for x in range(len(tallies))])
        right.set_xticklabels([label for _, label in tallies], rotation=15)
        left.legend()
        fig.suptitle("A/B: agent vs bare")
        fig.tight_layout()
        fig.savefig(out / "ab.png", dpi=110)
        plt.close(fig)
        names.append("ab.png")
    return names


def truth_table(evaluation: Evaluation, agent: str = "agent") -> list[tuple[str, str, str]]:
    """Per failure class: turns it decided, how many replies named it, and the share."""
    if not any(run.agent == agent for run in evaluation.runs):
        return []
    return truth_rows(evaluation.summary(agent)["told_by_class"])  # type: ignore[arg-type]


class FailureLine(TypedDict):
    """One (agent, case) that failed at least once, for the report's table."""

    agent: str
    case: str
    failed_trials: int
    cause: str | None
    detail: str
    faults: str


def failures(evaluation: Evaluation) -> list[FailureLine]:
    """Return one line per (agent, case) that failed at least once."""
    grouped: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for run in evaluation.runs:
        if not run.passed:
            grouped[(run.agent, run.case)].append(run)
    rows: list[FailureLine] = []
    for (agent, case), runs in sorted(grouped.items()):
        first = runs[0]
        rows.append(
            {
                "agent": agent,
                "case": case,
                "failed_trials": len(runs),
                "cause": first.cause,
                "detail": first.error
                or json.dumps(first.db_diff, ensure_ascii=False)[:200]
                or f"reached {first.reached}",
                "faults": ", ".join(first.faults),
            }
        )
    return rows


def write_report(evaluation: Evaluation, out: Path) -> Path:
    """Write ``report.md``, ``report.html``, charts and ``runs.json`` into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    charts = _charts(evaluation, out)
    table = headline(evaluation)
    title = (
        f"Evaluation — mode {evaluation.mode}, faults {evaluation.fault_rate}, "
        f"trials {evaluation.trials}, seed {evaluation.seed}"
    )
    cases = len({run.case for run in evaluation.runs})
    md = [f"# {title}", "", f"{cases} cases.", "", "| metric | agent | bare |", "|---|---|---|"]
    md += [f"| {label} | {a} | {b} |" for label, a, b in table]
    if evaluation.interrupted:
        md += ["", f"Interrupted: only {evaluation.trials} trial(s) finished and are counted."]
    if evaluation.cache:
        md += [
            "",
            f"Model cache: `{evaluation.cache}`. Latency rows count only turns none of whose "
            "model answers came from the cache.",
        ]
    truth = truth_table(evaluation)
    md += [
        "",
        "## Failures told truthfully (agent)",
        "",
        "Turns decided by a failure, per class, and how often the reply named the true cause"
        " (`eval/truth.py`).",
        "",
        "| failure class | named / turns | share |",
        "|---|---|---|",
        *[f"| {cause} | {count} | {share} |" for cause, count, share in truth],
    ]
    md += ["", *[f"![{name}]({name})" for name in charts], "", "## Failed cases", ""]
    md += [
        "| agent | case | failed trials | cause | detail | faults |",
        "|---|---|---|---|---|---|",
    ]
    for row in failures(evaluation):
        detail = str(row["detail"]).replace("|", "\\|")
        md.append(
            f"| {row['agent']} | {row['case']} | {row['failed_trials']} | {row['cause']} "
            f"| {detail} | {row['faults']} |"
        )
    (out / "report.md").write_text("\n".join(md) + "\n", encoding="utf-8")
    rows = "".join(
        f"<tr><td>{html.escape(label)}</td><td>{a}</td><td>{b}</td></tr>" for label, a, b in table
    )
    fail_rows = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row.values()) + "</tr>"
        for row in failures(evaluation)
    )
    images = "".join(f'<p><img src="{name}" alt="{name}"></p>' for name in charts)
    truth_html = "".join(
        f"<tr><td>{html.escape(cause)}</td><td>{count}</td><td>{share}</td></tr>"
        for cause, count, share in truth
    )
    page = (
        f"<!doctype html><meta charset='utf-8'><title>{html.escape(title)}</title>"
        "<style>body{font-family:sans-serif;max-width:1000px;margin:auto}"
        "td,th{border:1px solid #ccc;padding:4px 8px}table{border-collapse:collapse}</style>"
        f"<h1>{html.escape(title)}</h1><p>{cases} cases.</p>"
        f"<table><tr><th>metric</th><th>agent</th><th>bare</th></tr>{rows}</table>"
        "<h2>Failures told truthfully (agent)</h2><table><tr><th>failure class</th>"
        f"<th>named / turns</th><th>share</th></tr>{truth_html}</table>{images}"
        "<h2>Failed cases</h2><table><tr><th>agent</th><th>case</th><th>failed trials</th>"
        f"<th>cause</th><th>detail</th><th>faults</th></tr>{fail_rows}</table>"
    )
    (out / "report.html").write_text(page, encoding="utf-8")
    (out / "runs.json").write_text(
        json.dumps([asdict(run) for run in evaluation.runs], ensure_ascii=False, indent=1),
        encoding="utf-8",
    )
    return out / "report.md"
