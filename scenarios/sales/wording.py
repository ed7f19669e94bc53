"""What the sales bot says, in zh and en."""

from __future__ import annotations

from datetime import date

from contract.scenario import Describer, Speaker, Wording
from scenarios.sales.tools import SalesReport, SalesRow
from state import AgentState, ToolResult
from tools.executor.envelope import result_data

WORDING: Wording = {
    "slot.question": {"zh": "问题", "en": "question"},
    "ask.question": {
        "zh": "好的，我来帮您{task}。请问想查哪个月的什么数据？例如“上月销售额最高的产品”。",
        "en": "Sure, I can help you {task}. Which month and figure? E.g. “last month's top product”.",
    },
    "intent.QUERY_SALES": {"zh": "查询销售数据", "en": "look up sales figures"},
    "sales_top": {
        "zh": "{month}{metric}最高的产品是「{product}」，{metric} {value}。",
        "en": "In {month}, the product with the highest {metric} was {product} ({value}).",
    },
    "sales_bottom": {
        "zh": "{month}{metric}最低的产品是「{product}」，{metric} {value}。",
        "en": "In {month}, the product with the lowest {metric} was {product} ({value}).",
    },
    "sales_ranking": {
        "zh": "{month}{metric}排名：{ranking}。",
        "en": "{month} by {metric}: {ranking}.",
    },
    "sales_total": {
        "zh": "{month}总{metric}为 {value}。",
        "en": "Total {metric} in {month}: {value}.",
    },
    "sales_product_total": {
        "zh": "{month}「{product}」的{metric}为 {value}。",
        "en": "{product}'s {metric} in {month}: {value}.",
    },
    "sales_no_data": {
        "zh": "{month}没有销售数据。",
        "en": "There are no sales figures for {month}.",
    },
    "sales_unsupported": {
        "zh": "抱歉，我目前能回答按月的销售额或销量最高、最低的产品，以及月度总额，例如“上月销售额最高的产品”。",
        "en": "Sorry, I can answer which product sold most or least, and monthly totals, by revenue or units, e.g. “last month's best-selling product”.",
    },
    "metric_amount": {
        "zh": "销售额",
        "en": "revenue",
    },
    "metric_quantity": {
        "zh": "销量",
        "en": "units sold",
    },
    "yuan": {
        "zh": "{value:,.2f} 元",
        "en": "¥{value:,.2f}",
    },
    "units": {
        "zh": "{value} 件",
        "en": "{value} units",
    },
}


def describe_sales(result: ToolResult, state: AgentState, speaker: Speaker) -> str | None:
    """Answer the question from the rows, or say which questions can be answered."""
    data = result_data(result, SalesReport)
    if result.get("status") != "success":
        # a question it cannot turn into a query is its own refusal; the rest is generic
        return (
            speaker.say("sales_unsupported") if result.get("error_type") == "user_fixable" else None
        )
    metric = speaker.say("metric_quantity" if data["metric"] == "quantity" else "metric_amount")
    rows = data["rows"]

    def value(row: SalesRow) -> str:
        total = row.get("total") or 0
        if data["metric"] == "quantity":
            return speaker.say("units", value=total)
        return speaker.say("yuan", value=total / 100)

    month = month_label(data["month"], speaker.language)
    if not rows or rows[0].get("total") is None:
        return speaker.say("sales_no_data", month=month)
    if data["shape"] == "total" and data.get("product"):
        return speaker.say(
            "sales_product_total",
            month=month,
            metric=metric,
            product=data.get("product"),
            value=value(rows[0]),
        )
    if data["shape"] == "total":
        return speaker.say("sales_total", month=month, metric=metric, value=value(rows[0]))
    if len(rows) > 1:
        ranking = "; ".join(f"{i}. {r['product']} {value(r)}" for i, r in enumerate(rows, 1))
        return speaker.say("sales_ranking", month=month, metric=metric, ranking=ranking)
    name = "sales_top" if data["shape"] == "top" else "sales_bottom"
    return speaker.say(
        name, month=month, metric=metric, product=rows[0]["product"], value=value(rows[0])
    )


def month_label(month: str, language: str) -> str:
    """Name a ``YYYY-MM`` month the way the language does."""
    year, number = month.split("-")
    if language == "zh":
        return f"{int(year)}年{int(number)}月"
    return date(int(year), int(number), 1).strftime("%B %Y")


DESCRIBE: dict[str, Describer] = {"query_sales_report": describe_sales}
