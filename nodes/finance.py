"""The finance agent: a subgraph with its own tools, and the hand-off node that calls it.

The customer-service agent has no finance tools. A transfer is handed to the finance agent,
which runs the chain strictly in order (verify → balance → risk → execute), stops at the
first failure with that step's own result, and asks for confirmation before money moves.
Its protocol messages carry their own task id, linked to the conversation's task by
``parent_task_id``; its results come back into the same conversation.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Protocol, TypedDict

from langgraph.graph import END
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from nodes.common import Node, context_of, protocol_message, tool_context
from nodes.confirmation import confirmation_request, read_decision
from nodes.services import Services
from state import AgentState, Context, append_protocol, append_results
from tools.executor import PreparedCall, envelope
from tools.permissions import role_allows

CHAIN = ("verify_identity", "check_balance", "assess_transfer_risk", "execute_transfer")
REFUND_CHAIN = ("approve_large_refund",)
STEPS = (*CHAIN, *REFUND_CHAIN)


class FinanceState(TypedDict, total=False):
    """The finance agent's own state."""

    request: dict[str, Any]
    """account_id (from the trusted context), to_account, amount_cents, pin (vault token)."""
    steps: Annotated[list[dict[str, Any]], append_results]
    """Result envelopes of the chain, in order."""
    protocol: Annotated[list[dict[str, Any]], append_protocol]
    """The finance agent's protocol messages."""
    task_id: str
    """The finance task."""
    parent_task_id: str
    """The conversation task that handed over."""
    language: str
    """The user's language, for the confirmation question."""
    failed: dict[str, Any] | None
    """The step that stopped the chain, if any."""


class StepNode(Protocol):
    """A finance step node."""

    def __call__(self, state: FinanceState, *, runtime: Runtime[Context]) -> dict[str, Any]:
        """Run one step."""
        ...


def _arguments(tool: str, state: FinanceState) -> dict[str, Any]:
    request = state.get("request") or {}
    if tool == "approve_large_refund":
        return {
            "order_id": request.get("order_id", ""),
            "reason": request.get("reason") or "用户申请退款",
        }
    base = {"account_id": request.get("account_id", "")}
    if tool == "verify_identity":
        return {**base, "pin": request.get("pin", "")}
    plan = {
        **base,
        "to_account": request.get("to_account", ""),
        "amount_cents": request.get("amount_cents", 0),
    }
    if tool == "execute_transfer":
        risk = next(
            (s for s in state.get("steps") or [] if s["tool"] == "assess_transfer_risk"), None
        )
        return {**plan, "risk_ticket": ((risk or {}).get("data") or {}).get("risk_ticket", "")}
    return plan


def make_step(services: Services, tool: str) -> StepNode:
    """Build the node running one step of the chain through the finance executor."""

    def step(state: FinanceState, runtime: Runtime[Context]) -> dict[str, Any]:
        """Run the step; a high-risk step is confirmed first, before any effect."""
        executor = services.finance_executor
        ctx = tool_context(
            runtime,
            task_id=state.get("task_id", ""),
            resources=services.database,
            results=state.get("steps") or [],
        )
        call = {"name": tool, "parameters": _arguments(tool, state)}
        prepared = executor.prepare(call, ctx)
        if isinstance(prepared, PreparedCall):
            decision = None
            if prepared.needs_confirmation:
                answer = interrupt(confirmation_request([prepared], state.get("language", "zh")))
                decision = read_decision(answer)
            result = executor.run(prepared, ctx, decision=decision)
        else:
            result = prepared
        note = protocol_message(
            {"task_id": state.get("task_id", "")},
            runtime,
            role="tool",
            content=result,
            parent_task_id=state.get("parent_task_id"),
            error=result["message"] if result["status"] != "success" else None,
        )
        failed = None if result["status"] == "success" else result
        return {"steps": [result], "protocol": [note], "failed": failed}

    step.__name__ = tool
    return step


def _chain(state: FinanceState) -> tuple[str, ...]:
    return REFUND_CHAIN if (state.get("request") or {}).get("kind") == "refund" else CHAIN


def route_start(state: FinanceState) -> str:
    """Start the chain the request asks for: a transfer, or a large refund."""
    return _chain(state)[0]


def route_chain(state: FinanceState) -> str:
    """Go to the next step after a success; stop the chain at the first failure."""
    if state.get("failed"):
        return END
    done = [s["tool"] for s in state.get("steps") or []]
    remaining = [tool for tool in _chain(state) if tool not in done]
    return remaining[0] if remaining else END


def make_finance_steps(services: Services) -> dict[str, StepNode]:
    """Build one node per chain step, sharing the finance executor."""
    return {tool: make_step(services, tool) for tool in STEPS}


def make_handoff_node(
    services: Services, finance_agent: CompiledStateGraph[Any, Any, Any, Any]
) -> Node:
    """Build the node that hands a transfer to the finance agent and brings the result back."""

    def finance(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
        """Hand over with a request built from the slots and the trusted payer account."""
        context = context_of(runtime)
        slots = state.get("slots") or {}
        account = services.database.query_one(
            "SELECT account_id FROM accounts WHERE user_id = ? ORDER BY account_id LIMIT 1",
            (context.user_id,),
        )
        parent_task = state.get("task_id", "")
        needed = "finance:refund" if state.get("intent") == "REQUEST_REFUND" else "finance:transfer"
        if not role_allows(context.user_role, needed):
            result = envelope(
                tool="verify_identity",
                status="rejected",
                error_type="permission_denied",
                message=f"role {context.user_role!r} may not ask finance ({needed})",
                request_id=parent_task,
            )
            return {"tool_results": [result], "error": result, "step_count": 1}
        if account is None and state.get("intent") != "REQUEST_REFUND":
            result = envelope(
                tool="verify_identity",
                status="failed",
                error_type="not_found",
                message="the user has no account",
                request_id=parent_task,
            )
            return {"tool_results": [result], "error": result, "step_count": 1}
        if state.get("intent") == "REQUEST_REFUND":
            request = {
                "kind": "refund",
                "order_id": slots.get("order_id"),
                "reason": slots.get("reason"),
            }
        else:
            request = {
                "kind": "transfer",
                "account_id": account["account_id"] if account else "",
                "to_account": slots.get("to_account"),
                "amount_cents": slots.get("amount_cents"),
                "pin": slots.get("pin"),
            }
        finance_task = f"{parent_task}.finance"
        handover = protocol_message(
            state,
            runtime,
            role="agent",
            content={
                "stage": "handoff",
                "to": "finance_agent",
                "task": finance_task,
                "request": {**request, **({"pin": "******"} if "pin" in request else {})},
            },
        )
        out = finance_agent.invoke(
            {
                "request": request,
                "task_id": finance_task,
                "parent_task_id": parent_task,
                "language": state.get("language", "zh"),
            },
            context=runtime.context,
        )
        steps = out.get("steps") or []
        back = protocol_message(
            state,
            runtime,
            role="agent",
            content={
                "stage": "handback",
                "from": "finance_agent",
                "task": finance_task,
                "steps": [(s["tool"], s["status"]) for s in steps],
            },
        )
        return {
            "tool_results": steps,
            "protocol": [handover, *(out.get("protocol") or []), back],
            "error": out.get("failed"),
            "step_count": 1,
        }

    return finance


def route_after_finance(state: AgentState) -> Literal["reply"]:
    """The finance agent's result, success or the failing step's, is explained to the user."""
    return "reply"
