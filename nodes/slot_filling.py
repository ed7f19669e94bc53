"""Slot filling: gather the parameters the task's tool needs, never inventing one."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from langgraph.runtime import Runtime

from nodes.common import Node, context_of, latest_user_message, message_text, protocol_message
from nodes.services import Services
from nodes.tasks import TASKS
from state import AgentState, Context
from tools.vault import TOKEN_PREFIX, IdentityVault, mask_id_card


def make_slot_filling_node(services: Services) -> Node:
    """Build the node that extracts slots and, once complete, plans the tool call."""

    def slot_filling(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
        """Merge this message's slots into the task's; list what is still missing."""
        intent = state.get("intent", "")
        text = message_text(latest_user_message(state))
        found = services.understanding.extract_slots(text, intent)
        new_slots = vault_identity(found.slots, services, context_of(runtime).user_id)
        slots = {**(state.get("slots") or {}), **new_slots}
        calls, missing = plan_tool_calls(intent, slots, state.get("task_id", ""))
        note = protocol_message(
            state,
            runtime,
            role="agent",
            content={
                "stage": "slot_filling",
                "status": "success" if not missing else "incomplete",
                "slot": slots,
                "missing": missing,
                "invalid": found.invalid,
            },
            tool_calls=calls,
            confidence=state.get("confidence", 1.0),
        )
        return {
            "slots": new_slots,
            "missing_slots": missing,
            "invalid_slots": found.invalid,
            "pending_tool_calls": calls,
            "step_count": 1,
            "protocol": [note],
        }

    return slot_filling


def vault_identity(slots: dict[str, Any], services: Services, user_id: str) -> dict[str, Any]:
    """Swap an ID number or a PIN for a vault token, so state never holds it."""
    out = dict(slots)
    vault = IdentityVault(services.database)
    number = slots.get("passenger_id")
    if number and not str(number).startswith(TOKEN_PREFIX):
        out["passenger_id"] = vault.store(user_id, str(number))
        out["passenger_id_masked"] = mask_id_card(str(number))
    pin = slots.get("pin")
    if pin and not str(pin).startswith(TOKEN_PREFIX):
        out["pin"] = vault.store(user_id, str(pin), masked="******")
        out["pin_masked"] = "******"
    return out


def plan_tool_calls(
    intent: str, slots: dict[str, Any], task_id: str
) -> tuple[list[dict[str, Any]], list[str]]:
    """Plan the intent's tool call from the slots; return (calls, missing slots).

    Nothing is planned while a required slot is missing: a value is never made up.
    """
    spec = TASKS[intent]
    missing = [name for name in spec.required_slots if name not in slots]
    if missing:
        return [], missing
    parameters = {name: slots[name] for name in spec.required_slots}
    calls = [
        {
            "id": _call_id(task_id, spec.tool, parameters),
            "name": spec.tool,
            "parameters": parameters,
        }
    ]
    for slot, tool in spec.on_request:  # asked-for extras, such as a notification
        if slots.get(slot):
            extra = {**parameters, "channel": slots[slot]}
            calls.append({"id": _call_id(task_id, tool, extra), "name": tool, "parameters": extra})
    return calls, []


def _call_id(task_id: str, tool: str, parameters: dict[str, Any]) -> str:
    """Derive the call id from the task and arguments, so a replay plans the same call."""
    canonical = json.dumps(parameters, sort_keys=True, ensure_ascii=False)
    return "call_" + hashlib.sha256(f"{task_id}|{tool}|{canonical}".encode()).hexdigest()[:16]
