"""Driving a row and checking what the issue asks of every failure."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langgraph.types import Command

from tests.failure_matrix.build import Row, build_row
from tests.failure_matrix.catalog import CARDS, NOTHING_DONE
from tools.executor.failures import MEANINGS, Outcome, classify, said

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
        names = {  # the tools waiting (``actions``; a card's title is the task's name)
            action.get("tool")
            for interrupt in state.interrupts
            for action in (interrupt.value or {}).get("actions") or []
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
