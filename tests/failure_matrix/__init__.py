"""The failure matrix: every tool of every shipped scenario × every failure the executor makes.

Each row drives a real conversation (the compiled graph, in memory, on a fresh seeded
database) that reaches one tool, with one failure injected through the executor's own
seams: the lifecycle (disabled, retired, past its sunset), the card (its permission, its
schema, its owner, its rate limit, its deadline), the handler (a ``ToolError`` subclass,
a result held for review, a call that never answers), the breaker, the user's answer to a
confirmation. It then checks what the issue asks of every failure:

- the reply names the true class, in the user's language (``tools.executor.failures.said``), and no
  other class (someone else's record reads exactly like a missing one);
- where the class says nothing ran, nothing did: the tool's real handler was never called
  and no business write of it was ledgered;
- the next turn works: with the failure gone, the same request is answered, no class named.

Rows come from the catalog: every card of every scenario (sub-agents' included) × the
faults that apply to it (``Fault.applies`` reads the card), so a new tool brings its rows.
The conversation that reaches a tool is the first evaluation case (``eval/cases``) that
calls it, or one of ``EXTRA_ROUTES``; a tool with neither fails ``missing_routes``.
"""

from tests.failure_matrix.catalog import CARDS, CATALOG, EXTRA_ROUTES, Route, missing_routes, routes
from tests.failure_matrix.check import Verdict, converse, run_row
from tests.failure_matrix.faults import FAULTS, Fault, checked_rows, rows

__all__ = [
    "CARDS",
    "CATALOG",
    "EXTRA_ROUTES",
    "FAULTS",
    "Fault",
    "Route",
    "Verdict",
    "converse",
    "missing_routes",
    "routes",
    "rows",
    "run_row",
    "checked_rows",
]
