"""Accept a SQL query only if a parser proves it is one read-only SELECT over allowed data.

Used for every generated query, whoever generated it (the offline rules or a model). The
check is on sqlglot's syntax tree, not on the text, so a comment hiding a second statement,
a write inside a CTE, ``SELECT *`` reaching a hidden column, or a table not on the list are
all refused. Execution then happens on a read-only connection with a row limit.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

ALLOWED_FUNCTIONS = frozenset({"sum", "count", "avg", "min", "max", "round", "coalesce"})


class UnsafeQueryError(ValueError):
    """The query is not a single read-only SELECT over the allowed tables and columns."""


@dataclass(frozen=True)
class SqlPolicy:
    """What a query may read."""

    tables: frozenset[str]
    """Tables that may appear in FROM / JOIN."""
    columns: frozenset[str]
    """Columns that may be referenced (hidden ones, such as cost price, are left out)."""
    max_rows: int = 100
    """Rows returned at most."""


def check_query(sql: str, policy: SqlPolicy) -> exp.Select:
    """Return the parsed SELECT, or raise ``UnsafeQueryError`` saying why not."""
    try:
        statements = [s for s in sqlglot.parse(sql, read="sqlite") if s is not None]
    except ParseError as exc:
        msg = f"not valid SQL: {exc}"
        raise UnsafeQueryError(msg) from exc
    if len(statements) != 1:
        msg = f"exactly one statement is allowed, got {len(statements)}"
        raise UnsafeQueryError(msg)
    tree = statements[0]
    if not isinstance(tree, exp.Select):
        msg = f"only SELECT is allowed, got {tree.key.upper()}"
        raise UnsafeQueryError(msg)
    if any(node.comments for node in tree.walk()):
        msg = "comments are not allowed: they can hide a second statement"
        raise UnsafeQueryError(msg)
    forbidden = (
        exp.Insert,
        exp.Update,
        exp.Delete,
        exp.Drop,
        exp.Create,
        exp.Alter,
        exp.Command,
        exp.Pragma,
        exp.Attach,
        exp.Detach,
    )
    for node in tree.walk():
        if isinstance(node, forbidden):
            msg = f"{node.key.upper()} is not allowed inside a query"
            raise UnsafeQueryError(msg)
    if any(isinstance(node, exp.Star) for node in tree.find_all(exp.Star)):
        msg = "SELECT * is not allowed: name the columns"
        raise UnsafeQueryError(msg)
    for table in tree.find_all(exp.Table):
        if table.name.lower() not in policy.tables:
            msg = f"table {table.name!r} is not allowed"
            raise UnsafeQueryError(msg)
    aliases = {alias.alias.lower() for alias in tree.find_all(exp.Alias)}
    for column in tree.find_all(exp.Column):
        name = column.name.lower()
        if name not in policy.columns and name not in aliases:
            msg = f"column {column.name!r} is not allowed"
            raise UnsafeQueryError(msg)
    for function in tree.find_all(exp.Func):
        name = (function.sql_name() or "").lower()
        if isinstance(function, exp.Anonymous):
            name = str(function.this).lower()
        if name and name not in ALLOWED_FUNCTIONS and not isinstance(function, exp.Cast):
            msg = f"function {name.upper()} is not allowed"
            raise UnsafeQueryError(msg)
    return tree


def with_row_limit(tree: exp.Select, max_rows: int) -> str:
    """Return the query's SQL with a LIMIT no larger than ``max_rows``."""
    limit = tree.args.get("limit")
    current = None
    if limit is not None and isinstance(limit.expression, exp.Literal):
        current = int(limit.expression.this)
    if current is None or current > max_rows:
        tree = tree.limit(max_rows, copy=True)
    return tree.sql(dialect="sqlite")
