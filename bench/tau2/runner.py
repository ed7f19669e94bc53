"""Both agents on the same τ² tasks, seeds, model and user simulator; resumable.

For each trial, each task, each agent in turn (interleaved, so the machine's load hits both
alike) τ²'s own ``run_task`` runs the simulation: τ²'s orchestrator, user simulator and
evaluator. Each finished simulation is appended to the agent's results file (τ²'s
``Results`` format, readable by ``tau2 view``) at once, with its figures beside it; a run
started again skips what its files already hold (same task, trial and seed).
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # offline: no cost map download

import httpx  # noqa: E402 - after the offline switch, before tau2 pulls litellm in

AGENTS = ("llm_agent", "agent_reach")
DEFAULT_SEED = 300
DEFAULT_MAX_STEPS = 60
"""τ²'s default is 100 messages; 60 bounds a run on a small CPU model (said in the results)."""
DEFAULT_MAX_ERRORS = 10
DEFAULT_USER = "user_simulator"


class EndpointUnreachable(RuntimeError):
    """The model endpoint does not answer: nothing was run."""


@dataclass(frozen=True)
class Endpoint:
    """An OpenAI-compatible endpoint as litellm and LangChain both address it."""

    model: str
    base_url: str
    api_key: str = "local"

    @property
    def litellm_name(self) -> str:
        """litellm's name for an OpenAI-compatible model."""
        return f"openai/{self.model}"

    def llm_args(self, temperature: float = 0.0) -> dict[str, Any]:
        """What τ²'s ``llm_args`` carry to both agents and the user simulator."""
        return {"base_url": self.base_url, "api_key": self.api_key, "temperature": temperature}


def check_endpoint(endpoint: Endpoint, timeout_s: float = 5.0) -> None:
    """Raise ``EndpointUnreachable`` with what to do when ``/models`` does not answer."""
    url = endpoint.base_url.rstrip("/") + "/models"
    try:
        response = httpx.get(
            url, timeout=timeout_s, headers={"Authorization": f"Bearer {endpoint.api_key}"}
        )
    except httpx.HTTPError as error:
        msg = (
            f"the model endpoint {endpoint.base_url} is not reachable ({type(error).__name__}). "
            "Start the local one with `uv run reach model serve` (REACH_LOCAL_MODEL_PORT, "
            "REACH_LOCAL_MODEL_CTX=16384 for τ²'s long prompts), or set REACH_BASE_URL."
        )
        raise EndpointUnreachable(msg) from error
    if response.status_code != 200:
        msg = f"the model endpoint {url} answered HTTP {response.status_code}"
        raise EndpointUnreachable(msg)


def register_reach_agent() -> None:
    """Make ``agent_reach`` (and the diagnostic ``primed_user``) known to τ²'s registry."""
    from tau2.registry import registry  # noqa: PLC0415 - the optional group

    from bench.tau2.agent import AGENT_NAME, ReachAgent  # noqa: PLC0415
    from bench.tau2.primed import USER_NAME, PrimedUser  # noqa: PLC0415

    info = registry.get_info()
    if AGENT_NAME not in info.agents:
        registry.register_agent(ReachAgent, AGENT_NAME)
    if USER_NAME not in info.users:
        registry.register_user(PrimedUser, USER_NAME)


def trial_seeds(seed: int, trials: int) -> list[int]:
    """The per-trial seeds τ²'s ``run_tasks`` draws from ``seed``."""
    rng = random.Random(seed)
    return [rng.randint(0, 1000000) for _ in range(trials)]


@dataclass
class RunPlan:
    """What one ``reach bench tau2`` run covers."""

    domain: str
    split: str | None
    tasks: int | None
    trials: int
    agent: Endpoint
    user: Endpoint
    out_dir: Path
    agents: Sequence[str] = AGENTS
    task_ids: Sequence[str] | None = None
    seed: int = DEFAULT_SEED
    max_steps: int = DEFAULT_MAX_STEPS
    max_errors: int = DEFAULT_MAX_ERRORS
    user_impl: str = DEFAULT_USER
    """τ²'s ``user_simulator``, or the diagnostic ``primed_user`` (``bench.tau2.primed``)."""

    def stem(self, agent: str) -> str:
        """The results file's name for ``agent`` (a user other than τ²'s own is named)."""
        user = "" if self.user_impl == DEFAULT_USER else f"-{self.user_impl}"
        return f"{self.domain}-{self.split or 'all'}{user}-{agent}"


def run(plan: RunPlan, say: Callable[[str], None] = print) -> dict[str, Any]:
    """Run ``plan``, resuming from its files; return the side-by-side summary."""
    check_endpoint(plan.agent)
    if plan.user != plan.agent:
        check_endpoint(plan.user)
    register_reach_agent()
    from loguru import logger  # noqa: PLC0415 - τ²'s logger: its per-step debug lines off

    logger.remove()
    logger.add(sys.stderr, level=os.environ.get("REACH_TAU2_LOG", "WARNING"))
    from tau2.data_model.simulation import Results  # noqa: PLC0415
    from tau2.registry import registry  # noqa: PLC0415
    from tau2.run import get_info, get_tasks, run_task  # noqa: PLC0415

    from bench.tau2.agent import ReachAgent  # noqa: PLC0415
    from bench.tau2.causes import tally  # noqa: PLC0415
    from bench.tau2.metrics import (  # noqa: PLC0415
        SimulationFigures,
        figures,
        refreshed,
        summary,
    )

    tasks = get_tasks(plan.domain, plan.split, task_ids=plan.task_ids, num_tasks=plan.tasks)
    env = registry.get_env_constructor(plan.domain)()
    write_tools = {name for name in env.tools.tools if env.tools.tool_type(name) == "write"}
    seeds = trial_seeds(plan.seed, plan.trials)
    plan.out_dir.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {}
    rows: dict[str, list[SimulationFigures]] = {}
    for agent in plan.agents:
        path = plan.out_dir / f"{plan.stem(agent)}.json"
        if path.exists():
            results[agent] = Results.model_validate_json(path.read_text())
        else:
            info = get_info(
                domain=plan.domain,
                agent=agent,
                user=plan.user_impl,
                llm_agent=plan.agent.litellm_name,
                llm_args_agent=plan.agent.llm_args(),
                llm_user=plan.user.litellm_name,
                llm_args_user=plan.user.llm_args(),
                num_trials=plan.trials,
                max_steps=plan.max_steps,
                max_errors=plan.max_errors,
                seed=plan.seed,
            )
            results[agent] = Results(info=info, tasks=tasks, simulations=[])
        extra = plan.out_dir / f"{plan.stem(agent)}.figures.json"
        stored = [
            SimulationFigures(**row)
            for row in (json.loads(extra.read_text()) if extra.exists() else [])
        ]
        # read again from the trajectories, so a resumed run counts with today's rules
        by_id = {task.id: task for task in tasks}
        sims = {(str(s.task_id), s.trial): s for s in results[agent].simulations}
        rows[agent] = [
            refreshed(
                row, figures(sims[key], by_id[row.task_id], write_tools.__contains__, row.trial)
            )
            if (key := (row.task_id, row.trial)) in sims
            and row.task_id in by_id
            and sims[key].messages
            else row
            for row in stored
        ]
    total = len(tasks) * plan.trials * len(plan.agents)
    done = sum(len(r.simulations) for r in results.values())
    say(f"τ² {plan.domain}/{plan.split}: {len(tasks)} tasks × {plan.trials} trials × "
        f"{len(plan.agents)} agents = {total} simulations; {done} already done")  # fmt: skip
    for trial, seed in enumerate(seeds):
        for task in tasks:
            for agent in plan.agents:
                held = results[agent].simulations
                if any(s.task_id == task.id and s.trial == trial and s.seed == seed for s in held):
                    continue
                started = time.monotonic()
                ReachAgent.instances.clear()
                try:
                    simulation = run_task(
                        domain=plan.domain,
                        task=task,
                        agent=agent,
                        user=plan.user_impl,
                        llm_agent=plan.agent.litellm_name,
                        llm_args_agent={**plan.agent.llm_args(), "num_retries": 1},
                        llm_user=plan.user.litellm_name,
                        llm_args_user={**plan.user.llm_args(), "num_retries": 1},
                        max_steps=plan.max_steps,
                        max_errors=plan.max_errors,
                        seed=seed,
                    )
                except Exception as error:  # noqa: BLE001 - scored 0, said, the run goes on
                    if isinstance(error, EndpointUnreachable | KeyboardInterrupt):
                        raise
                    say(f"  {agent} task {task.id}: the simulation failed: {error!s:.300}")
                    simulation = _failed(task.id, trial, seed, str(error), started)
                simulation.trial = trial
                row = figures(simulation, task, write_tools.__contains__, trial)
                if ReachAgent.instances:
                    _add_reach_counts(row, ReachAgent.instances[-1])
                held.append(simulation)
                rows[agent].append(row)
                _save(plan, agent, results[agent], rows[agent])
                done += 1
                say(
                    _progress(
                        done, total, agent, task.id, trial, row, rows, time.monotonic() - started
                    )
                )
    table = {agent: summary(rows[agent], plan.trials) for agent in plan.agents}
    for agent in plan.agents:
        table[agent]["failures_by_cause"] = tally(results[agent].simulations, rows[agent])
    return {
        "domain": plan.domain,
        "split": plan.split,
        "tasks": [t.id for t in tasks],
        "trials": plan.trials,
        "seed": plan.seed,
        "max_steps": plan.max_steps,
        "agent_model": plan.agent.model,
        "user_model": plan.user.model,
        "user": plan.user_impl,
        "agents": table,
    }


def _failed(task_id: str, trial: int, seed: int, error: str, started: float) -> Any:
    """A simulation that raised (a prompt over the context, a dead endpoint): reward 0."""
    from tau2.data_model.simulation import (  # noqa: PLC0415
        RewardInfo,
        SimulationRun,
        TerminationReason,
    )
    from tau2.utils.utils import get_now  # noqa: PLC0415

    now = get_now()
    return SimulationRun(
        id=f"{task_id}_{trial}_failed",
        task_id=task_id,
        start_time=now,
        end_time=now,
        duration=time.monotonic() - started,
        termination_reason=TerminationReason.AGENT_ERROR,
        messages=[],
        trial=trial,
        seed=seed,
        reward_info=RewardInfo(reward=0.0, info={"error": error[:2000]}),
        skipped=True,
    )


def _add_reach_counts(row: Any, agent: Any) -> None:
    """The graph's own model calls and its executor's refusals, which τ² does not see."""
    agent.audit.close()
    records = [r for r in agent.audit.records if r.get("tool")]
    row.agent_model_calls = agent.usage.calls
    row.agent_prompt_tokens = agent.usage.prompt_tokens
    row.agent_completion_tokens = agent.usage.completion_tokens
    refused = [r for r in records if r.get("error_type") == "validation"]
    row.rejected_by_validation += len(refused)
    row.extra = {
        "executor_calls": len(records),
        "executor_validation_refusals": len(refused),
        "confirmations_asked": sum(1 for r in records if r.get("status") == "pending"),
        "confirmations_rejected": sum(1 for r in records if r.get("status") == "rejected"),
        "largest_prompt_tokens": agent.usage.largest_prompt,
        "commands": [c.get("kind") for t in agent.turns for c in t["commands"]],
    }


def _save(plan: RunPlan, agent: str, results: Any, rows: list[Any]) -> None:
    path = plan.out_dir / f"{plan.stem(agent)}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(results.model_dump_json(indent=1))
    tmp.replace(path)
    extra = plan.out_dir / f"{plan.stem(agent)}.figures.json"
    extra.write_text(json.dumps([r.as_dict() for r in rows], indent=1))


def _progress(
    done: int, total: int, agent: str, task: str, trial: int, row: Any, rows: Any, took: float
) -> str:
    passed = "  ".join(
        f"{name} {sum(r.reward >= 1 for r in got)}/{len(got)}" for name, got in rows.items()
    )
    return (
        f"[{done}/{total}] {agent:<11} task {task} trial {trial + 1}: reward {row.reward:.0f}, "
        f"{row.termination}, {row.writes} writes, {took / 60:.1f} min | passed: {passed}"
    )


__all__ = [
    "AGENTS",
    "Endpoint",
    "EndpointUnreachable",
    "RunPlan",
    "check_endpoint",
    "register_reach_agent",
    "run",
    "trial_seeds",
]
