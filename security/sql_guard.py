"""Accept a SQL query only if a parser proves it is one read-only SELECT over allowed data.

Used for every generated query, whoever generated it (the offline rules or a model). The
check is on sqlglot's syntax tree, not on the text, so a comment hiding a second statement,
a write inside a CTE, ``SELECT *`` reaching a hidden column, or a table not on the list are
all refused. Execution then happens in ``security.readonly_sql``: a read-only connection with
an engine-level authorizer, a time limit and a row limit.

Column rule: every column reference, anywhere (select list, inside an aggregate or an
expression, WHERE, GROUP BY, HAVING, a subquery), must name an allowed column. The one
exception is a bare ``ORDER BY <alias>`` naming an alias of the same SELECT, where SQLite
resolves the alias first. So ``SUM(cost_cents) AS cost_cents`` is refused at
``cost_cents`` inside the SUM, and an alias can never make a hidden column reachable.
Aliases may not take a hidden column's name either (when the policy or the runner names the
hidden columns), so a result never even *looks* like a hidden column.

Shape rule: no CTE at all (recursive or not: a CTE could only be read by taking a table's
name, which is how a recursive one hides as ``sales``), no cross join (explicit or comma),
no table read twice in one FROM (self join), at most ``MAX_TABLE_REFERENCES`` table
references and ``MAX_SUBQUERY_DEPTH`` levels of nesting in the whole query.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

ALLOWED_FUNCTIONS = frozenset({"sum", "count", "avg", "min", "max", "round", "coalesce"})
MAX_TABLE_REFERENCES = 4
"""Table references in one query (FROM, JOIN, subqueries, CTEs together)."""
MAX_SUBQUERY_DEPTH = 3
"""Nested SELECTs below the top one."""
MAX_SQL_CHARS = 4000
"""Longest query text accepted; generated queries are far shorter."""


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
    hidden_columns: frozenset[str] = frozenset()
    """Columns known to exist but not allowed; no alias may take one of these names."""


def check_query(sql: str, policy: SqlPolicy, *, hidden: frozenset[str] = frozenset()) -> exp.Select:
    """Return the parsed SELECT, or raise ``UnsafeQueryError`` saying why not.

    ``hidden`` adds to ``policy.hidden_columns`` (the runner passes the tables' real columns
    that the policy leaves out).
    """
    if not isinstance(sql, str):
        msg = f"the query must be text, got {type(sql).__name__}"
        raise UnsafeQueryError(msg)
    if len(sql) > MAX_SQL_CHARS:
        msg = f"the query is {len(sql)} characters; at most {MAX_SQL_CHARS} are allowed"
        raise UnsafeQueryError(msg)
    try:
        statements = [s for s in sqlglot.parse(sql, read="sqlite") if s is not None]
    except (ParseError, ValueError, RecursionError) as exc:  # sqlglot's TokenError is a ValueError
        msg = f"not valid SQL: {str(exc)[:200]}"
        raise UnsafeQueryError(msg) from exc
    if len(statements) != 1:
        msg = f"exactly one statement is allowed, got {len(statements)}"
        raise UnsafeQueryError(msg)
    tree = statements[0]
    if not isinstance(tree, exp.Select):
        msg = f"only SELECT is allowed, got {tree.key.upper()}"
        raise UnsafeQueryError(msg)
    if not tree.expressions:
        msg = "the SELECT names no columns"
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
    if any(not isinstance(node.parent, exp.Count) for node in tree.find_all(exp.Star)):
        msg = "SELECT * is not allowed: name the columns"
        raise UnsafeQueryError(msg)
    _check_shape(tree, policy)
    for table in tree.find_all(exp.Table):
        if table.name.lower() not in policy.tables:
            msg = f"table {table.name!r} is not allowed"
            raise UnsafeQueryError(msg)
    hidden_names = {name.lower() for name in policy.hidden_columns | hidden} - {
        name.lower() for name in policy.columns
    }
    for alias in tree.find_all(exp.Alias, exp.TableAlias):
        name = alias.name.lower() if isinstance(alias, exp.TableAlias) else alias.alias.lower()
        if name in hidden_names or name in policy.tables and isinstance(alias, exp.Alias):
            msg = f"alias {name!r} shadows a hidden column or a table"
            raise UnsafeQueryError(msg)
    allowed_columns = {name.lower() for name in policy.columns}
    for column in tree.find_all(exp.Column):
        name = column.name.lower()
        if name in allowed_columns or _is_order_by_alias(column):
            continue
        msg = f"column {column.name!r} is not allowed"
        raise UnsafeQueryError(msg)
    for function in tree.find_all(exp.Func):
        if isinstance(function, exp.Connector):  # AND, OR: sqlglot counts them as functions
            continue
        name = (function.sql_name() or "").lower()
        if isinstance(function, exp.Anonymous):
            name = str(function.this).lower()
        if name and name not in ALLOWED_FUNCTIONS and not isinstance(function, exp.Cast):
            msg = f"function {name.upper()} is not allowed"
            raise UnsafeQueryError(msg)
    return tree


def _check_shape(tree: exp.Select, policy: SqlPolicy) -> None:
    """Refuse the query shapes that can run for ever or read a table against itself."""
    for with_ in tree.find_all(exp.With):
        if with_.args.get("recursive"):
            msg = "recursive CTEs are not allowed"
            raise UnsafeQueryError(msg)
    for cte in tree.find_all(exp.CTE):
        msg = f"CTE {cte.alias!r} is not allowed: CTEs may not be named like a table"
        if cte.alias.lower() in policy.tables or not cte.alias:
            raise UnsafeQueryError(msg)
        msg = "CTEs are not allowed: ask for the data directly"
        raise UnsafeQueryError(msg)
    tables = list(tree.find_all(exp.Table))
    if len(tables) > MAX_TABLE_REFERENCES:
        msg = f"{len(tables)} table references; at most {MAX_TABLE_REFERENCES} are allowed"
        raise UnsafeQueryError(msg)
    for select in tree.find_all(exp.Select):
        depth = sum(1 for _ in _select_ancestors(select))
        if depth > MAX_SUBQUERY_DEPTH:
            msg = f"subqueries nested {depth} deep; at most {MAX_SUBQUERY_DEPTH} are allowed"
            raise UnsafeQueryError(msg)
        joins = select.args.get("joins") or []
        for join in joins:
            kind = (join.args.get("kind") or "").upper()
            has_condition = join.args.get("on") is not None or join.args.get("using")
            if kind == "CROSS" or not has_condition:
                msg = "cross joins are not allowed (every join needs an ON or USING condition)"
                raise UnsafeQueryError(msg)
        source = select.args.get("from_") or select.args.get("from")
        names = [
            table.name.lower()
            for part in [source, *joins]
            if part is not None
            for table in ([part.this] if isinstance(part.this, exp.Table) else [])
        ]
        if len(names) != len(set(names)):
            msg = "self joins are not allowed (a table appears twice in one FROM)"
            raise UnsafeQueryError(msg)


def _select_ancestors(node: exp.Expression) -> list[exp.Select]:
    found = []
    parent = node.parent
    while parent is not None:
        if isinstance(parent, exp.Select):
            found.append(parent)
        parent = parent.parent
    return found


def _is_order_by_alias(column: exp.Column) -> bool:
    """Tell whether ``column`` is a bare ``ORDER BY`` term naming an alias of its SELECT."""
    if column.table or not isinstance(column.parent, exp.Ordered):
        return False
    order = column.parent.parent
    select = order.parent if isinstance(order, exp.Order) else None
    if not isinstance(select, exp.Select):
        return False
    return any(
        isinstance(item, exp.Alias) and item.alias.lower() == column.name.lower()
        for item in select.expressions
    )


def with_row_limit(tree: exp.Select, max_rows: int) -> str:
    """Return the query's SQL with a LIMIT no larger than ``max_rows``."""
    limit = tree.args.get("limit")
    current = None
    if limit is not None and isinstance(limit.expression, exp.Literal):
        current = int(limit.expression.this)
    if current is None or current > max_rows:
        tree = tree.limit(max_rows, copy=True)
    return tree.sql(dialect="sqlite")
