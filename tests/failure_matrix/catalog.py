"""The catalog the matrix covers, and the conversation that reaches each of its tools."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from eval.case_set import CASES_DIR, Case, load_cases
from eval.harness import USERS
from nodes.services import Services
from scenarios import SCENARIOS
from state import Context
from tools.executor.pipeline import ExecutorSettings
from tools.registry.cards import ToolCard

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
    "search_flights": Route(("6月20号上海到北京有哪些航班",)),
    "send_bulk_notification": Route(
        ("给所有配送中订单的客户发短信：餐品将延迟送达", {"resume": "确认"}), user="u_90001"
    ),
    "export_sales_report": Route(("导出上个月的销售报表",), user="u_80001", today="2024-07-15"),
    "query_job_status": Route(
        ("导出上个月的销售报表", "导出好了吗"), user="u_80001", today="2024-07-15"
    ),
}
"""Tools no evaluation case reaches (background jobs, the order cancellation, the flight
search)."""


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
    cases = [c for c in load_cases(CASES_DIR) if language == "zh" or c.lang == language]
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
