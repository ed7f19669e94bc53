"""The finance agent: a subgraph with its own tools, and the hand-off node that calls it.

The customer-service agent has no finance tools. A transfer (or a refund above the
customer-service limit) is handed to the finance agent, which runs the chain strictly in the
order the tools' ``requires`` give (verify → balance → risk → execute), stops at the first
failure with that step's own result, and asks for confirmation before money moves. Its
protocol messages carry their own task id, linked to the conversation's task by
``parent_task_id``; its results come back into the same conversation.
"""

from __future__ import annotations

from typing import Annotated, Any, Protocol, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from nodes.actions import confirm_then_run
from nodes.call_words import call_words
from nodes.common import Node, context_of, protocol_message, tool_context
from nodes.services import Services
from nodes.tool import changes_said, reread
from nodes.wording import Voice
from scenarios.transfer.tools import payer_account
from state import (
    AgentState,
    Context,
    ProtocolRecord,
    StateUpdate,
    ToolResult,
    append_protocol,
    append_results,
)
from tools.executor.pipeline import envelope
from tools.registry.types import Arguments

AGENT = "finance"
"""The node name of the finance agent in the main graph."""
TRANSFER_TOOL = "execute_transfer"
"""The last step of a transfer; the chain before it comes from the tools' ``requires``."""
REFUND_TOOL = "approve_large_refund"
"""What a large refund handed over by the customer-service agent runs."""


class FinanceRequest(TypedDict, total=False):
    """What the customer-service agent hands over."""

    kind: str
    """``transfer`` or ``refund``."""
    account_id: str
    """The payer's account, looked up from the trusted caller (never from the user)."""
    to_account: str
    """The payee's account."""
    amount_cents: int
    """The amount, in cents."""
    pin: str
    """A vault token for the PIN, never the PIN."""
    order_id: str
    """The order of a large refund."""
    reason: str
    """The user's reason for a refund."""


class FinanceState(TypedDict, total=False):
    """The finance agent's own state."""

    request: FinanceRequest
    """What to do."""
    steps: Annotated[list[ToolResult], append_results]
    """Result envelopes of the chain, in order."""
    protocol: Annotated[list[ProtocolRecord], append_protocol]
    """The finance agent's protocol messages."""
    task_id: str
    """The finance task."""
    parent_task_id: str
    """The conversation task that handed over."""
    language: str
    """The user's language, for the confirmation question."""
    failed: ToolResult | None
    """The step that stopped the chain, if any."""
    answer: Any
    """The person's typed answer to the confirmation, when it came as a new message."""
    preface: str | None
    """What the user just changed, said before the confirmation question."""
    reread: str | None
    """Words given instead of a yes or a no: nothing ran; understanding reads them."""


class StepNode(Protocol):
    """A finance step node."""

    def __call__(self, state: FinanceState, *, runtime: Runtime[Context]) -> StateUpdate:
        """Run one step."""
        ...


def _arguments(tool: str, state: FinanceState) -> Arguments:
    """Build a step's arguments from the request and the steps before it."""
    request = state.get("request") or {}
    if tool == REFUND_TOOL:
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
    if tool == TRANSFER_TOOL:
        risk = next(
            (s for s in state.get("steps") or [] if s.get("tool") == "assess_transfer_risk"), None
        )
        return {**plan, "risk_ticket": ((risk or {}).get("data") or {}).get("risk_ticket", "")}
    return plan


def make_step(services: Services, tool: str) -> StepNode:
    """Build the node running one step of the chain through the finance executor."""

    def step(state: FinanceState, runtime: Runtime[Context]) -> StateUpdate:
        """Run the step; a high-risk step is confirmed first, before any effect."""
        ctx = tool_context(
            runtime,
            services,
            task_id=state.get("task_id", ""),
            results=state.get("steps") or [],
        )
        outcome = confirm_then_run(
            services.executor_for(AGENT),
            [{"name": tool, "parameters": _arguments(tool, state)}],
            ctx,
            language=state.get("language", "zh"),
            preface=state.get("preface"),
            answer=state.get("answer"),
            words=call_words(services.catalog, state.get("language", "zh"), ctx),
        )
        if outcome.reread is not None:
            return {"reread": outcome.reread}
        result = outcome.results[0]
        note = protocol_message(
            {"task_id": state.get("task_id", "")},
            runtime,
            role="tool",
            content=result,
            parent_task_id=state.get("parent_task_id"),
            error=result.get("message") if result.get("status") != "success" else None,
        )
        failed = None if result.get("status") == "success" else result
        return {"steps": [result], "protocol": [note], "failed": failed}

    step.__name__ = tool
    return step


def build_finance_agent(services: Services) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile the finance subgraph: one node per tool, in ``requires`` order per request."""
    chains = {
        "transfer": services.catalog.chain_to(AGENT, TRANSFER_TOOL),
        "refund": services.catalog.chain_to(AGENT, REFUND_TOOL),
    }
    steps = list(dict.fromkeys(tool for chain in chains.values() for tool in chain))

    def chain_of(state: FinanceState) -> tuple[str, ...]:
        return chains.get((state.get("request") or {}).get("kind", ""), chains["transfer"])

    def route_start(state: FinanceState) -> str:
        """Start the chain the request asks for."""
        return chain_of(state)[0]

    def route_chain(state: FinanceState) -> str:
        """Go to the next step after a success; stop the chain at the first failure."""
        if state.get("failed") or state.get("reread"):
            return END
        done = {s.get("tool") for s in state.get("steps") or []}
        remaining = [tool for tool in chain_of(state) if tool not in done]
        return remaining[0] if remaining else END

    builder = StateGraph(FinanceState, context_schema=Context)
    for tool in steps:
        builder.add_node(tool, make_step(services, tool))
    builder.add_conditional_edges(START, route_start, steps)
    for tool in steps:
        builder.add_conditional_edges(tool, route_chain, [*steps, END])
    return builder.compile(name="finance_agent")


def make_finance_node(services: Services) -> Node:
    """Build the node that hands a request to the finance agent and brings the result back."""
    finance_agent = build_finance_agent(services)

    def finance(state: AgentState, runtime: Runtime[Context]) -> StateUpdate:
        """Hand over a transfer (from the slots) or a large refund (from the refund tool)."""
        context = context_of(runtime)
        parent_task = state.get("task_id", "")
        handed = ((state.get("error") or {}).get("data") or {}) if state.get("error") else {}
        kind = "refund" if handed.get("handoff") == AGENT else "transfer"
        needed = "finance:refund" if kind == "refund" else "finance:transfer"
        if not services.permissions.allows(context.user_role, needed):
            result = envelope(
                tool="verify_identity",
                status="rejected",
                error_type="permission_denied",
                message=f"role {context.user_role!r} may not ask finance ({needed})",
                request_id=parent_task,
            )
            return {"tool_results": [result], "error": result, "step_count": 1, "awaiting": None}
        slots = state.get("slots") or {}
        request: FinanceRequest
        if kind == "refund":
            request = {
                "kind": "refund",
                "order_id": str(handed.get("order_id") or slots.get("order_id") or ""),
                "reason": str(slots.get("reason") or ""),
            }
        else:
            account = payer_account(services.database, context.user_id)
            if account is None:
                result = envelope(
                    tool="verify_identity",
                    status="failed",
                    error_type="not_found",
                    message="the user has no account",
                    request_id=parent_task,
                )
                return {
                    "tool_results": [result],
                    "error": result,
                    "step_count": 1,
                    "awaiting": None,
                }
            request = {
                "kind": "transfer",
                "account_id": account,
                "to_account": slots.get("to_account", ""),
                "amount_cents": slots.get("amount_cents", 0),
                "pin": slots.get("pin", ""),
            }
        finance_task = f"{parent_task}.finance"
        shown = {**request, **({"pin": "******"} if "pin" in request else {})}
        handover = protocol_message(
            state,
            runtime,
            role="agent",
            content={
                "stage": "handoff",
                "to": "finance_agent",
                "task": finance_task,
                "request": shown,
            },
        )
        out = finance_agent.invoke(
            {
                "request": request,
                "task_id": finance_task,
                "parent_task_id": parent_task,
                "language": state.get("language", "zh"),
                "answer": state.get("answer"),
                "preface": changes_said(
                    state, Voice(services.catalog, state.get("language", "zh")), services
                ),
            },
            context=runtime.context,
        )
        if out.get("reread"):
            return reread(state, str(out["reread"]))
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
            "awaiting": None,
            "answer": None,
        }

    return finance
