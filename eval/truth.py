"""Did the reply name the true cause? Per failure class, over the turns of an evaluation.

A turn counts when it ran a tool (the tool node or a sub-agent) and its decisive result is a
failure, or a success held for review: its class (``tools.executor.failures.classify``) is the true
cause. The turn's reply names it when ``tools.executor.failures.said`` finds that class in it; a
domain refusal (``refused``, worded by its scenario) is named when the reply names no other
class. A turn that ends waiting for a confirmation is not counted (nothing was decided).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypedDict

from eval.backends import ACTING_NODES, classify, said


class Told(TypedDict):
    """One class: how many turns had it as their cause, and how many replies named it."""

    told: int
    of: int


def turn_cause(values: Mapping[str, Any], visited: Iterable[str]) -> str | None:
    """Return the class that decided a finished turn, or ``None`` when none did."""
    if not set(visited) & ACTING_NODES:
        return None
    error = values.get("error")
    if error:
        return classify(error)
    results = values.get("tool_results") or []
    if results and classify(results[-1]) == "pending_review":
        return "pending_review"
    return None


def named(cause: str, reply: str, language: str) -> bool:
    """Whether ``reply`` names ``cause`` (a domain refusal: names no other class)."""
    found = said(reply, language)
    if cause == "refused":
        return bool(reply.strip()) and not (found - {"refused"})
    return cause in found


def told_by_class(pairs: Iterable[Sequence[Any]]) -> dict[str, Told]:
    """Aggregate ``(cause, named)`` pairs into counts per class."""
    counts: dict[str, Told] = {}
    for cause, was_named in pairs:
        entry = counts.setdefault(str(cause), {"told": 0, "of": 0})
        entry["of"] += 1
        entry["told"] += bool(was_named)
    return dict(sorted(counts.items()))


def truth_rows(told: Mapping[str, Told]) -> list[tuple[str, str, str]]:
    """Rows ``(class, told / of, share)`` for a printed or written table."""
    rows = []
    for cause, entry in told.items():
        share = entry["told"] / entry["of"] if entry["of"] else 0.0
        rows.append((cause, f"{entry['told']} / {entry['of']}", f"{share * 100:.1f}%"))
    if told:
        total = sum(e["told"] for e in told.values()), sum(e["of"] for e in told.values())
        rows.append(
            ("all classes", f"{total[0]} / {total[1]}", f"{total[0] / total[1] * 100:.1f}%")
        )
    return rows
