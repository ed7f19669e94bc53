"""Drive evaluation cases through the compiled graph and score them by data and calls.

Each run of a case gets a fresh seeded database, a fresh executor and a fresh graph, so
runs never share state. A case passes when the final database equals the seed state plus
the case's expected changes, the set of tools that reached a backend equals the expected
one, the intent matches, and nothing crashed. The wording of replies is never scored.
"""

from __future__ import annotations

import contextlib
import statistics
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from eval.backends import (
    SEEDS,
    ActionExecutor,
    AuditLog,
    Database,
    ExecutorSettings,
    ToolRegistry,
    UnderstandingFactory,
    eval_graph,
    eval_settings,
    rules_understanding,
    start_weather_server,
)
from eval.bare import BareExecutor
from eval.case_set import Case
from eval.db_state import Mismatch, diff, duplicates, expected_state, snapshot
from eval.faults import FaultInjector
from eval.model_cache import CachingProxy
from eval.truth import Told, named, told_by_class, turn_cause
from state import Context

USERS: dict[str, str] = {
    "u_10001": "customer",
    "u_10002": "customer",
    "u_90001": "agent",
    "u_80001": "analyst",
}
FAST = ExecutorSettings(backoff_initial_s=0.001, backoff_max_s=0.005, backoff_jitter_s=0.001)
Agent = Literal["agent", "bare"]


# ---- one run ------------------------------------------------------------------------------


@dataclass
class RunResult:
    """The outcome of one case in one trial for one agent."""

    case: str
    scenario: str
    agent: str
    trial: int
    passed: bool
    cause: str | None
    intent: str | None
    reached: list[str]
    db_diff: dict[str, Mismatch]
    """State key → what the database held and what the case expected, where they differ."""
    duplicates: int
    invalid_calls: int
    permission_violations: int
    handoff: bool
    proposed_calls: int
    intercepted_calls: int
    latencies_ms: list[float]
    faults: list[str]
    error: str | None = None
    replies: list[str] = field(default_factory=list)
    told: list[tuple[str, bool]] = field(default_factory=list)
    """Per turn decided by a failure: its class, and whether the reply named it (``eval.truth``)."""
    expected_intent: str | None = None
    """The case's intent, when it states one (scored for ``intent_accuracy``)."""
    model_calls: int = 0
    """Model requests this run made through the evaluation's cache proxy (0 without one)."""
    cached_calls: int = 0
    """Of those, answered from the cache (not by the model)."""
    cached_turns: list[bool] = field(default_factory=list)
    """Per turn: was any model answer of it replayed? Such turns' latency is not measured."""


def run_case(
    case: Case,
    *,
    agent: Agent = "agent",
    understanding: UnderstandingFactory = rules_understanding,
    fault_rate: float = 0.0,
    trial: int = 0,
    seed: int = 0,
    workdir: Path,
    weather_url: str,
    model_proxy: CachingProxy | None = None,
) -> RunResult:
    """Drive ``case`` once on a fresh database and return its scored result.

    With ``model_proxy`` the run's model calls go through it (``base_url`` of the run's
    settings), and each turn records whether any of its answers came from the cache.
    """
    db = Database(workdir / f"{case.id}-{agent}-{trial}-{uuid.uuid4().hex[:6]}.db", seeds=SEEDS)
    seed_state = snapshot(db)
    injector = FaultInjector(
        rate=fault_rate, seed=seed, case=case.id, trial=trial, pinned=dict(case.backend)
    )
    executors: list[ActionExecutor] = []

    def executor_factory(registry: ToolRegistry) -> ActionExecutor:
        wrapped = injector.wrap(registry)
        executor: ActionExecutor
        if agent == "bare":
            executor = BareExecutor(wrapped)
        else:
            executor = ActionExecutor(wrapped, settings=FAST, audit=AuditLog())
        executors.append(executor)
        return executor

    app = eval_graph(
        database=db,
        executor_factory=executor_factory,
        understanding=understanding,
        settings=eval_settings(
            today=case.today,
            weather_url=weather_url,
            base_url=model_proxy.base_url if model_proxy is not None else None,
        ),
        checkpointer=InMemorySaver(),
    )
    config: RunnableConfig = {"configurable": {"thread_id": f"eval-{case.id}-{trial}"}}
    context = Context(user_id=case.user, user_role=USERS.get(case.user, "customer"))
    latencies: list[float] = []
    visited: list[str] = []
    replies: list[str] = []
    told: list[tuple[str, bool]] = []
    error = None
    values: Mapping[str, Any] = {}  # the graph's state values, as LangGraph hands them
    cached_turns: list[bool] = []
    stats = model_proxy.stats if model_proxy is not None else None
    first_hits, first_misses = (stats.hits, stats.misses) if stats else (0, 0)
    try:
        for turn in case.turns:
            waiting = bool(app.get_state(config).next)
            if isinstance(turn, dict) and "resume" in turn:
                if not waiting:
                    continue  # nothing to answer: the flow did not ask
                payload: Any = Command(resume=turn["resume"])
            elif waiting and isinstance(turn, str):
                payload = Command(resume=turn)  # the user's words answer the question
            else:
                payload = {"messages": [("user", str(turn))]}
            hits_before = stats.hits if stats else 0
            started = time.perf_counter()
            turn_nodes: list[str] = []
            for chunk in app.stream(payload, config, context=context, stream_mode="updates"):
                turn_nodes.extend(key for key in chunk if key != "__interrupt__")
            visited.extend(turn_nodes)
            latencies.append((time.perf_counter() - started) * 1000)
            cached_turns.append(bool(stats and stats.hits > hits_before))
            values = app.get_state(config).values
            messages = values.get("messages") or []
            if messages:
                replies.append(str(messages[-1].content))
            cause = None if app.get_state(config).next else turn_cause(values, turn_nodes)
            if cause is not None and messages:
                told.append((cause, named(cause, str(messages[-1].content), case.lang)))
    except Exception as exc:  # noqa: BLE001 - a crash is a scored failure, not an abort
        error = f"{type(exc).__name__}: {exc}"
    finally:
        for executor in executors:
            with contextlib.suppress(Exception):
                executor.audit.flush(1.0)
    actual = snapshot(db)
    want = expected_state(seed_state, case.db)
    reached = sorted({call.tool for call in injector.calls})
    db_diff = diff(actual, want)
    dupes = duplicates(actual, want)
    invalid = sum(1 for call in injector.calls if not call.valid)
    violations = sum(1 for call in injector.calls if not call.permitted)
    handoff = "handoff" in visited
    proposed, intercepted = _intercepts(executors)
    intent = values.get("intent")
    calls_ok = set(reached) == set(case.calls)
    intent_ok = case.intent is None or intent == case.intent
    passed = error is None and not db_diff and calls_ok and intent_ok
    cause = None
    if not passed:
        if error is not None:
            cause = "crash"
        elif violations:
            cause = "permission violation"
        elif dupes:
            cause = "duplicate side effect"
        elif not intent_ok:
            cause = "wrong intent"
        elif db_diff and handoff:
            cause = "handed off"
        elif db_diff:
            cause = "wrong database state"
        else:
            cause = "wrong tool calls"
    for executor in executors:
        _close(executor)
    db.close()
    return RunResult(
        case=case.id,
        scenario=case.scenario,
        agent=agent,
        trial=trial,
        passed=passed,
        cause=cause,
        intent=intent,
        reached=reached,
        db_diff=db_diff,
        duplicates=dupes,
        invalid_calls=invalid,
        permission_violations=violations,
        handoff=handoff,
        proposed_calls=proposed,
        intercepted_calls=intercepted,
        latencies_ms=latencies,
        faults=[f"{c.tool}:{c.fault}" for c in injector.calls if c.fault],
        error=error,
        replies=replies,
        told=told,
        expected_intent=case.intent,
        model_calls=(stats.hits + stats.misses - first_hits - first_misses) if stats else 0,
        cached_calls=(stats.hits - first_hits) if stats else 0,
        cached_turns=cached_turns,
    )


def _intercepts(executors: Sequence[ActionExecutor]) -> tuple[int, int]:
    """Count proposed calls and those the execution layer refused before any backend."""
    proposed = intercepted = 0
    for executor in executors:
        if isinstance(executor, BareExecutor):
            proposed += executor.proposed
            continue
        for record in executor.audit.records:
            proposed += 1
            flags = record.get("flags") or []
            if record.get("error_type") in ("validation", "permission_denied") or (
                isinstance(flags, list) and "owner_mismatch" in flags
            ):
                intercepted += 1
    return proposed, intercepted


def _close(executor: ActionExecutor) -> None:
    with contextlib.suppress(Exception):
        executor.audit._queue.put(None)  # noqa: SLF001 - stop the audit thread of this run
    with contextlib.suppress(Exception):
        executor._pool.shutdown(wait=False)  # noqa: SLF001 - stop this run's worker pool


# ---- a whole evaluation -------------------------------------------------------------------


class ModelCacheInfo(TypedDict):
    """The model cache an evaluation used: its file, upstream and counts."""

    file: str
    upstream: str
    hits: int
    misses: int
    stored: int
    not_stored: int
    upstream_statuses: dict[int, int]
    """HTTP status → responses of the model server."""
    slower_than_client_timeout: int


class AgentSummary(TypedDict):
    """One agent's headline figures over an evaluation's runs (``summarize``)."""

    runs: int
    cases: int
    task_success: float
    intent_accuracy: float
    pass_k: float
    k: int
    duplicate_side_effects: int
    invalid_calls_reaching_backend: int
    permission_violations: int
    human_interventions: int
    validation_intercept_rate: float
    crashes: int
    latency_mean_ms: float
    latency_p99_ms: float
    latency_turns: int
    turns: int
    model_calls: int
    model_calls_cached: int
    causes: dict[str, int]
    told_by_class: dict[str, Told]


@dataclass
class Evaluation:
    """Every run of an evaluation, with the settings that produced it."""

    mode: str
    fault_rate: float
    trials: int
    seed: int
    runs: list[RunResult]
    cache: ModelCacheInfo | None = None
    """The model cache's file, upstream and counts, when one was used."""
    interrupted: bool = False
    """Stopped by Ctrl-C: ``trials`` counts only the trials that finished."""

    def summary(self, agent: Agent) -> AgentSummary:
        """Return the headline figures of one agent."""
        return summarize([run for run in self.runs if run.agent == agent], self.trials)


def summarize(runs: Sequence[RunResult], trials: int) -> AgentSummary:
    """Aggregate runs: success, pass^k, side effects, violations, interventions, latency."""
    by_case: dict[str, list[bool]] = {}
    for run in runs:
        by_case.setdefault(run.case, []).append(run.passed)
    latencies = sorted(
        ms
        for run in runs
        for ms, cached in zip(
            run.latencies_ms,
            run.cached_turns or [False] * len(run.latencies_ms),
            strict=False,
        )
        if not cached
    )
    judged = [run for run in runs if run.expected_intent is not None]
    proposed = sum(run.proposed_calls for run in runs)
    intercepted = sum(run.intercepted_calls for run in runs)
    return {
        "runs": len(runs),
        "cases": len(by_case),
        "task_success": sum(run.passed for run in runs) / len(runs) if runs else 0.0,
        "intent_accuracy": (
            sum(run.intent == run.expected_intent for run in judged) / len(judged)
            if judged
            else 0.0
        ),
        "pass_k": (sum(all(v) for v in by_case.values()) / len(by_case)) if by_case else 0.0,
        "k": trials,
        "duplicate_side_effects": sum(run.duplicates for run in runs),
        "invalid_calls_reaching_backend": sum(run.invalid_calls for run in runs),
        "permission_violations": sum(run.permission_violations for run in runs),
        "human_interventions": sum(run.handoff for run in runs),
        "validation_intercept_rate": intercepted / proposed if proposed else 0.0,
        "crashes": sum(run.error is not None for run in runs),
        "latency_mean_ms": statistics.fmean(latencies) if latencies else 0.0,
        "latency_p99_ms": _percentile(latencies, 0.99),
        "latency_turns": len(latencies),
        "turns": sum(len(run.latencies_ms) for run in runs),
        "model_calls": sum(run.model_calls for run in runs),
        "model_calls_cached": sum(run.cached_calls for run in runs),
        "causes": dict(Counter(run.cause for run in runs if run.cause)),
        "told_by_class": told_by_class(pair for run in runs for pair in run.told),
    }


def _percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    index = min(len(values) - 1, max(0, round(q * len(values) + 0.5) - 1))
    return values[index]


def run_evaluation(
    cases: Sequence[Case],
    *,
    mode: str = "rules",
    understanding: UnderstandingFactory = rules_understanding,
    fault_rate: float = 0.0,
    trials: int = 1,
    seed: int = 0,
    agents: Sequence[Agent] = ("agent", "bare"),
    progress: Callable[[RunResult], None] | None = None,
    model_proxy: CachingProxy | None = None,
) -> Evaluation:
    """Run every case ``trials`` times for each agent, on the same seeded faults.

    ``model_proxy`` (started by the caller) puts a response cache in front of the model.
    """
    runs: list[RunResult] = []
    completed = trials
    server, url = start_weather_server()
    try:
        with tempfile.TemporaryDirectory(prefix="reach-eval-") as tmp:
            for trial in range(trials):
                completed = trial
                for case in cases:
                    for agent in agents:
                        run = run_case(
                            case,
                            agent=agent,
                            understanding=understanding,
                            fault_rate=fault_rate,
                            trial=trial,
                            seed=seed,
                            workdir=Path(tmp),
                            weather_url=url,
                            model_proxy=model_proxy,
                        )
                        runs.append(run)
                        if progress is not None:
                            progress(run)
            completed = trials
    except KeyboardInterrupt:
        # Ctrl-C (or SIGINT at a time budget): keep the trials that finished, so pass^k
        # stays defined over the same k for every case; the partial trial is dropped.
        runs = [run for run in runs if run.trial < completed]
    finally:
        shutdown = getattr(server, "shutdown", None)
        if callable(shutdown):
            shutdown()
    cache: ModelCacheInfo | None = None
    if model_proxy is not None:
        cache = {
            "file": str(model_proxy.cache.path),
            "upstream": model_proxy.upstream,
            "hits": model_proxy.stats.hits,
            "misses": model_proxy.stats.misses,
            "stored": model_proxy.stats.stored,
            "not_stored": model_proxy.stats.not_stored,
            "upstream_statuses": dict(model_proxy.stats.statuses),
            "slower_than_client_timeout": sum(
                s > model_proxy.client_timeout_s for s in model_proxy.stats.miss_seconds
            ),
        }
    return Evaluation(
        mode=mode,
        fault_rate=fault_rate,
        trials=completed,
        seed=seed,
        runs=runs,
        cache=cache,
        interrupted=completed < trials,
    )
