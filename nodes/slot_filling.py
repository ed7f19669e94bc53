"""Slot filling: gather the parameters the task's tool needs, never inventing one."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.runtime import Runtime

from contract.scenario import HINT_CHARS, Offer, TaskSpec
from nodes.common import (
    Node,
    context_of,
    latest_user_message,
    message_text,
    protocol_message,
    tool_context,
)
from nodes.plan_cache import cached_calls
from nodes.services import Services
from nodes.wording import Voice
from planning.planner import ModelPlan, evidence_names, plan_with_model, scenario_cards
from security.intake import revealed
from security.vault import TOKEN_PREFIX, IdentityVault, mask_id_card
from state import AgentState, Context, Overwrite, SlotValues, StateUpdate, ToolCall, ToolResult
from tools.executor.envelope import CallRequest

MASKED_SUFFIX = "_masked"
"""``<slot>_masked`` holds what a person may be shown of a vaulted slot."""


def make_slot_filling_node(services: Services) -> Node:
    """Build the node that extracts slots and, once complete, plans the tool call."""

    def slot_filling(state: AgentState, runtime: Runtime[Context]) -> StateUpdate:
        """List what the task still misses; once complete, plan its calls (and its step's).

        The slots come from understanding's commands (the intent and reflect-refine nodes
        wrote them, secrets vaulted); nothing here reads a value out of the message. The
        user's own records may still fill a missing one (``TaskSpec.suggest``).
        """
        task = services.catalog.task(state.get("intent"))
        if task is None:  # routers never send an unknown intent here; be safe anyway
            return {"missing_slots": [], "pending_tool_calls": [], "step_count": 1}
        context = context_of(runtime)  # intake tokens reveal for matching, in memory only
        text = revealed(
            message_text(latest_user_message(state)), context.user_id, services.database
        )
        slots = dict(state.get("slots") or {})
        new_slots: SlotValues = {}
        unvaulted = {
            name: value
            for name, value in slots.items()
            if name in task.sensitive_slots and not str(value).startswith(TOKEN_PREFIX)
        }
        if unvaulted:  # a value written without the vault (a fork, an edited state)
            new_slots = vault_sensitive(task, unvaulted, services, context.user_id)
            slots = {**slots, **new_slots}
        invalid = dict(state.get("invalid_slots") or {})
        calls, missing = plan_tool_calls(task, slots, state.get("task_id", ""))
        offer = _suggested(services, state, runtime, task, missing, invalid, text)
        if offer.closing is not None:
            return _closed(state, runtime, offer.closing)
        if offer.filled:  # the message named one of the user's own records
            new_slots = {**new_slots, **offer.filled}
            slots = {**slots, **offer.filled}
            calls, missing = plan_tool_calls(task, slots, state.get("task_id", ""))
        model_notes: dict[str, object] = {}  # what the model and the offer added to the note
        if offer.filled or offer.offered:
            model_notes["suggested"] = {"filled": offer.filled, "offered": sorted(offer.offered)}
        errors: list[str | None] = []
        llm = services.chat_model("tool", context.model)
        if calls and llm is not None and task.agent is None and not task.sensitive_slots:
            cached = cached_calls(
                services,
                task,
                slots,
                role=context.user_role,
                task_id=state.get("task_id", ""),
                user_texts=[text for role, text in conversation(state) if role == "user"],
            )
            if cached is not None:  # a proven plan for this kind of request: no model call
                model_notes["planner"] = {
                    "source": "cache",
                    "plan": cached.key,
                    "successes": cached.successes,
                    "refused": [],
                    "rounds": 0,
                }
                calls = cached.calls
            else:
                plan = model_plan(services, state, task, slots, llm, context.user_role)
                model_notes["planner"] = {
                    "source": "model" if plan.calls else "rules",
                    "refused": plan.refused,
                    "rounds": plan.rounds,
                }
                errors.append(plan.error)
                calls = plan.calls or calls
        if calls and not missing:
            calls = [*calls, *batched_calls(services, state)]
        error = "; ".join(e for e in errors if e) or None
        note = protocol_message(
            state,
            runtime,
            role="agent",
            content={
                "stage": "slot_filling",
                "status": "success" if not missing else "incomplete",
                "slot": slots,
                "missing": missing,
                "invalid": invalid,
                **model_notes,
            },
            tool_calls=calls,
            confidence=state.get("confidence", 1.0) * (0.8 if error else 1.0),
            error=error,
        )
        update: StateUpdate = {
            "missing_slots": missing,
            "slot_offers": {k: v for k, v in offer.offered.items() if k in missing},
            "pending_tool_calls": calls,
            "step_count": 1,
            "protocol": [note],
        }
        if new_slots:
            update["slots"] = new_slots
        return update

    return slot_filling


def _closed(state: AgentState, runtime: Runtime[Context], sentence: str) -> StateUpdate:
    """End the task with ``sentence``: the user's records hold nothing it could be about.

    The intent stays what was understood; with nothing missing, the next message starts
    afresh.
    """
    answer = protocol_message(state, runtime, role="assistant", content=sentence)
    return {
        "decision": "answered",
        "slots": Overwrite({}),
        "missing_slots": [],
        "invalid_slots": {},
        "slot_offers": {},
        "pending_tool_calls": [],
        "step_count": 1,
        "messages": [AIMessage(content=sentence)],
        "protocol": [answer],
    }


def _suggested(
    services: Services,
    state: AgentState,
    runtime: Runtime[Context],
    task: TaskSpec,
    missing: list[str],
    invalid: dict[str, str],
    text: str,
) -> Offer:
    """Ask the task's suggester about the missing slots the user gave no bad value for."""
    asked = [name for name in missing if name not in invalid]
    if task.suggest is None or not asked:
        return Offer()
    ctx = tool_context(runtime, services, task_id=state.get("task_id", ""), results=[])

    def run(call: CallRequest) -> ToolResult:
        return services.executor.execute(call, ctx)

    voice = Voice(
        services.catalog, state.get("language", "zh"), services.catalog.scenario_of.get(task.intent)
    )
    return task.suggest(asked, text[:HINT_CHARS], run, voice)


def batched_calls(services: Services, state: AgentState) -> list[ToolCall]:
    """Plan the calls of the tasks that run in this step beside the active one.

    They are independent reads of the same message ("北京和上海"): complete, low-risk, no
    secret (``understanding.engine`` batches only such tasks). Each call carries its task.
    """
    calls: list[ToolCall] = []
    for frame in state.get("task_stack") or []:
        if frame["status"] != "batched":
            continue
        task = services.catalog.task(frame["intent"])
        if task is None:
            continue
        planned, missing = plan_tool_calls(task, dict(frame["slots"]), frame["task_id"])
        if missing:
            continue
        calls.extend({**call, "task_id": frame["task_id"]} for call in planned)
    return calls


def model_plan(
    services: Services,
    state: AgentState,
    task: TaskSpec,
    slots: SlotValues,
    llm: Any,
    role: str,
) -> ModelPlan:
    """Let the model plan the task's calls over its scenario's tools (checked, see planner)."""
    return plan_with_model(
        llm,
        cards=scenario_cards(services.tools, services.catalog, task, role),
        task=task,
        slots=slots,
        turns=conversation(state),
        task_id=state.get("task_id", ""),
        checked=evidence_names(services.catalog, task),
        today=services.today(),
    )


def conversation(state: AgentState) -> list[tuple[str, str]]:
    """Return the thread's ``(role, text)`` turns, oldest first: the user's and the replies."""
    turns: list[tuple[str, str]] = []
    for message in state.get("messages") or []:
        if isinstance(message, HumanMessage):
            turns.append(("user", message_text(message)))
        elif isinstance(message, AIMessage) and isinstance(message.content, str):
            if message.content:
                turns.append(("assistant", message.content))
    return turns


def vault_sensitive(
    task: TaskSpec, slots: SlotValues, services: Services, user_id: str
) -> SlotValues:
    """Swap the task's sensitive slots for vault tokens, so state never holds them."""
    if not task.sensitive_slots:
        return slots
    out = dict(slots)
    vault = IdentityVault(services.database)
    for name in task.sensitive_slots:
        value = slots.get(name)
        if value and not str(value).startswith(TOKEN_PREFIX):
            masked = mask_secret(str(value))
            out[name] = vault.store(user_id, str(value), masked=masked)
            out[f"{name}{MASKED_SUFFIX}"] = masked
    return out


def mask_secret(value: str) -> str:
    """Mask a vaulted value: an ID number keeps its region and last four, anything else none."""
    if len(value) == 18:
        return mask_id_card(value)
    return "*" * len(value)


def display_values(slots: SlotValues) -> dict[str, str]:
    """Map each vault token in ``slots`` to its masked form, for showing to a person."""
    return {
        str(value): str(slots[f"{name}{MASKED_SUFFIX}"])
        for name, value in slots.items()
        if f"{name}{MASKED_SUFFIX}" in slots
    }


def plan_tool_calls(
    task: TaskSpec, slots: SlotValues, task_id: str
) -> tuple[list[ToolCall], list[str]]:
    """Plan the task's tool call from the slots; return (calls, missing slots).

    Nothing is planned while a required slot is missing: a value is never made up.
    """
    missing = [name for name in task.required_slots if name not in slots]
    if missing:
        return [], missing
    parameters = {name: slots[name] for name in task.required_slots}
    parameters |= {n: slots[n] for n in task.optional_slots if slots.get(n) is not None}
    calls: list[ToolCall] = [
        {
            "id": _call_id(task_id, task.tool, parameters),
            "name": task.tool,
            "parameters": parameters,
        }
    ]
    for slot, tool in task.on_request:  # asked-for extras, such as a notification
        if slots.get(slot):
            extra = {**parameters, "channel": slots[slot]}
            calls.append({"id": _call_id(task_id, tool, extra), "name": tool, "parameters": extra})
    return calls, []


def _call_id(task_id: str, tool: str, parameters: Mapping[str, object]) -> str:
    """Derive the call id from the task and arguments, so a replay plans the same call."""
    canonical = json.dumps(parameters, sort_keys=True, ensure_ascii=False)
    return "call_" + hashlib.sha256(f"{task_id}|{tool}|{canonical}".encode()).hexdigest()[:16]
