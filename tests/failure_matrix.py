"""The failure matrix: every tool of every shipped scenario × every failure the executor makes.

Each row drives a real conversation (the compiled graph, in memory, on a fresh seeded
database) that reaches one tool, with one failure injected through the executor's own
seams: the lifecycle (disabled, retired, past its sunset), the card (its permission, its
schema, its owner, its rate limit, its deadline), the handler (a ``ToolError`` subclass,
a result held for review, a call that never answers), the breaker, the user's answer to a
confirmation. It then checks what the issue asks of every failure:

- the reply names the true class, in the user's language (``tools.failures.said``), and no
  other class (someone else's record reads exactly like a missing one);
- where the class says nothing ran, nothing did: the tool's real handler was never called
  and no business write of it was ledgered;
- the next turn works: with the failure gone, the same request is answered, no class named.

Rows come from the catalog: every card of every scenario (sub-agents' included) × the
faults that apply to it (``Fault.applies`` reads the card), so a new tool brings its rows.
The conversation that reaches a tool is the first evaluation case (``eval/cases``) that
calls it, or one of ``EXTRA_ROUTES``; a tool with neither fails ``missing_routes``.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import BaseModel, model_validator

from eval.backends import SEEDS, eval_settings
from eval.harness import USERS, Case, load_cases
from graph.builder import build_graph
from nodes.services import MAIN_AGENT, Services
from scenarios import SCENARIOS
from state import Context
from tools.audit import AuditLog
from tools.db import Database
from tools.errors import (
    CompensatedError,
    ConflictError,
    PermanentToolError,
    ResourceNotFoundError,
    ToolError,
    TransientToolError,
    UserFixableError,
)
from tools.executor import ActionExecutor, ExecutorSettings
from tools.failures import MEANINGS, Outcome, classify, said
from tools.guards import CircuitBreakers, RateLimiter
from tools.job_bodies import JOBS
from tools.jobs import JobRunner, SQLiteJobStore
from tools.lifecycle import ToolLifecycle
from tools.registry import ToolCard, ToolRegistry

FAST = ExecutorSettings(backoff_initial_s=0.001, backoff_max_s=0.002, backoff_jitter_s=0.001)
DEADLINE_S = 0.05
"""The deadline a ``timeout`` row gives its tool; the handler never answers within it."""
CATALOG = Services(scenarios=SCENARIOS).catalog
CARDS: dict[str, ToolCard] = CATALOG.cards_by_name()
FINAL_TOOLS = frozenset(task.tool for task in CATALOG.tasks.values())
"""Tools whose result is a task's answer (a review or a compensation can end a task)."""
NOTHING_DONE = ("没有执行任何操作", "nothing was done", "没有扣款", "未提交")
"""What a reply may say only when the executor knows nothing ran."""

# ---- routes: one conversation that reaches each tool ---------------------------------------


@dataclass(frozen=True)
class Route:
    """A conversation that reaches a tool, and what else it needs to get there."""

    turns: tuple[Any, ...]
    """User messages; ``{"resume": answer}`` answers a confirmation."""
    user: str = "u_10001"
    language: str = "zh"
    today: str = "2024-06-18"
    also: Mapping[str, str] = field(default_factory=dict)
    """Other tools failing on the way (``tool → down``): the only way to reach a cleanup."""
    case: str = ""
    """The evaluation case it comes from."""

    @property
    def context(self) -> Context:
        """The trusted caller."""
        return Context(user_id=self.user, user_role=USERS.get(self.user, "customer"))


EXTRA_ROUTES: dict[str, Route] = {
    "cancel_order": Route(("帮我取消订单 OD-20240618-001", {"resume": "确认"})),
    "send_bulk_notification": Route(
        ("给所有配送中订单的客户发短信：餐品将延迟送达", {"resume": "确认"}), user="u_90001"
    ),
    "export_sales_report": Route(("导出上个月的销售报表",), user="u_80001", today="2024-07-15"),
    "query_job_status": Route(
        ("导出上个月的销售报表", "导出好了吗"), user="u_80001", today="2024-07-15"
    ),
}
"""Tools no evaluation case reaches (background jobs, and the order cancellation)."""


def _route(case: Case) -> Route:
    return Route(
        turns=case.turns,
        user=case.user,
        language=case.lang,
        today=case.today,
        also={tool: kind for tool, kind in case.backend.items() if kind == "down"},
        case=case.id,
    )


@functools.cache
def routes(language: str = "zh") -> dict[str, Route]:
    """Return a route to every tool that has one: a typical case first, then the shortest.

    In ``en``, only tools an English case reaches have one.
    """
    cases = [c for c in load_cases() if language == "zh" or c.lang == language]
    found: dict[str, Route] = {}
    for name in CARDS:
        fitting = [
            c
            for c in cases
            if name in c.calls
            and name not in c.backend
            and all(kind == "down" for kind in c.backend.values())
        ]
        fitting.sort(key=lambda c: (c.lang != language, "typical" not in c.tags, len(c.turns)))
        if fitting:
            found[name] = _route(fitting[0])
        elif name in EXTRA_ROUTES and language == "zh":
            found[name] = EXTRA_ROUTES[name]
    return found


def missing_routes() -> list[str]:
    """Tools of the catalog no conversation reaches: each needs a case or an extra route."""
    known = routes()
    return [name for name in CARDS if name not in known]


# ---- faults: what each row injects, through which seam --------------------------------------


class _Blocked:
    """A handler that never answers within its deadline, and never writes afterwards."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def __call__(self, args: Any, ctx: Any) -> Any:
        self.release.wait(30)
        msg = "matrix: the call was abandoned at its deadline"
        raise TransientToolError(msg)


def _raising(error: type[ToolError], **details: Any) -> Callable[[Any, Any], Any]:
    def handler(args: Any, ctx: Any) -> Any:
        raise error(f"matrix: {error.__name__}", details=details)

    return handler


def _held(args: Any, ctx: Any) -> dict[str, Any]:
    return {"status": "pending_review", "review_id": "RV-MATRIX-0001"}


def _refusing(model: type[BaseModel]) -> type[BaseModel]:
    """The card's own schema, refusing every value (the executor's validation seam)."""

    class Refusing(model):  # type: ignore[valid-type, misc]
        @model_validator(mode="after")
        def _refuse(self) -> Any:
            msg = "matrix: this value is refused"
            raise ValueError(msg)

    Refusing.__name__ = model.__name__
    return Refusing


@dataclass(frozen=True)
class Fault:
    """One way a call fails, and the class the user must be told."""

    name: str
    card: Callable[[ToolCard], dict[str, Any]] = lambda card: {}
    """Card fields to replace (handler, permission, schema, deadline ...)."""
    applies: Callable[[ToolCard], bool] = lambda card: True
    expect: Callable[[ToolCard], Outcome] | None = None
    lifecycle: str | None = None
    """``disabled``, ``retired`` or ``sunset``."""
    breaker_open: bool = False
    rate_limited: bool = False
    declines: bool = False
    """The user answers no to the tool's confirmation."""

    def expected(self, card: ToolCard) -> Outcome:
        """The class the reply must name."""
        assert self.expect is not None
        return self.expect(card)


def _is(outcome: Outcome) -> Callable[[ToolCard], Outcome]:
    return lambda card: outcome


def _final_write(card: ToolCard) -> bool:
    return not card.idempotent and card.name in FINAL_TOOLS


FAULTS: tuple[Fault, ...] = (
    Fault(
        "not_found", lambda c: {"handler": _raising(ResourceNotFoundError)}, expect=_is("not_found")
    ),
    Fault(
        "not_yours",
        lambda c: {"owner_of": lambda args, ctx: "u_someone_else"},
        applies=lambda c: c.owner_of is not None,
        expect=_is("not_found"),
    ),
    Fault("invalid", lambda c: {"parameters": _refusing(c.parameters)}, expect=_is("invalid")),
    Fault("not_permitted", lambda c: {"permission": "matrix:nobody"}, expect=_is("not_permitted")),
    Fault(
        "refused",
        lambda c: {"handler": _raising(UserFixableError, reason="matrix")},
        expect=_is("refused"),
    ),
    Fault("conflict", lambda c: {"handler": _raising(ConflictError)}, expect=_is("conflict")),
    Fault("disabled", lifecycle="disabled", expect=_is("disabled")),
    Fault("retired", lifecycle="retired", expect=_is("disabled")),
    Fault("sunset", lifecycle="sunset", expect=_is("sunset")),
    Fault(
        "unavailable",
        lambda c: {"handler": _raising(PermanentToolError)},
        expect=_is("unavailable"),
    ),
    Fault(
        "transient", lambda c: {"handler": _raising(TransientToolError)}, expect=_is("unavailable")
    ),
    Fault("breaker_open", breaker_open=True, expect=_is("unavailable")),
    Fault(
        "timeout",
        lambda c: {"handler": _Blocked(), "timeout_s": DEADLINE_S},
        expect=lambda c: "timeout" if c.idempotent else "unknown",
    ),
    Fault("rate_limited", rate_limited=True, expect=_is("rate_limited")),
    Fault(
        "compensated",
        lambda c: {"handler": _raising(CompensatedError)},
        applies=_final_write,
        expect=_is("compensated"),
    ),
    Fault(
        "pending_review",
        lambda c: {"handler": _held, "result_model": None},
        applies=_final_write,
        expect=_is("pending_review"),
    ),
    Fault("declined", declines=True, applies=lambda c: c.risk == "high", expect=_is("declined")),
)


def rows() -> list[tuple[str, str, str]]:
    """Every (tool, fault, language) of the catalog: each fault that applies to each tool.

    Every other fault of a tool an English case reaches is tried in English, so both
    languages are proven on every class without running every row twice.
    """
    english = routes("en")
    found = []
    for tool, card in CARDS.items():
        faults = [fault for fault in FAULTS if fault.applies(card)]
        for index, fault in enumerate(faults):
            found.append((tool, fault.name, "en" if tool in english and index % 2 else "zh"))
    return found


FAULT_BY_NAME = {fault.name: fault for fault in FAULTS}

# ---- one row --------------------------------------------------------------------------------

RATE_RULE = "1/hour"


@dataclass
class Row:
    """A built conversation with its fault applied, and what it observed."""

    tool: str
    fault: Fault
    route: Route
    db: Database
    services: Services
    app: Any
    executors: list[ActionExecutor]
    calls: list[str] = field(default_factory=list)
    """Each time the tool's real handler ran."""
    restore: list[Callable[[], None]] = field(default_factory=list)
    """Takes the fault away (the next turn must then work)."""
    teardown: list[Callable[[], None]] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)
    reached_at: int | None = None
    thread: str = "matrix"

    def config(self) -> dict[str, Any]:
        """The thread's config."""
        return {"configurable": {"thread_id": self.thread}}


def build_row(
    tool: str, fault_name: str, workdir: Path, weather_url: str, language: str = "zh"
) -> Row:
    """Build the graph of one row on a fresh database, the fault applied before any turn."""
    fault = FAULT_BY_NAME[fault_name]
    route = routes(language)[tool]
    workdir.mkdir(parents=True, exist_ok=True)
    db = Database(workdir / "business.db", seeds=SEEDS)
    settings = eval_settings(today=route.today, weather_url=weather_url).model_copy(
        update={"data_dir": workdir}
    )
    executors: list[ActionExecutor] = []
    limiter = RateLimiter()
    breakers = CircuitBreakers(fail_max=1000)  # only the breaker row opens one

    def executor_factory(registry: ToolRegistry) -> ActionExecutor:
        executor = ActionExecutor(
            registry, settings=FAST, audit=AuditLog(), rate_limiter=limiter, breakers=breakers
        )
        executors.append(executor)
        return executor

    services = Services(
        scenarios=SCENARIOS,
        settings=settings,
        database_factory=lambda: db,
        executor_factory=executor_factory,
    )
    app = build_graph(checkpointer=InMemorySaver(), services=services)
    row = Row(tool, fault, route, db, services, app, executors)
    today = date.fromisoformat(route.today)
    for agent in (MAIN_AGENT, *CATALOG.agent_cards):
        executor = services.executor_for(agent)
        registry = executor.registry
        registry.lifecycle = ToolLifecycle(today=lambda: today)
        for name, kind in route.also.items():
            if registry.get(name) is not None and kind == "down":
                _replace(registry, name, handler=_raising(PermanentToolError))
        if registry.get(tool) is not None:
            _inject(row, registry, executor, limiter, breakers, today)
    if tool in ("export_sales_report", "query_job_status", "send_bulk_notification"):
        _hold_jobs(row, workdir, settings)
    return row


def _replace(registry: ToolRegistry, name: str, **changes: Any) -> ToolCard:
    card = registry.get(name)
    assert card is not None, name
    registry.register(dataclasses.replace(card, **changes), replace_existing=True)
    return card


def _inject(
    row: Row,
    registry: ToolRegistry,
    executor: ActionExecutor,
    limiter: RateLimiter,
    breakers: CircuitBreakers,
    today: date,
) -> None:
    fault, tool = row.fault, row.tool
    original = registry.get(tool)
    assert original is not None
    real = original.handler

    def spied(args: Any, ctx: Any) -> Any:
        row.calls.append(tool)
        return real(args, ctx)

    changes: dict[str, Any] = {"handler": spied, **fault.card(original)}
    if fault.rate_limited:
        changes["rate_limit"] = RATE_RULE
        limiter.hit(RATE_RULE, row.route.user, tool)  # the user's one call this hour is used
    _replace(registry, tool, **changes)
    row.restore.append(
        lambda: registry.register(
            dataclasses.replace(original, handler=spied), replace_existing=True
        )
    )
    for value in changes.values():
        if isinstance(value, _Blocked):
            row.restore.append(value.release.set)
    if fault.breaker_open:
        breaker = breakers.get(tool)
        for _ in range(breakers.fail_max):
            breaker.record_failure()
        row.restore.append(breaker.record_success)
    if fault.lifecycle is not None:
        lifecycle = registry.lifecycle
        if fault.lifecycle == "retired":
            lifecycle.set_status(tool, "retired", version=original.version)
        elif fault.lifecycle == "sunset":
            lifecycle.set_status(tool, "deprecated", sunset=today - timedelta(days=17))
        else:
            lifecycle.set_status(tool, "disabled")
        version = original.version if fault.lifecycle == "retired" else None
        row.restore.append(lambda: lifecycle.set_status(tool, "active", version=version))


def _hold_jobs(row: Row, workdir: Path, settings: Any) -> None:
    """Give the row a job runner whose jobs stay running until the row ends."""
    gate = threading.Event()
    runner = JobRunner(SQLiteJobStore(workdir / "jobs.db"), resources=row.db)
    JOBS.install(row.db, runner, settings)
    for kind, body in list(runner.bodies.items()):

        def gated(params: dict[str, Any], ctx: Any, body: Any = body) -> Any:
            gate.wait(30)
            return body(params, ctx)

        runner.register(kind, gated)

    def stop() -> None:
        JOBS.forget(row.db)
        gate.set()
        runner.close()

    row.teardown.append(stop)


# ---- driving a row ---------------------------------------------------------------------------


def _audited(row: Row) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for executor in row.executors:
        executor.audit.flush(2.0)
        records.extend(
            r for r in executor.audit.records if "tool" in r and "status" in r and "event" not in r
        )
    return records


def _ledgered(row: Row) -> int:
    found = row.db.query("SELECT COUNT(*) AS n FROM business_writes WHERE tool = ?", (row.tool,))
    return int(found[0]["n"])


def _answer(row: Row, turn: Any, *, decline: bool) -> Any:
    """What to send for ``turn``: an answer while a confirmation waits, else a message."""
    state = row.app.get_state(row.config())
    waiting = bool(state.next)
    if isinstance(turn, dict) and "resume" in turn:
        if not waiting:
            return None  # the flow did not ask (the failure came first)
        names = {
            request.get("name")
            for interrupt in state.interrupts
            for request in (interrupt.value or {}).get("action_requests") or []
        }
        if decline and row.tool in names:
            return Command(resume="取消" if row.route.language == "zh" else "no")
        return Command(resume=turn["resume"])
    if waiting:
        return Command(resume=str(turn))
    return {"messages": [("user", str(turn))]}


def converse(row: Row, turns: tuple[Any, ...], *, decline: bool) -> tuple[str, int | None]:
    """Play ``turns``; return the answer of the turn that reached the tool, and its index."""
    reached: int | None = None
    seen = len([r for r in _audited(row) if r["tool"] == row.tool])
    reply = last = ""
    for index, turn in enumerate(turns):
        payload = _answer(row, turn, decline=decline)
        if payload is None:
            continue
        out = row.app.invoke(payload, row.config(), context=row.route.context)
        messages = out.get("messages") or []
        last = str(messages[-1].content) if messages else ""
        row.replies.append(last)
        now = len([r for r in _audited(row) if r["tool"] == row.tool])
        if reached is None and now > seen:
            reached, reply = index, last  # the answer to the turn that reached the tool
    return (reply if reached is not None else last), reached


@dataclass
class Verdict:
    """What one row found; ``problems`` is empty when the row passed."""

    tool: str
    fault: str
    expected: Outcome
    language: str
    reply: str
    named: set[Outcome]
    problems: list[str]
    next_reply: str = ""


def run_row(
    tool: str, fault_name: str, workdir: Path, weather_url: str, language: str = "zh"
) -> Verdict:
    """Build, drive and check one row of the matrix."""
    row = build_row(tool, fault_name, workdir, weather_url, language)
    try:
        return _check(row)
    except Exception as exc:  # noqa: BLE001 - a crash is the row's finding, not an abort
        problem = f"crashed: {type(exc).__name__}: {exc}"
        expected = row.fault.expected(CARDS[tool])
        return Verdict(tool, fault_name, expected, row.route.language, "", set(), [problem])
    finally:
        for undo in [*reversed(row.restore), *row.teardown]:
            undo()
        row.db.close()


def _check(row: Row) -> Verdict:
    card = CARDS[row.tool]
    expected = row.fault.expected(card)
    meaning = MEANINGS[expected]
    language = row.route.language
    problems: list[str] = []
    ledgered = _ledgered(row)
    reply, reached = converse(row, row.route.turns, decline=row.fault.declines)
    named = said(reply, language)
    allowed = {expected, *_also_classes(row)}
    if reached is None:
        problems.append("the conversation never reached the tool")
    if row.app.get_state(row.config()).next:
        problems.append("the conversation was left waiting")
    if expected != "refused" and expected not in named:
        problems.append(f"the reply does not name {expected}")
    if named - allowed:
        problems.append(f"the reply names {sorted(named - allowed)} besides {expected}")
    results = [r for r in _state_results(row) if r.get("tool") == row.tool]
    if results and classify(results[-1]) != expected:
        problems.append(f"the executor said {classify(results[-1])}, not {expected}")
    if meaning.effect == "none" and card.idempotent is False and row.calls:
        problems.append(f"the real handler ran {len(row.calls)} time(s)")
    if meaning.effect == "none" and _ledgered(row) != ledgered:
        problems.append("a business write was ledgered")
    if meaning.effect != "none" and any(phrase in reply for phrase in NOTHING_DONE):
        problems.append("the reply says nothing was done, which the executor does not know")
    next_reply = ""
    if reached is not None:
        audited = [r for r in _audited(row) if r["tool"] == row.tool]
        failed = str(audited[-1]["request_id"]) if audited else ""
        for undo in reversed(row.restore):
            undo()
        row.restore.clear()
        start = max(i for i in range(reached + 1) if isinstance(row.route.turns[i], str))
        next_reply, again = converse(row, row.route.turns[start:], decline=False)
        problems += _next_turn(row, expected, failed, next_reply, again is not None)
    return Verdict(row.tool, row.fault.name, expected, language, reply, named, problems, next_reply)


def _next_turn(row: Row, before: Outcome, failed: str, reply: str, reached: bool) -> list[str]:
    """The same request again, the failure gone: it runs and succeeds, no class named.

    The same request asked in the same words is the same request id: a final refusal is
    answered from its record, and an outcome that is still unknown is not repeated (that is
    what "please don't repeat it" protects). Then the reply must say the same class again.
    """
    problems = []
    if row.app.get_state(row.config()).next:
        problems.append("the next turn was left waiting")
    latest = [r for r in _audited(row) if r["tool"] == row.tool]
    same = bool(latest) and latest[-1].get("request_id") == failed
    recorded = bool(latest) and (latest[-1].get("duplicated") or latest[-1]["status"] == "unknown")
    named = said(reply, row.route.language) - _also_classes(row)
    if reached and same and recorded:
        if before != "refused" and before not in named:
            problems.append(f"the same request now reads {sorted(named)}, not {before}")
        return problems
    if named:
        problems.append(f"the next turn still names {sorted(named)}: {reply!r}")
    if reached and latest and latest[-1].get("status") != "success":
        problems.append(f"the next turn's call ended {latest[-1].get('status')}")
    return problems


def _state_results(row: Row) -> list[dict[str, Any]]:
    values = row.app.get_state(row.config()).values
    return list(values.get("tool_results") or [])


def _also_classes(row: Row) -> set[Outcome]:
    return {"unavailable"} if row.route.also else set()
