"""Reply: turn tool results into natural language in the user's language.

Replies are built from the envelope's data by the describer the tool's scenario declares.
Raw JSON and internal error text never reach the user; a missing resource is said to be
missing, and nothing is invented. What a failure means is said once, in ``tools.failures``:
a describer words its tool's successes, its not-found and its domain refusals, nothing else;
every other class (switched off, unavailable, unknown outcome, declined ...) gets the one
generic sentence, whatever the tool, and so does a failure a describer does not know.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any, cast

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from nodes.common import Node, context_of, message_text, protocol_message
from nodes.model_reply import phrase_reply
from nodes.prompts import Voice
from nodes.services import Services
from nodes.tasks import ScenarioSet
from state import AgentState, Context, ToolResult
from tools.failures import MEANINGS, classify, reference, said
from tools.untrusted import withhold_flagged

_log = logging.getLogger(__name__)


def make_reply_node(services: Services) -> Node:
    """Build the node that answers from the task's latest tool results."""

    def reply(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
        """Answer the user from this task's latest tool results."""
        voice = Voice(services.catalog, state.get("language", "zh"))
        results = _latest_results(state, services.catalog)
        lines = [describe_result(r, state, voice, services.catalog) for r in results]
        for later in _failed_after(state, results):  # a side step that failed after them
            lines.append(
                voice.failure(
                    classify(later) or "unavailable", later, task=_task(later, state, voice)
                )
            )
        text = "\n".join(lines)
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
        note = protocol_message(
            state,
            runtime,
            role="assistant",
            content=text,
            confidence=state.get("confidence", 1.0),
            error=error,
        )
        return {
            "messages": [AIMessage(content=text)],
            "protocol": [note],
            "step_count": 1,
            **_asked_again(services, state),
        }

    return reply


def _asked_again(services: Services, state: AgentState) -> dict[str, Any]:
    """Reopen the slot the reply asks for again, so the user's answer continues the task.

    The slot's old value is dropped: an answer without a new one is asked for it, not run
    on the value that just failed.
    """
    task = services.catalog.task(state.get("intent"))
    slot = task.reask(state.get("tool_results") or []) if task and task.reask else None
    if slot is None:
        return {}
    slots = {k: v for k, v in (state.get("slots") or {}).items() if k != slot}
    return {"missing_slots": [slot], "slots": Overwrite(slots), "pending_tool_calls": []}


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
    if all(r.get("status") == "success" for r in latest):
        return latest
    task = scenarios.task(state.get("intent"))
    final = next((r for r in reversed(results) if task and r.get("tool") == task.tool), None)
    return [final] if final is not None and final.get("status") == "success" else latest


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

    A success answered from the idempotency record (a replayed confirmation, a re-run from a
    checkpoint) says so first: the user must not think it was done twice.
    """
    text = _describe(result, state, voice, scenarios)
    if result.get("duplicated") and result.get("status") == "success":
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
        shown = cast(ToolResult, withhold_flagged(result, voice.say("untrusted_withheld")))
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
