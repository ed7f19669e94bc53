from __future__ import annotations

from datetime import date

import pytest

from scenarios.sales.tools import SALES_POLICY, question_to_sql
from security.sql_guard import UnsafeQueryError, check_query, with_row_limit
from tools.executor.errors import UserFixableError

ALLOWED = [
    "SELECT product, SUM(amount_cents) AS total FROM sales WHERE month = ? GROUP BY product "
    "ORDER BY total DESC LIMIT 1",
    "SELECT SUM(quantity) AS total FROM sales WHERE month = ?",
    "SELECT product, COUNT(sale_id) AS n FROM sales GROUP BY product",
    # AND / OR in a condition (sqlglot 30 made them functions: they were refused)
    "SELECT SUM(quantity) AS total FROM sales WHERE month = ? AND product = ?",
    "SELECT product FROM sales WHERE month = ? OR (day > 3 AND quantity < 2)",
]

REFUSED = {
    "DELETE FROM sales": "only SELECT",
    "UPDATE sales SET amount_cents = 0": "only SELECT",
    "INSERT INTO sales (product) VALUES ('x')": "only SELECT",
    "DROP TABLE sales": "only SELECT",
    "CREATE TABLE x (a INT)": "only SELECT",
    "SELECT product FROM sales; DROP TABLE sales": "exactly one statement",
    "SELECT product FROM sales /* x */; DELETE FROM sales": "exactly one statement",
    "SELECT product FROM sales -- ; DELETE FROM sales": "comments",
    "SELECT * FROM sales": "SELECT *",
    "SELECT product, cost_cents FROM sales": "cost_cents",
    "SELECT SUM(amount_cents - cost_cents) AS margin FROM sales": "cost_cents",
    "SELECT user_id FROM orders": "not allowed",
    "SELECT product FROM sales WHERE product IN (SELECT item FROM orders)": "orders",
    "SELECT load_extension('evil')": "LOAD_EXTENSION",
    "ATTACH DATABASE '/tmp/x.db' AS x": "only SELECT",
    "PRAGMA table_info(sales)": "only SELECT",
    "this is not sql at all": "not valid SQL",
}


@pytest.mark.parametrize("sql", ALLOWED)
def test_single_selects_over_allowed_columns_pass(sql):
    check_query(sql, SALES_POLICY)


@pytest.mark.parametrize(("sql", "why"), list(REFUSED.items()))
def test_everything_else_is_refused_with_the_reason(sql, why):
    with pytest.raises(UnsafeQueryError, match=why):
        check_query(sql, SALES_POLICY)


def test_row_limit_is_added_or_lowered_never_raised():
    unlimited = check_query("SELECT product FROM sales", SALES_POLICY)
    assert with_row_limit(unlimited, 50).endswith("LIMIT 50")
    huge = check_query("SELECT product FROM sales LIMIT 100000", SALES_POLICY)
    assert with_row_limit(huge, 50).endswith("LIMIT 50")
    small = check_query("SELECT product FROM sales LIMIT 3", SALES_POLICY)
    assert with_row_limit(small, 50).endswith("LIMIT 3")


@pytest.mark.parametrize(
    ("question", "month", "metric", "shape"),
    [
        ("上月销售额最高的产品", "2024-06", "amount_cents", "top"),
        ("上个月销量最低的是哪个", "2024-06", "quantity", "bottom"),
        ("2024年5月总销售额", "2024-05", "amount_cents", "total"),
        ("本月卖得最好的产品", "2024-07", "amount_cents", "top"),
        ("last month's best-selling product", "2024-06", "amount_cents", "top"),
        ("top 3 products by units sold in 2024-05", "2024-05", "quantity", "top"),
    ],
)
def test_questions_become_parameterized_sql(question, month, metric, shape):
    plan = question_to_sql(question, date(2024, 7, 15))
    assert (plan.month, plan.metric, plan.shape) == (month, metric, shape)
    assert plan.params == (month,)
    assert month not in plan.sql  # the value is a parameter, never spliced in
    check_query(plan.sql, SALES_POLICY)


def test_a_question_the_rules_cannot_answer_is_user_fixable():
    with pytest.raises(UserFixableError):
        question_to_sql("销售团队有几个人", date(2024, 7, 15))


@pytest.mark.parametrize(
    ("question", "month", "metric", "shape"),
    [
        ("上个月卖了多少钱", "2024-06", "amount_cents", "total"),
        ("5月卖了多少件", "2024-05", "quantity", "total"),
        ("12月的销售额一共多少", "2023-12", "amount_cents", "total"),  # the latest December
        ("how much did we sell in May", "2024-05", "amount_cents", "total"),
        ("may I see the total sales", "2024-06", "amount_cents", "total"),  # no month named
        ("2024年3月销量最高的产品", "2024-03", "quantity", "top"),
    ],
)
def test_a_month_without_a_year_and_how_much(question, month, metric, shape):
    plan = question_to_sql(question, date(2024, 7, 15))
    assert (plan.month, plan.metric, plan.shape) == (month, metric, shape)


@pytest.mark.parametrize(
    ("question", "product", "metric"),
    [
        ("2024年5月麻辣香锅卖了多少钱", "麻辣香锅", "amount_cents"),
        ("上个月酸菜鱼卖了多少件", "酸菜鱼", "quantity"),
        ("how much did 蓝牙耳机 sell in May", "蓝牙耳机", "amount_cents"),
    ],
)
def test_a_total_for_a_named_product_is_that_products(question, product, metric):
    products = ["黄焖鸡米饭", "麻辣香锅", "酸菜鱼", "蓝牙耳机"]
    plan = question_to_sql(question, date(2024, 7, 15), products)
    assert (plan.shape, plan.metric, plan.product) == ("total", metric, product)
    assert plan.params[1] == product and product not in plan.sql  # a parameter, not spliced
    check_query(plan.sql, SALES_POLICY)
    # two products named, or none: the month's total, as before
    both = question_to_sql("5月麻辣香锅和酸菜鱼一共卖了多少", date(2024, 7, 15), products)
    assert both.product is None and len(both.params) == 1
