"""``reach bench tau2``: Agent-Reach and τ²'s own agent on τ²-bench, side by side.

Needs the optional group: ``uv sync --group tau2`` (and a model endpoint: ``reach model
serve`` with a context of 16K for τ²'s prompts, or ``REACH_BASE_URL``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from config.settings import LOCAL_MODEL_NAME, get_settings, local_base_url

bench_app = typer.Typer(help="Benchmarks against public yardsticks (τ²-bench).")
console = Console()
RESULTS = Path("bench/results/tau2")


def _endpoint(model: str, base_url: str | None) -> object:
    from bench.tau2.runner import Endpoint  # noqa: PLC0415 - needs the tau2 group

    settings = get_settings()
    key = settings.api_key.get_secret_value() if settings.api_key else "local"
    if model == "local":
        return Endpoint(LOCAL_MODEL_NAME, base_url or local_base_url(settings), "local")
    url = base_url or settings.base_url
    if not url:
        console.print(f"[red]--model {model} needs an endpoint: REACH_BASE_URL or --base-url[/red]")
        raise typer.Exit(2)
    return Endpoint(model, url, key)


@bench_app.command("tau2")
def tau2(
    domain: Annotated[str, typer.Option(help="retail or airline")] = "retail",
    split: Annotated[str, typer.Option(help="τ²'s task split: test, train or base")] = "test",
    tasks: Annotated[int | None, typer.Option(help="the first N tasks of the split")] = None,
    trials: Annotated[int, typer.Option(help="trials per task (pass^k uses k = trials)")] = 1,
    model: Annotated[str, typer.Option(help="local, or a model name at REACH_BASE_URL")] = "local",
    base_url: Annotated[str | None, typer.Option(help="the agents' endpoint")] = None,
    user_model: Annotated[
        str | None, typer.Option(help="the user simulator's model (default: --model)")
    ] = None,
    user_base_url: Annotated[str | None, typer.Option(help="its endpoint")] = None,
    agents: Annotated[str, typer.Option(help="comma-separated")] = "llm_agent,agent_reach",
    task_ids: Annotated[str | None, typer.Option(help="comma-separated task ids")] = None,
    max_steps: Annotated[int, typer.Option(help="messages per simulation at most")] = 60,
    seed: Annotated[int, typer.Option(help="τ²'s run seed (per-trial seeds from it)")] = 300,
    out: Annotated[Path, typer.Option(help="results directory")] = RESULTS,
    user_sim: Annotated[
        str, typer.Option(help="user_simulator (τ²'s), or primed_user: a diagnostic, not τ²")
    ] = "user_simulator",
    probe_user: Annotated[
        bool, typer.Option(help="only ask the user simulator its first message on each task")
    ] = False,
) -> None:
    """Run τ²'s tasks with its own llm_agent and with Agent-Reach; resumable; a chart."""
    try:
        from bench.tau2.report import draw  # noqa: PLC0415 - needs the tau2 group
        from bench.tau2.runner import EndpointUnreachable, RunPlan, run  # noqa: PLC0415
    except ImportError as error:
        console.print(f"[red]τ²-bench is not installed ({error.name}): uv sync --group tau2[/red]")
        raise typer.Exit(2) from error
    agent_endpoint = _endpoint(model, base_url)
    user_endpoint = _endpoint(user_model or model, user_base_url or base_url)
    if probe_user:
        _probe(domain, split, tasks, user_endpoint, out)
        return
    plan = RunPlan(
        domain=domain,
        split=split,
        tasks=tasks,
        trials=trials,
        agent=agent_endpoint,  # type: ignore[arg-type]
        user=user_endpoint,  # type: ignore[arg-type]
        out_dir=out,
        agents=tuple(a.strip() for a in agents.split(",") if a.strip()),
        task_ids=[t.strip() for t in task_ids.split(",")] if task_ids else None,
        seed=seed,
        max_steps=max_steps,
        user_impl=user_sim,
    )
    try:
        summary = run(plan, say=console.print)
    except EndpointUnreachable as error:
        console.print(f"[red]{error}[/red]")
        raise typer.Exit(2) from error
    primed = "" if user_sim == "user_simulator" else f"-{user_sim}"
    path = out / f"{domain}-{split}{primed}-summary.json"
    path.write_text(json.dumps(summary, indent=1, ensure_ascii=False))
    chart = draw(out, out / "tau2.png")
    for agent, row in summary["agents"].items():
        console.print(f"[bold]{agent}[/bold]: {json.dumps(row, ensure_ascii=False)}")
    console.print(f"summary: {path}; chart: {chart}")


def _probe(domain: str, split: str, tasks: int | None, user: object, out: Path) -> None:
    from bench.tau2.probe import probe_user  # noqa: PLC0415 - needs the tau2 group
    from bench.tau2.runner import EndpointUnreachable, check_endpoint  # noqa: PLC0415

    try:
        check_endpoint(user)  # type: ignore[arg-type]
    except EndpointUnreachable as error:
        console.print(f"[red]{error}[/red]")
        raise typer.Exit(2) from error
    found = probe_user(domain, split, user, tasks)  # type: ignore[arg-type]
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{domain}-{split}-user-probe.json"
    path.write_text(json.dumps(found, indent=1, ensure_ascii=False))
    console.print(
        f"the user simulator stayed in its role on {found['in_role']} of {found['tasks']} "
        f"{domain} tasks ({path})"
    )


__all__ = ["bench_app"]
