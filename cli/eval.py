"""``reach eval``: run the evaluation set against the agent and the bare baseline."""

from __future__ import annotations

import importlib
import os
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
from rich.table import Table

from config.settings import get_settings
from eval.backends import model_upstream, rules_understanding
from eval.case_set import SLICES, load_cases
from eval.harness import Agent, Evaluation, run_evaluation
from eval.model_cache import CachingProxy, ModelCache
from eval.report import headline, truth_table, write_report
from observability.audit import AuditLog, default_audit_path
from observability.metrics import default_metrics

console = Console()


def _understanding_factory(mode: str) -> Any:
    """Return a factory of the understanding for ``mode``.

    ``rules`` is the offline default; ``local``, ``mixed`` or a model name at the configured
    endpoint select the model the way ``REACH_MODEL`` does (this command is the process's
    entry point, so it sets that one variable before the settings are read); any other value
    is ``module:Factory`` (a class or function that returns an object implementing
    ``understanding.recognizer.Understanding``).
    """
    if mode == "rules":
        return rules_understanding
    if ":" not in mode or mode.startswith("mixed:"):
        os.environ["REACH_MODEL"] = mode
        get_settings.cache_clear()
        return rules_understanding  # ``None``: Services builds the configured model
    module, name = mode.split(":", 1)
    return getattr(importlib.import_module(module), name)


def eval_command(
    mode: Annotated[
        str, typer.Option(help="rules, or module:Factory of an Understanding")
    ] = "rules",
    faults: Annotated[float, typer.Option(help="share of backend calls that fail")] = 0.0,
    trials: Annotated[int, typer.Option(help="runs per case; pass^k uses all of them")] = 1,
    cases: Annotated[Path | None, typer.Option(help="a case file or folder")] = None,
    out: Annotated[Path | None, typer.Option(help="report folder")] = None,
    seed: Annotated[int, typer.Option(help="seed of the fault injector")] = 0,
    only: Annotated[str | None, typer.Option(help="comma-separated case id prefixes")] = None,
    bare: Annotated[bool, typer.Option(help="also run the bare baseline")] = True,
    slice_: Annotated[
        str | None,
        typer.Option("--slice", help="a fixed selection: 'model' (see eval/README.md)"),
    ] = None,
    model_cache: Annotated[
        Path | None,
        typer.Option(help="SQLite file of model answers keyed by request body (model modes)"),
    ] = None,
) -> None:
    """Run the evaluation set, score it by database state and calls, and write a report."""
    chosen = load_cases(cases)
    if slice_:
        if slice_ not in SLICES:
            raise typer.BadParameter(f"unknown slice {slice_!r}; known: {sorted(SLICES)}")
        chosen = SLICES[slice_](chosen)
    if only:
        prefixes = tuple(p.strip() for p in only.split(",") if p.strip())
        chosen = [case for case in chosen if case.id.startswith(prefixes)]
    agents: tuple[Agent, ...] = ("agent", "bare") if bare else ("agent",)
    total = len(chosen) * trials * len(agents)
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    ) as progress:
        task = progress.add_task("evaluating", total=total)

        def advance(run: Any) -> None:
            mark = "ok" if run.passed else f"FAIL {run.cause}"
            progress.update(task, advance=1, description=f"{run.agent} {run.case}: {mark}")
            if not console.is_terminal:  # a log file gets one line per run instead of a bar
                console.print(f"{run.agent} {run.case} trial {run.trial}: {mark}")

        factory = _understanding_factory(mode)
        proxy = None
        if model_cache is not None:
            settings = get_settings()
            proxy = CachingProxy(
                ModelCache(model_cache),
                model_upstream(settings),
                client_timeout_s=settings.model_timeout_s,
            ).start()
        try:
            evaluation = run_evaluation(
                chosen,
                mode=mode,
                understanding=factory,
                fault_rate=faults,
                trials=trials,
                seed=seed,
                agents=agents,
                progress=advance,
                model_proxy=proxy,
            )
        finally:
            if proxy is not None:
                proxy.stop()
                proxy.cache.close()
    folder = out or Path(".reach") / "eval" / datetime.now().strftime("%Y%m%d-%H%M%S")
    report = write_report(evaluation, folder)
    table = Table(title=f"mode {mode}, faults {faults}, {trials} trial(s), {len(chosen)} cases")
    table.add_column("metric")
    table.add_column("agent")
    table.add_column("bare")
    for row in headline(evaluation):
        table.add_row(*row)
    console.print(table)
    truth = Table(title="failures told truthfully (agent): reply named the true cause")
    for column in ("failure class", "named / turns", "share"):
        truth.add_column(column)
    for row in truth_table(evaluation):
        truth.add_row(*row)
    console.print(truth)
    if evaluation.cache:
        console.print(f"model cache: {evaluation.cache}")
    console.print(f"report: {report} (and report.html)")
    accuracy = publish_intent_accuracy(evaluation)
    console.print(f"intent accuracy {accuracy:.1%} recorded in {default_audit_path()}")


def publish_intent_accuracy(evaluation: Evaluation, audit: AuditLog | None = None) -> float:
    """Record the agent's intent accuracy where ``reach stats`` and ``/metrics`` read it.

    The ``{"kind": "eval"}`` record goes to the audit log (a running ``reach serve-metrics``
    tails it) and the gauge of this process is set too.
    """
    summary = evaluation.summary("agent")
    accuracy = float(summary["intent_accuracy"])
    log = audit or AuditLog(default_audit_path())
    try:
        log.write(
            {
                "kind": "eval",
                "intent_accuracy": accuracy,
                "mode": evaluation.mode,
                "fault_rate": evaluation.fault_rate,
                "trials": evaluation.trials,
                "cases": summary["cases"],
            }
        )
        log.flush()
    finally:
        if audit is None:
            log.close()
    default_metrics().set_intent_accuracy(accuracy)
    return accuracy


def main() -> None:
    """Run ``eval_command`` on its own (``python -m cli.eval``)."""
    typer.run(eval_command)


if __name__ == "__main__":
    main()
