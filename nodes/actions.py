"""The one path from planned calls to effects: prepare → confirm → edit → run.

Every node that acts (the tool node, the finance agent's steps, the appointment agent) goes
through ``confirm_then_run``. High-risk calls are confirmed with a single ``interrupt()``
before any effect; LangGraph re-runs the node from the start on resume, and the executor's
idempotency records make every re-run answer from the stored result.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from langgraph.types import interrupt

from nodes.call_words import CallWords
from nodes.confirmation import confirmation_request, read_decisions, render
from state import ToolCall, ToolResult
from tools.executor.envelope import CallRequest
from tools.executor.pipeline import ActionExecutor, Decision, PreparedCall
from tools.registry.context import ToolContext
from understanding.lexical import plain_answer

Planned = PreparedCall | ToolResult
"""A prepared call, or the error envelope that preparing it returned."""


@dataclass
class Outcome:
    """What happened to the planned calls."""

    results: list[ToolResult] = field(default_factory=list)
    """One envelope per call, in order (empty when ``revision`` stopped the run)."""
    decision: Decision | None = None
    """The person's answer on the first reviewed call, when something needed confirmation."""
    decisions: dict[int, Decision] = field(default_factory=dict)
    """The answer per reviewed call (keyed by the prepared call's identity)."""
    answer: Any = None
    """The raw resume value, for a caller that reads more into it (a correction)."""
    reread: str | None = None
    """The person answered in words that are neither a yes nor a no ("不对，改成50"): nothing
    ran, and understanding must read them as a message (a correction, a new request)."""


BeforeEffects = Callable[[Decision | None], list[ToolResult] | None]
"""Runs after an approval and before the confirmed calls; a failed result stops them."""


def confirm_then_run(
    executor: ActionExecutor,
    calls: Sequence[ToolCall | CallRequest],
    ctx: ToolContext,
    *,
    language: str,
    display: dict[str, str] | None = None,
    question: str | None = None,
    preface: str | None = None,
    before_effects: BeforeEffects | None = None,
    provides: Collection[str] = (),
    answer: Any = None,
    words: CallWords | None = None,
) -> Outcome:
    """Prepare every call, ask once for those that need it, then run them concurrently.

    Args:
        executor: Runs the checks and the calls.
        calls: ``{id?, name, parameters}`` each; model or rule output, not yet trusted.
        ctx: The trusted caller and the task.
        language: The user's language, for the question.
        display: Stored value → what a person should see (a vault token → its masked form).
        question: A scenario's own wording of the question, replacing the generic one.
        preface: A sentence put before the question (what the user just changed).
        before_effects: Runs once the answer is known, before the confirmed calls (a hold
            before a booking); any failed result it returns stops the run. A declined call
            is passed to the executor all the same, which records and refuses it.
        provides: The tools ``before_effects`` runs, which the calls require: the question
            is asked as if they had succeeded, and the calls are prepared again (every check
            repeated) once they really have.
        answer: The person's answer, already given as a typed message (a chat front-end
            sends "确认" as a new message): used instead of pausing, once.
        words: How each call is said to a person (``nodes.call_words.call_words``).
    """
    asking = ctx
    if provides:
        history = replace(ctx.history, succeeded_tools={*ctx.history.succeeded_tools, *provides})
        asking = replace(ctx, history=history)
    planned: list[Planned] = [executor.prepare(dict(call), asking) for call in calls]
    waiting = [p for p in planned if isinstance(p, PreparedCall) and p.needs_confirmation]
    outcome = Outcome()
    if waiting:
        request = dict(confirmation_request(waiting, language, display=display, words=words))
        if question is not None:
            request["question"] = question
        if preface:
            request["question"] = f"{preface}\n{request['question']}"
        outcome.answer = answer if answer is not None else interrupt(request)
        if isinstance(outcome.answer, str) and plain_answer(outcome.answer) is None:
            # "no wait, make it 50", "no, June 21": more than a yes or a no, so understanding
            # reads it; nothing runs, neither the old values nor a refusal of them
            outcome.reread = outcome.answer
            return outcome
        decisions = read_decisions(outcome.answer, len(waiting), request=request)
        while decisions is None:
            if isinstance(outcome.answer, str) and outcome.answer.strip():
                # words, not a decision: a correction or a new request is understanding's
                # to read; nothing runs on the values the user may just have changed
                outcome.reread = outcome.answer
                return outcome
            # An answer that is neither a yes nor a no changes nothing: ask again.
            again = render("confirm_again", language)
            outcome.answer = interrupt({**request, "question": f"{again}\n{request['question']}"})
            decisions = read_decisions(outcome.answer, len(waiting), request=request)
        outcome.decisions = dict(zip((id(p) for p in waiting), decisions, strict=True))
        outcome.decision = decisions[0]
    declined = bool(outcome.decisions) and all(
        d.kind == "reject" for d in outcome.decisions.values()
    )
    if before_effects is not None and not declined:
        early = before_effects(outcome.decision) or []
        outcome.results.extend(early)
        if any(result.get("status") != "success" for result in early):
            return outcome
        if provides:
            done = {str(r.get("tool")) for r in early if r.get("status") == "success"}
            history = replace(ctx.history, succeeded_tools={*ctx.history.succeeded_tools, *done})
            ctx = replace(ctx, history=history)
            replanned = [executor.prepare(dict(call), ctx) for call in calls]
            outcome.decisions = {
                id(new): outcome.decisions[id(old)]
                for old, new in zip(planned, replanned, strict=True)
                if id(old) in outcome.decisions
            }
            planned = replanned
    outcome.results.extend(_run_all(executor, planned, ctx, outcome.decisions))
    return outcome


def _decided(item: PreparedCall, decisions: dict[int, Decision]) -> Decision | None:
    """Return the person's decision on ``item``, or ``None`` when it needed none."""
    return decisions.get(id(item)) if item.needs_confirmation else None


def _run(
    executor: ActionExecutor, item: Planned, ctx: ToolContext, decisions: dict[int, Decision]
) -> ToolResult:
    """Run one prepared call under its decision; an edit is approval of the edited call."""
    if isinstance(item, dict):
        return item
    decision = _decided(item, decisions)
    if decision is not None and decision.kind == "edit" and decision.parameters is not None:
        edited = executor.with_arguments(item, {**item.arguments, **decision.parameters}, ctx)
        if isinstance(edited, dict):
            return edited
        item, decision = edited, Decision("approve")
    return executor.run(item, ctx, decision=decision)


def _run_all(
    executor: ActionExecutor,
    planned: list[Planned],
    ctx: ToolContext,
    decisions: dict[int, Decision],
) -> list[ToolResult]:
    """Run independent calls concurrently, each under its own decision."""
    if len(planned) <= 1:
        return [_run(executor, item, ctx, decisions) for item in planned]
    with ThreadPoolExecutor(max_workers=min(16, len(planned))) as pool:
        return list(pool.map(lambda item: _run(executor, item, ctx, decisions), planned))
