"""Reply: turn tool results into natural language in the user's language.

Replies are built from the envelope's data by the describer the tool's scenario declares.
Raw JSON and internal error text never reach the user; a missing resource is said to be
missing, and nothing is invented. Failures every tool can have (declined, refused, invalid
arguments, rate limited) are worded here, once.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from nodes.common import Node, context_of, message_text, protocol_message
from nodes.model_reply import phrase_reply
from nodes.prompts import Voice
from nodes.services import Services
from nodes.tasks import ScenarioSet
from state import AgentState, Context, TaskFrame, ToolResult
from understanding.engine import next_frame

_log = logging.getLogger(__name__)


def make_reply_node(services: Services) -> Node:
    """Build the node that answers from the task's latest tool results."""

    def reply(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
        """Answer the user from this step's results, one line per result; then the next task.

        A step may have served several tasks of one message (two cities): each result is
        described with its own task's slots. When the message queued more tasks, the next one
        starts here ("接下来…") and the turn goes on with it.
        """
        voice = Voice(services.catalog, state.get("language", "zh"))
        results = _latest_results(state)
        frames = {f["task_id"]: f for f in state.get("task_stack") or []}
        lines = [
            describe_result(
                r, _task_state(state, frames.get(r.get("task_id", ""))), voice, services.catalog
            )
            for r in results
            if not _follows_a_failure(r, results)
        ]
        text = "\n".join(line for line in lines if line)
        error = None
        llm = services.chat_model("reply", context_of(runtime).model)
        if llm is not None and text:  # optional phrasing; the template is the fallback
            text, error = phrase_reply(
                llm,
                draft=text,
                results=[dict(r) for r in results],
                goal=str(state.get("intent", "")),
                language=voice.language,
                turns=recent_turns(state),
            )
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
        update: dict[str, Any] = {
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
) -> dict[str, Any]:
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


def _latest_results(state: AgentState) -> list[ToolResult]:
    count = len(state.get("pending_tool_calls") or []) or 1
    return (state.get("tool_results") or [])[-count:]


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
    data = result.get("data") or {}
    error_type = result.get("error_type")
    task = voice.label(state.get("intent", ""))
    if result.get("status") == "rejected" and error_type is None:
        return voice.say("declined", task=task)
    if error_type == "rate_limited":
        return voice.say("rate_limited")
    if error_type == "permission_denied":
        return voice.say("not_permitted")
    if error_type == "validation":
        fields = ", ".join(err["field"] for err in data.get("errors", [])) or "arguments"
        return voice.say("invalid_request", reason=fields)
    describe = scenarios.describers.get(result.get("tool", ""))
    if describe is not None:
        own = replace(voice, prefer=scenarios.tool_scenario.get(result.get("tool", "")))
        try:
            return describe(result, state, own)
        except (KeyError, TypeError, ValueError):
            # data not in the shape the describer knows (a backend renamed a field): the turn
            # must still end with an answer, and the user must not be told a guess
            _log.exception("describer of %s failed on its result", result.get("tool"))
            return voice.say("handoff", task=task)
    # a tool with no wording of its own: never show its internal summary to the user
    return voice.say("done" if result.get("status") == "success" else "handoff", task=task)
