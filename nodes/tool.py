"""Tool execution: hand the planned calls to the action executor and record the results."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.runtime import Runtime

from nodes.common import Node, context_of, protocol_fields, session_id
from nodes.services import Services
from state import AgentState, Context, ProtocolMessage
from tools.registry import ToolContext


def make_tool_node(services: Services) -> Node:
    """Build the node that runs ``pending_tool_calls`` through the executor."""

    def tool(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
        """Run every planned call; identity comes from the runtime context, not the call."""
        context = context_of(runtime)
        tool_context = ToolContext(
            user_id=context.user_id,
            user_role=context.user_role,
            session_id=session_id(runtime),
            task_id=state.get("task_id", ""),
            resources=services.database,
        )
        calls = state.get("pending_tool_calls") or []
        if len(calls) > 1:
            with ThreadPoolExecutor(max_workers=min(8, len(calls))) as pool:
                results = list(
                    pool.map(lambda call: services.executor.execute(call, tool_context), calls)
                )
        else:
            results = [services.executor.execute(call, tool_context) for call in calls]

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
