"""Tool execution: hand the planned calls to the action executor and record the results.

High-risk calls are confirmed first, with one ``interrupt()`` for all of them, and every side
effect comes after it (``nodes.actions.confirm_then_run``). A call whose prerequisite is also
planned runs after it, with the first results in its history.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.runtime import Runtime

from nodes.actions import confirm_then_run
from nodes.call_words import call_words
from nodes.common import (
    Node,
    latest_user_message,
    message_text,
    only_changes,
    protocol_fields,
    tool_context,
)
from nodes.plan_cache import learn_from_results
from nodes.services import Services
from nodes.slot_filling import display_values
from nodes.wording import Voice
from state import (
    AgentState,
    Context,
    ProtocolMessage,
    StateUpdate,
    ToolCall,
    ToolResult,
    ValidatedProtocol,
)
from tools.executor.client_view import client_view
from tools.executor.envelope import CallRequest
from tools.registry.context import TaskHistory


def make_tool_node(services: Services) -> Node:
    """Build the node that runs ``pending_tool_calls`` through the executor."""

    def tool(state: AgentState, runtime: Runtime[Context]) -> StateUpdate:
        """Run every planned call; identity comes from the runtime context, not the call."""
        executor = services.executor
        ctx = replace(
            tool_context(
                runtime,
                services,
                task_id=state.get("task_id", ""),
                results=state.get("tool_results") or [],
                step_count=state.get("step_count", 0),
            ),
            requested=requested_effects(services, state),
        )
        all_calls = state.get("pending_tool_calls") or []
        planned_tools = {call["name"] for call in all_calls}
        later = [c for c in all_calls if _depends_on(services, c, planned_tools)]
        first = [c for c in all_calls if c not in later]
        voice = Voice(services.catalog, state.get("language", "zh"))
        outcome = confirm_then_run(
            executor,
            [_untagged(call) for call in first],
            ctx,
            language=state.get("language", "zh"),
            display=display_values(dict(state.get("slots") or {})),
            preface=changes_said(state, voice, services),
            answer=state.get("answer"),
            words=call_words(services.catalog, voice.language, ctx),
        )
        if outcome.reread is not None:
            return reread(state, outcome.reread)
        results = outcome.results
        for call in later:
            after = replace(
                ctx,
                history=TaskHistory.from_results(
                    [*(state.get("tool_results") or []), *results], state.get("step_count", 0)
                ),
            )
            result: ToolResult = executor.execute(_untagged(call), after, decision=outcome.decision)
            results.append(result)
        learn_from_results(services, state, [*first, *later], results, role=ctx.user_role)
        return only_changes(state, _record(services, state, runtime, [*first, *later], results))

    return tool


def _record(
    services: Services,
    state: AgentState,
    runtime: Runtime[Context],
    calls: list[ToolCall],
    results: list[ToolResult],
) -> StateUpdate:
    """Write each call and its result as messages and protocol messages."""
    attempt = state.get("retry_count", 0)
    announced = _announced_calls(state)
    messages: list[Any] = []
    notes: list[ValidatedProtocol] = []
    language = state.get("language", "zh")
    for call, result in zip(calls, results, strict=True):
        if call.get("task_id"):
            result["task_id"] = call["task_id"]
        call_id = f"{call['id']}_{attempt}"
        # Messages and protocol are what clients read: the client view only. The full
        # envelope (request id, latency, flags) stays in ``tool_results`` and the audit log.
        seen = client_view(result, language=language)
        if call_id not in announced:  # the propose node already showed the high-risk ones
            messages.append(
                AIMessage(
                    content="",
                    tool_calls=[{"id": call_id, "name": call["name"], "args": call["parameters"]}],
                )
            )
        messages.append(
            ToolMessage(
                content=json.dumps(seen, ensure_ascii=False),
                tool_call_id=call_id,
                name=call["name"],
                status="success" if result.get("status") == "success" else "error",
            )
        )
        notes.append(
            ProtocolMessage.fit(
                services.database,
                **protocol_fields(
                    state,
                    runtime,
                    role="tool",
                    content=seen,
                    error=seen["message"] if seen["status"] != "success" else None,
                    tool_call_id=call_id,
                ),
            ).validated()
        )
    # a step that also served other tasks of the message (an independent read) fails only
    # by its own task's calls; the reply says how each of the others went
    # and an asked-for extra (a text message) that failed after its task's own call
    # succeeded does not undo that call: the reply says both, no hand-over for the notice
    task = services.catalog.task(state.get("intent"))
    extras = {tool for _, tool in task.on_request} if task is not None else set()
    own_ok = task is not None and any(
        r.get("tool") == task.tool and r.get("status") == "success" for r in results
    )
    failed = next(
        (
            r
            for r in results
            if r.get("status") != "success"
            and not r.get("task_id")
            and not (own_ok and r.get("tool") in extras)
        ),
        None,
    )
    return {
        "messages": messages,
        "protocol": notes,
        "tool_results": results,
        "error": failed,
        "decision": "continue",
        "step_count": 1,
        "awaiting": None,
        "answer": None,
    }


def _announced_calls(state: AgentState) -> set[str]:
    """Return the ids of calls the last AI message announced and nothing has answered."""
    answered: set[str] = set()
    for message in reversed(state.get("messages") or []):
        if isinstance(message, ToolMessage):
            answered.add(message.tool_call_id)
        elif isinstance(message, AIMessage) and message.tool_calls:
            return {str(call["id"]) for call in message.tool_calls} - answered
        elif isinstance(message, HumanMessage):
            break
    return set()


def requested_effects(services: Services, state: AgentState) -> frozenset[str]:
    """Return the tools with a side effect the user's request asked for.

    Each task's own tool, and the on-request ones whose slot the user set ("到了通知我").
    Nothing else may write, whoever planned it.
    """
    allowed: set[str] = set()
    tasks = [(state.get("intent"), state.get("slots") or {})]
    tasks += [
        (frame["intent"], frame["slots"])
        for frame in state.get("task_stack") or []
        if frame["status"] == "batched"
    ]
    for intent, slots in tasks:
        task = services.catalog.task(intent)
        if task is None:
            continue
        allowed.add(task.tool)
        allowed.update(tool for slot, tool in task.on_request if slots.get(slot))
    return frozenset(allowed)


def reread(state: AgentState, answer: str) -> StateUpdate:
    """Send words given instead of a yes or a no back to understanding, as the user's message.

    A typed answer is the latest message already; a resume value becomes one. Nothing ran.
    """
    update: StateUpdate = {"decision": "reread", "step_count": 1, "answer": None}
    latest = latest_user_message(state)
    if latest is None or message_text(latest) != answer:
        update["messages"] = [HumanMessage(content=answer)]
    return update


def changes_said(state: AgentState, voice: Voice, services: Services) -> str | None:
    """Say what the user just changed ("已将转账金额改为 50.00 元。"), if anything."""
    changes = state.get("corrected") or []
    if not changes:
        return None
    prefer = services.catalog.scenario_of.get(state.get("intent", ""))
    own = replace(voice, prefer=prefer)
    said = []
    for change in changes:
        name = change["slot"]
        label = _PARENTHESES.sub("", own.text(f"slot.{name}") or name).strip()
        value = show_value(services, state.get("intent", ""), name, change["value"], voice.language)
        said.append(own.say("changed", slot=label, value=value))
    return "".join(said)


_PARENTHESES = re.compile(r"\s*[（(][^）)]*[）)]")
"""A hint after a slot's name ("科室（内科、儿科、皮肤科）"): not said when it changes."""


def show_value(services: Services, intent: str, slot: str, value: Any, language: str) -> str:
    """Return a slot's value as a person reads it (the scenario's ``shown``, if any)."""
    scenario = services.catalog.scenario_of.get(intent)
    shown = scenario.shown.get(slot) if scenario is not None else None
    return shown(value, language) if shown is not None else str(value)


def _untagged(call: ToolCall) -> CallRequest:
    """The call as the executor takes it: ``{id, name, parameters}``."""
    return {"id": call["id"], "name": call["name"], "parameters": call["parameters"]}


def _depends_on(services: Services, call: ToolCall, planned: set[str]) -> bool:
    card = services.tools.get(call["name"])
    return card is not None and any(req in planned for req in card.requires)
