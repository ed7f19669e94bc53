"""Tool execution: hand the planned calls to the action executor and record the results.

High-risk calls are confirmed first, with one ``interrupt()`` for all of them, and every side
effect comes after it: LangGraph re-runs this node from the start on resume, and the
executor's idempotency records make any re-run answer from the stored result.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from nodes.common import Node, context_of, protocol_fields, session_id
from nodes.confirmation import confirmation_request, read_decision
from nodes.services import Services
from state import AgentState, Context, ProtocolMessage
from tools.executor import ActionExecutor, Decision, PreparedCall
from tools.guards import TaskHistory
from tools.registry import ToolContext


def make_tool_node(services: Services) -> Node:
    """Build the node that runs ``pending_tool_calls`` through the executor."""

    def tool(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
        """Run every planned call; identity comes from the runtime context, not the call."""
        executor = services.executor
        context = context_of(runtime)
        tool_context = ToolContext(
            user_id=context.user_id,
            user_role=context.user_role,
            session_id=session_id(runtime),
            task_id=state.get("task_id", ""),
            resources=services.database,
            history=TaskHistory.from_results(
                state.get("tool_results") or [], state.get("step_count", 0)
            ),
        )
        calls = state.get("pending_tool_calls") or []
        planned = [executor.prepare(call, tool_context) for call in calls]
        waiting = [p for p in planned if isinstance(p, PreparedCall) and p.needs_confirmation]
        decision: Decision | None = None
        if waiting:
            answer = interrupt(confirmation_request(waiting, state.get("language", "zh")))
            decision = read_decision(answer)
            planned = _apply_edit(executor, planned, decision, tool_context)
        results = _run_all(executor, planned, tool_context, decision)

        attempt = state.get("retry_count", 0)
        messages: list[Any] = []
        notes: list[dict[str, Any]] = []
        for call, result in zip(calls, results, strict=True):
            call_id = f"{call['id']}_{attempt}"
            messages.append(
                AIMessage(
                    content="",
                    tool_calls=[{"id": call_id, "name": call["name"], "args": call["parameters"]}],
                )
            )
            messages.append(
                ToolMessage(
                    content=json.dumps(result, ensure_ascii=False),
                    tool_call_id=call_id,
                    name=call["name"],
                    status="success" if result["status"] == "success" else "error",
                )
            )
            notes.append(
                ProtocolMessage.fit(
                    services.database,
                    **protocol_fields(
                        state,
                        runtime,
                        role="tool",
                        content=result,
                        error=result["message"] if result["status"] != "success" else None,
                        tool_call_id=call_id,
                    ),
                ).model_dump(mode="json")
            )
        failed = next((r for r in results if r["status"] != "success"), None)
        return {
            "messages": messages,
            "protocol": notes,
            "tool_results": results,
            "error": failed,
            "step_count": 1,
        }

    return tool


def _apply_edit(
    executor: ActionExecutor,
    planned: list[PreparedCall | dict[str, Any]],
    decision: Decision,
    ctx: ToolContext,
) -> list[PreparedCall | dict[str, Any]]:
    """Swap in the edited arguments: validated and authorized again, with a new request id."""
    if decision.kind != "edit" or decision.parameters is None:
        return planned
    edited: list[PreparedCall | dict[str, Any]] = []
    for item in planned:
        if isinstance(item, PreparedCall) and item.needs_confirmation:
            merged = {**item.arguments, **decision.parameters}
            edited.append(executor.with_arguments(item, merged, ctx))
        else:
            edited.append(item)
    return edited


def _run_all(
    executor: ActionExecutor,
    planned: list[PreparedCall | dict[str, Any]],
    ctx: ToolContext,
    decision: Decision | None,
) -> list[dict[str, Any]]:
    """Run the prepared calls concurrently; an edit counts as approval of the edited call."""
    approval = Decision("approve") if decision and decision.kind == "edit" else decision

    def run(item: PreparedCall | dict[str, Any]) -> dict[str, Any]:
        if isinstance(item, dict):
            return item
        return executor.run(item, ctx, decision=approval if item.needs_confirmation else None)

    if len(planned) <= 1:
        return [run(item) for item in planned]
    with ThreadPoolExecutor(max_workers=min(16, len(planned))) as pool:
        return list(pool.map(run, planned))
