"""Reply: turn tool results into natural language in the user's language.

Replies are built from the envelope's data by the describer the tool's scenario declares.
Raw JSON and internal error text never reach the user; a missing resource is said to be
missing, and nothing is invented. What a failure means is said once, in ``tools.executor.failures``:
a describer words its tool's successes, its not-found and its domain refusals, nothing else;
every other class (switched off, unavailable, unknown outcome, declined ...) gets the one
generic sentence, whatever the tool, and so does a failure a describer does not know.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from contract.scenario import ScenarioSet
from nodes.common import Node, context_of, message_text, protocol_message
from nodes.services import Services
from nodes.wording import Voice
from planning.model_reply import phrase_reply
from security.untrusted import withhold_flagged
from state import AgentState, Context, StateUpdate, TaskFrame, ToolResult
from tools.executor.failures import MEANINGS, classify, reference, said
from understanding.engine import next_frame

_log = logging.getLogger(__name__)


def make_reply_node(services: Services) -> Node:
    """Build the node that answers from the task's latest tool results."""

    def reply(state: AgentState, runtime: Runtime[Context]) -> StateUpdate:
        """Answer the user from this step's results, one line per result; then the next task.

        A step may have served several tasks of one message (two cities): each result is
        described with its own task's slots. When the message queued more tasks, the next one
        starts here ("接下来…") and the turn goes on with it.
        """
        voice = Voice(services.catalog, state.get("language", "zh"))
        results = _latest_results(state, services.catalog)
        frames = {f["task_id"]: f for f in state.get("task_stack") or []}
        lines = [
            describe_result(
                r, _task_state(state, frames.get(r.get("task_id", ""))), voice, services.catalog
            )
            for r in results
            if not _follows_a_failure(r, results)
        ]
        for later in _failed_after(state, results):  # a side step that failed after them
            if _follows_a_failure(later, state.get("tool_results") or []):
                continue
            task_state = _task_state(state, frames.get(later.get("task_id", "")))
            lines.append(
                voice.failure(
                    classify(later) or "unavailable", later, task=_task(later, task_state, voice)
                )
            )
        text = "\n".join(line for line in lines if line)
        error = None
        llm = services.chat_model("reply", context_of(runtime).model)
        if llm is not None and text:  # optional phrasing; the template is the fallback
            draft = text
            text, error = phrase_reply(
                llm,
                draft=draft,
                results=[dict(r) for r in results],
                goal=str(state.get("intent", "")),
                language=voice.language,
                turns=recent_turns(state),
            )
            if said(text, voice.language) != said(draft, voice.language):
                # a phrasing must not change what failed ("已停用" into "没有找到"): the template
                text, error = draft, "the phrasing named another failure; the template is said"
        again = _asked_again(services, state)
        after = {} if again else _next_task(services, state, voice, results)
        text = "\n".join(part for part in (text, after.pop("said", "")) if part)
        note = protocol_message(
            state,
            runtime,
            role="assistant",
            content=text,
            confidence=state.get("confidence", 1.0),
            error=error,
        )
        update: StateUpdate = {
            "messages": [AIMessage(content=text)],
            "protocol": [note],
            "step_count": 1,
            "decision": "continue",  # only a task started below goes on ("next")
            **again,
        }
        if "task_stack" not in after and any(
            f["status"] == "batched" for f in state.get("task_stack") or []
        ):
            after["task_stack"] = [
                f for f in state.get("task_stack") or [] if f["status"] != "batched"
            ]
        return {**update, **after}

    return reply


def _follows_a_failure(result: ToolResult, results: list[ToolResult]) -> bool:
    """A call refused because the step it needed did not succeed: that step's line says so.

    "订好了通知我" declined: the notice was never due; "nothing was done" covers it.
    """
    needed = (
        (result.get("data") or {}).get("requires") if result.get("status") != "success" else None
    )
    if not needed:
        return False
    return any(r.get("tool") in needed and r.get("status") != "success" for r in results)


def _task_state(state: AgentState, frame: TaskFrame | None) -> AgentState:
    """The state as a describer of that task's result should see it."""
    if frame is None:
        return state
    return {**state, "intent": frame["intent"], "slots": frame["slots"]}


def _next_task(
    services: Services, state: AgentState, voice: Voice, results: list[ToolResult]
) -> StateUpdate:
    """Start the next queued task, if any; tasks waiting on a failed one are dropped."""
    stack = [f for f in state.get("task_stack") or [] if f["status"] != "batched"]
    if not any(f["status"] == "queued" for f in stack):
        return {}
    said: list[str] = []
    done = state.get("task_id", "")
    succeeded = bool(results) and all(r.get("status") == "success" for r in results)
    if not succeeded:
        for waiting in [f for f in stack if f.get("after") == done]:
            stack.remove(waiting)
            said.append(
                voice.say(
                    "after_failed",
                    first=voice.label(state.get("intent", "")),
                    then=voice.label(waiting["intent"]),
                )
            )
    frame, rest = next_frame(stack)
    if frame is None:
        return {"task_stack": rest, "said": "".join(said)}
    said.append(voice.say("next_task", task=voice.label(frame["intent"])))
    return {
        "said": "".join(said),
        "task_stack": rest,
        "decision": "next",
        "intent": frame["intent"],
        "task_id": frame["task_id"],
        "confidence": frame.get("confidence", services.confidence_threshold),
        "intent_evidence": ["queued by an earlier message"],
        "slots": Overwrite(dict(frame["slots"])),
        "missing_slots": [],
        "invalid_slots": {},
        "slot_offers": {},
        "tool_results": Overwrite([]),
        "pending_tool_calls": [],
        "retry_count": 0,
        "error": None,
        "awaiting": None,
        "answer": None,
        "step_count": Overwrite(1),
    }


def _asked_again(services: Services, state: AgentState) -> StateUpdate:
    """Reopen the slot the reply asks for again, so the user's answer continues the task.

    The slot's old value is dropped: an answer without a new one is asked for it, not run
    on the value that just failed.
    """
    task = services.catalog.task(state.get("intent"))
    slot = task.reask(state.get("tool_results") or []) if task and task.reask else None
    if slot is None:
        return {}
    slots = {k: v for k, v in (state.get("slots") or {}).items() if k != slot}
    offered = task.offer(state.get("tool_results") or []) if task and task.offer else {}
    return {
        "missing_slots": [slot],
        "slots": Overwrite(slots),
        "pending_tool_calls": [],
        "offered": {k: v for k, v in offered.items() if k == slot} or None,
    }


def recent_turns(state: AgentState, limit: int = 12) -> list[tuple[str, str]]:
    """The last text turns of the conversation as ``(role, text)`` (tool traffic left out)."""
    turns: list[tuple[str, str]] = []
    for message in (state.get("messages") or [])[-4 * limit :]:
        if isinstance(message, HumanMessage):
            turns.append(("user", message_text(message)))
        elif isinstance(message, AIMessage) and isinstance(message.content, str):
            if message.content and not message.tool_calls:
                turns.append(("assistant", message.content))
    return turns[-limit:]


def _latest_results(state: AgentState, scenarios: ScenarioSet) -> list[ToolResult]:
    """Return the results that decide this turn's answer.

    Those of the calls just planned; but when an agent stopped at an earlier step (its
    ``error``), that step; and when the agent's task stands despite a later failure (a
    booking whose notice did not go out), the task's own result (the failed step after it
    gets its own line, ``_failed_after``).
    """
    results = state.get("tool_results") or []
    count = len(state.get("pending_tool_calls") or []) or 1
    latest = results[-count:]
    error = state.get("error")
    if error:
        return latest if error in latest else [error]
    if all(r.get("status") == "success" for r in latest) or _several_tasks(latest):
        return latest  # tasks of one message run side by side: each said, failed or not
    task = scenarios.task(state.get("intent"))
    final = next((r for r in reversed(results) if task and r.get("tool") == task.tool), None)
    return [final] if final is not None and final.get("status") == "success" else latest


def _several_tasks(results: list[ToolResult]) -> bool:
    """The results answer more than one task ("check OD-1 and OD-2, and hurry the latter")."""
    return len({r.get("task_id") or "" for r in results}) > 1  # "": the active task's


def _failed_after(state: AgentState, decisive: list[ToolResult]) -> list[ToolResult]:
    """Return the failed results that came after the decisive ones (a notice not sent)."""
    results = state.get("tool_results") or []
    if not decisive:
        return []
    last = max((i for i, r in enumerate(results) if r in decisive), default=len(results))
    return [r for r in results[last + 1 :] if r.get("status") != "success"]


def _task(result: ToolResult, state: AgentState, voice: Voice) -> str:
    """Name what the result was for: its step (``step.<tool>``), else the task asked for."""
    step = voice.text(f"step.{result.get('tool', '')}")
    return step or voice.label(state.get("intent", ""))


def describe_result(
    result: ToolResult, state: AgentState, voice: Voice, scenarios: ScenarioSet
) -> str:
    """Say what one tool result means for the user.

    A write answered from the idempotency record (a replayed confirmation, a re-run from a
    checkpoint) says so first: the user must not think it was done twice. A read answered
    so is just its answer: nothing was submitted.
    """
    text = _describe(result, state, voice, scenarios)
    card = scenarios.cards_by_name().get(str(result.get("tool", "")))
    wrote = card is None or card.writes  # a read is never "already submitted"
    if result.get("duplicated") and result.get("status") == "success" and wrote:
        return f"{voice.say('already_submitted')}\n{text}"
    return text


def _describe(result: ToolResult, state: AgentState, voice: Voice, scenarios: ScenarioSet) -> str:
    outcome = classify(result)
    task = _task(result, state, voice)
    known = list((state.get("slots") or {}).values())
    if outcome is not None and not MEANINGS[outcome].scenario_words:
        return voice.failure(outcome, result, task=task, known=known)
    tool = result.get("tool", "")
    describe = scenarios.describers.get(tool)
    text: str | None = None
    if describe is not None:
        own = replace(voice, prefer=scenarios.tool_scenario.get(tool))
        shown = withhold_flagged(result, voice.say("untrusted_withheld"))
        try:
            text = describe(shown, state, own)
        except (KeyError, TypeError, ValueError):
            # data not in the shape the describer knows (a backend renamed a field): the turn
            # must still end with an answer, and the user must not be told a guess
            _log.exception("describer of %s failed on its result", tool)
            if outcome is None:
                return _done(result, voice, task, scenarios, known, readable=False)
    if text:
        return text
    if outcome is not None:  # a failure the describer does not know: the generic sentence
        return voice.failure(outcome, result, task=task, known=known)
    return _done(result, voice, task, scenarios, known, readable=True)


def _done(
    result: ToolResult,
    voice: Voice,
    task: str,
    scenarios: ScenarioSet,
    known: list[Any],
    *,
    readable: bool,
) -> str:
    """Say a success no describer could word.

    A write happened: say so, with its id. A read whose data could not be read is said to
    be unavailable, never shown as raw data.
    """
    card = scenarios.cards_by_name().get(result.get("tool", ""))
    if card is not None and not card.idempotent:
        return voice.say("done_ref", task=task, reference=reference(result, known))
    if not readable:
        return voice.failure("unavailable", result, task=task, known=known)
    return voice.say("done", task=task)
