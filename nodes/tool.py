"""Tool execution: hand the planned calls to the action executor and record the results.

High-risk calls are confirmed first, with one ``interrupt()`` for all of them, and every side
effect comes after it (``nodes.actions.confirm_then_run``). A call whose prerequisite is also
planned runs after it, with the first results in its history.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.runtime import Runtime

from nodes.actions import confirm_then_run
from nodes.common import Node, context_of, only_changes, protocol_fields, tool_context
from nodes.plan_cache import learn_from_results
from nodes.services import Services
from nodes.slot_filling import display_values, plan_tool_calls, vault_sensitive
from state import AgentState, Context, ProtocolMessage, ToolCall, ToolResult
from tools.client_view import client_view
from tools.executor import Decision
from tools.guards import TaskHistory
from tools.intake import revealed


def make_tool_node(services: Services) -> Node:
    """Build the node that runs ``pending_tool_calls`` through the executor."""

    def tool(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
        """Run every planned call; identity comes from the runtime context, not the call."""
        executor = services.executor
        ctx = tool_context(
            runtime,
            services,
            task_id=state.get("task_id", ""),
            results=state.get("tool_results") or [],
            step_count=state.get("step_count", 0),
        )
        all_calls = state.get("pending_tool_calls") or []
        planned_tools = {call["name"] for call in all_calls}
        later = [c for c in all_calls if _depends_on(services, c, planned_tools)]
        first = [c for c in all_calls if c not in later]
        user_id = context_of(runtime).user_id
        outcome = confirm_then_run(
            executor,
            first,
            ctx,
            language=state.get("language", "zh"),
            display=display_values(dict(state.get("slots") or {})),
            revise=lambda answer, decisions: _corrections(
                services, state, answer, decisions, user_id
            ),
            answer=state.get("answer"),
        )
        if outcome.revision is not None:
            return outcome.revision
        results = outcome.results
        for call in later:
            after = replace(
                ctx,
                history=TaskHistory.from_results(
                    [*(state.get("tool_results") or []), *results], state.get("step_count", 0)
                ),
            )
            result: ToolResult = executor.execute(  # type: ignore[assignment]
                dict(call), after, decision=outcome.decision
            )
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
) -> dict[str, Any]:
    """Write each call and its result as messages and protocol messages."""
    attempt = state.get("retry_count", 0)
    announced = _announced_calls(state)
    messages: list[Any] = []
    notes: list[dict[str, Any]] = []
    language = state.get("language", "zh")
    for call, result in zip(calls, results, strict=True):
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
    failed = next((r for r in results if r.get("status") != "success"), None)
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


def _corrections(
    services: Services,
    state: AgentState,
    answer: Any,
    decisions: list[Decision] | None,
    user_id: str,
) -> dict[str, Any] | None:
    """Read a correction given instead of a yes ("不对，是 6 月 21 号") as new slot values.

    Nothing runs: the call is re-planned from the corrected slots and asked about again.
    """
    task = services.catalog.task(state.get("intent"))
    if not isinstance(answer, str) or task is None:
        return None
    answer = revealed(answer, user_id, services.database)  # intake tokens, in memory only
    found = services.understand.extract_slots(answer, task.intent).slots
    old = state.get("slots") or {}
    changed = {k: v for k, v in found.items() if old.get(k) != v}
    if not changed:
        return None
    changed = vault_sensitive(task, changed, services, user_id)
    calls, missing = plan_tool_calls(task, {**old, **changed}, state.get("task_id", ""))
    return {
        "slots": changed,
        "pending_tool_calls": calls,
        "missing_slots": missing,
        "decision": "revise",
        "step_count": 1,
        "answer": None,
    }


def _depends_on(services: Services, call: ToolCall, planned: set[str]) -> bool:
    card = services.tools.get(call["name"])
    return card is not None and any(req in planned for req in card.requires)
