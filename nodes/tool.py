"""Tool execution: hand the planned calls to the action executor and record the results.

High-risk calls are confirmed first, with one ``interrupt()`` for all of them, and every side
effect comes after it: LangGraph re-runs this node from the start on resume, and the
executor's idempotency records make any re-run answer from the stored result.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from nodes.common import Node, context_of, protocol_fields
from nodes.common import tool_context as tool_context_for
from nodes.confirmation import confirmation_request, read_decision
from nodes.services import Services
from nodes.slot_filling import plan_tool_calls, vault_identity
from nodes.tasks import TASKS
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
        tool_context = tool_context_for(
            runtime,
            task_id=state.get("task_id", ""),
            resources=services.database,
            results=state.get("tool_results") or [],
            step_count=state.get("step_count", 0),
        )
        all_calls = state.get("pending_tool_calls") or []
        planned_tools = {call["name"] for call in all_calls}
        # A call whose prerequisite is also planned runs after it (dependent calls in order).
        later = [c for c in all_calls if _depends_on(services, c, planned_tools)]
        calls = [c for c in all_calls if c not in later]
        planned = [executor.prepare(call, tool_context) for call in calls]
        waiting = [p for p in planned if isinstance(p, PreparedCall) and p.needs_confirmation]
        decision: Decision | None = None
        if waiting:
            display = {
                str(value): str(state.get("slots", {}).get(f"{name}_masked"))
                for name, value in (state.get("slots") or {}).items()
                if f"{name}_masked" in (state.get("slots") or {})
            }
            answer = interrupt(
                confirmation_request(waiting, state.get("language", "zh"), display=display)
            )
            decision = read_decision(answer)
            revision = _corrections(services, state, answer, decision, context.user_id)
            if revision is not None:
                return revision
            planned = _apply_edit(executor, planned, decision, tool_context)
        results = _run_all(executor, planned, tool_context, decision)
        for call in later:
            after = replace(
                tool_context,
                history=TaskHistory.from_results(
                    [*(state.get("tool_results") or []), *results], state.get("step_count", 0)
                ),
            )
            results.append(executor.execute(call, after, decision=decision))
        calls = [*calls, *later]

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
            "decision": "continue",
            "step_count": 1,
        }

    return tool


def _corrections(
    services: Services, state: AgentState, answer: Any, decision: Decision, user_id: str
) -> dict[str, Any] | None:
    """Read a correction given instead of a yes ("不对，是 6 月 21 号") as new slot values.

    Nothing runs: the call is re-planned from the corrected slots and asked about again.
    """
    if decision.kind != "reject" or not isinstance(answer, str):
        return None
    intent = state.get("intent", "")
    found = services.understanding.extract_slots(answer, intent).slots
    old = state.get("slots") or {}
    changed = {k: v for k, v in found.items() if old.get(k) != v}
    if not changed or intent not in TASKS:
        return None
    changed = vault_identity(changed, services, user_id)
    calls, missing = plan_tool_calls(intent, {**old, **changed}, state.get("task_id", ""))
    return {
        "slots": changed,
        "pending_tool_calls": calls,
        "missing_slots": missing,
        "decision": "revise",
        "step_count": 1,
    }


def _depends_on(services: Services, call: dict[str, Any], planned: set[str]) -> bool:
    card = services.registry.get(call["name"])
    return card is not None and any(req in planned for req in card.requires)


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
