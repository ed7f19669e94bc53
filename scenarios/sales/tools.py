"""Read-only questions about sales: a question becomes SQL, the SQL is proven safe, then run.

Offline, rules turn the question into SQL. Whatever produced it, the SQL must pass
``security.sql_guard`` (one SELECT over ``sales``, no hidden column such as cost price), and it
runs on a read-only connection, with parameters and a row limit.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, NotRequired, TypedDict, cast

from pydantic import BaseModel, ConfigDict, Field

from config.limits import JsonObject
from scenarios.dates import EN_MONTHS
from security import readonly_sql
from security.sql_guard import SqlPolicy
from storage.db import Database
from tools.executor.errors import PermanentToolError, UserFixableError
from tools.registry.cards import ToolCard
from tools.registry.context import ToolContext

SALES_POLICY = SqlPolicy(
    tables=frozenset({"sales"}),
    columns=frozenset({"sale_id", "product", "month", "day", "quantity", "amount_cents"}),
    max_rows=50,
    hidden_columns=frozenset({"cost_cents"}),
)


class SalesQuestion(BaseModel):
    """Arguments of a sales question."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(
        min_length=2,
        max_length=200,
        description="The user's question in their own words, e.g. 上月销售额最高的产品.",
    )


@dataclass(frozen=True)
class SqlPlan:
    """A question turned into SQL."""

    sql: str
    """Parameterized SQL (``?`` placeholders)."""
    params: tuple[str, ...]
    """Its parameters (the month)."""
    month: str
    """The month asked about, YYYY-MM."""
    metric: str
    """``amount_cents`` or ``quantity``."""
    shape: str
    """``top``, ``bottom`` or ``total``."""
    product: str | None = None
    """The one product the question names, if any: a total is then that product's."""


def _month_of(text: str, now: date) -> str:
    lowered = text.lower()
    explicit = re.search(r"(20\d{2})\s*[年\-/.]\s*(\d{1,2})", text)
    if explicit:
        return f"{int(explicit.group(1)):04d}-{int(explicit.group(2)):02d}"
    if re.search(r"本月|这个月|this month", lowered):
        return f"{now.year:04d}-{now.month:02d}"
    alone = re.search(r"(?<!\d)(1[0-2]|0?[1-9])\s*月(?!\s*\d{1,2}\s*[日号])", text)
    english = re.search(r"\b(" + "|".join(EN_MONTHS) + r")\b", lowered)
    if (
        english
        and english.group(1) == "may"
        and not re.search(r"\b(?:in|for|of|during)\s+may\b", lowered)
    ):
        english = None  # "may I see …" asks, it names no month
    if alone or english:  # "5月", "in May" without a year: the latest May up to now
        month_no = int(alone.group(1)) if alone else EN_MONTHS[english.group(1)]  # type: ignore[union-attr]
        year = now.year if month_no <= now.month else now.year - 1
        return f"{year:04d}-{month_no:02d}"
    year, month = (now.year, now.month - 1) if now.month > 1 else (now.year - 1, 12)
    return f"{year:04d}-{month:02d}"  # 上月 / last month, and the default


def named_product(text: str, products: Sequence[str]) -> str | None:
    """The product a question names ("麻辣香锅卖了多少"), if it names exactly one."""
    lowered = text.lower()
    named = {p for p in products if p and p.lower() in lowered}
    return next(iter(named)) if len(named) == 1 else None


def question_to_sql(text: str, now: date, products: Sequence[str] = ()) -> SqlPlan:
    """Turn a sales question into parameterized SQL, or raise ``UserFixableError``.

    ``products`` are the products sold: a question naming one of them and asking how much
    ("2024年5月麻辣香锅卖了多少钱") is answered with that product's total, not the month's.
    """
    lowered = text.lower()
    month = _month_of(text, now)
    metric = (
        "quantity"
        if re.search(
            r"销量|件数|卖了多少件|卖出多少|(?:多少|几)(?:份|件|单)|卖了几个"
            r"|quantity|units|how many",
            lowered,
        )
        else "amount_cents"
    )
    top_n = re.search(r"前\s*(\d{1,2})|top\s*(\d{1,2})", lowered)
    limit = int(next(g for g in top_n.groups() if g)) if top_n else 1
    if re.search(r"最低|最少|最差|worst|lowest|least", lowered):
        shape, order = "bottom", "ASC"
    elif top_n or re.search(r"最高|最多|最好|最畅销|卖得最|best|top|highest|most", lowered):
        shape, order = "top", "DESC"
    elif re.search(
        r"总|合计|一共|多少|几(?:份|件|单)|卖了几个|total|overall|how much|how many", lowered
    ):
        shape, order = "total", ""
    else:
        msg = "I can answer which product sold most or least, and total sales, by month"
        raise UserFixableError(msg, details={"reason": "unsupported_question"})
    product = named_product(text, products)
    if shape == "total" and product is not None:
        sql = (
            f"SELECT product, SUM({metric}) AS total FROM sales WHERE month = ? AND product = ? "
            "GROUP BY product"
        )
        return SqlPlan(sql, (month, product), month, metric, shape, product)
    if shape == "total":
        sql = f"SELECT SUM({metric}) AS total FROM sales WHERE month = ?"
        return SqlPlan(sql, (month,), month, metric, shape)
    sql = (
        f"SELECT product, SUM({metric}) AS total FROM sales WHERE month = ? "
        f"GROUP BY product ORDER BY total {order} LIMIT {limit}"
    )
    return SqlPlan(sql, (month,), month, metric, shape)


def run_checked_query(
    db: Database, sql: str, params: tuple[Any, ...], policy: SqlPolicy = SALES_POLICY
) -> list[JsonObject]:  # rows: the columns the checked SQL selects
    """Check ``sql`` with the guard, then run it read-only with a time and row limit.

    The runner interrupts a query that runs too long inside SQLite (it is stopped, not
    abandoned), and SQLite's authorizer refuses any table or column outside the policy.
    """
    try:
        return readonly_sql.run(db, sql, params, policy=policy).rows
    except (readonly_sql.QueryRefused, readonly_sql.QueryTimeout) as exc:
        msg = f"refused SQL: {exc.message}"
        raise UserFixableError(msg, details={"reason": "unsafe_sql", **exc.details()}) from exc
    except readonly_sql.QueryFailed as exc:
        raise PermanentToolError(exc.message, details=exc.details()) from exc


class SalesRow(TypedDict, total=False):
    """A row of the SQL ``question_to_sql`` writes: a product's total, or the month's."""

    product: str
    total: int | None
    """``None`` when the month has no sales (``SUM`` of nothing)."""


class SalesReport(TypedDict):
    """What ``query_sales_report`` answers: the question, the SQL run, and its rows."""

    question: str
    sql: str
    params: list[str]
    month: str
    metric: str
    shape: str
    rows: list[SalesRow]
    product: NotRequired[str | None]
    """The product a total is for; absent or ``None``: the whole month's."""


def query_sales_report(args: SalesQuestion, ctx: ToolContext) -> SalesReport:
    """Answer a sales question from the sales table."""
    db = ctx.database()
    sold = run_checked_query(db, "SELECT DISTINCT product FROM sales", ())
    plan = question_to_sql(args.question, ctx.today(), [str(r["product"]) for r in sold])
    rows = cast("list[SalesRow]", run_checked_query(db, plan.sql, plan.params))
    return {
        "question": args.question,
        "sql": plan.sql,
        "params": list(plan.params),
        "month": plan.month,
        "metric": plan.metric,
        "shape": plan.shape,
        "rows": rows,
        "product": plan.product,
    }


def _summarize(data: SalesReport) -> str:
    return f"{len(data['rows'])} row(s) for {data['month']}: {data['sql']} {data['params']}"


SALES_TOOLS = (
    ToolCard(
        name="query_sales_report",
        description="Answer a question about product sales (revenue or units) by month.",
        when_to_use="A staff member asks which product sold most or least, or total sales, "
        "for a month.",
        when_not_to_use="Customers asking about their own orders; anything that changes data; "
        "questions about cost or margin (not available).",
        parameters=SalesQuestion,
        returns="month, metric, the SQL that ran and its rows.",
        handler=query_sales_report,
        idempotent=True,
        permission="report:read",
        domain="report",
        timeout_s=5.0,
        cache_ttl_s=60.0,
        summarize=_summarize,
    ),
)
