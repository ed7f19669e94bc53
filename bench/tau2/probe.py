"""Does the user model play the user? One reply per task, before hours of simulations.

τ²'s orchestrator opens every conversation with the same greeting ("Hi! How can I help you
today?"); τ²'s user simulator answers it from the task's instructions. A model too small
for the role answers as an agent would ("Hello! How can I assist you today?") and the
conversation never gets to the task, whatever the agent does. This asks τ²'s own simulator
for its first message on each task and says in how many it stayed in its role.
"""

from __future__ import annotations

from typing import Any

from bench.tau2.causes import ROLE_BROKEN
from bench.tau2.runner import Endpoint

GREETING = "Hi! How can I help you today?"


def probe_user(
    domain: str, split: str | None, user: Endpoint, tasks: int | None = None
) -> dict[str, Any]:
    """τ²'s simulator's first message on each task, and whether it left its role."""
    from tau2.data_model.message import AssistantMessage  # noqa: PLC0415 - the tau2 group
    from tau2.run import get_tasks  # noqa: PLC0415
    from tau2.user.user_simulator import UserSimulator  # noqa: PLC0415

    first: dict[str, dict[str, Any]] = {}
    for task in get_tasks(domain, split, num_tasks=tasks):
        simulator = UserSimulator(
            tools=None,
            instructions=str(task.user_scenario),
            llm=user.litellm_name,
            llm_args=user.llm_args(),
        )
        state = simulator.get_init_state()
        message, _ = simulator.generate_next_message(
            AssistantMessage(role="assistant", content=GREETING), state
        )
        text = message.content or ""
        first[str(task.id)] = {"first": text, "role_broken": bool(ROLE_BROKEN.search(text))}
    broken = sum(1 for f in first.values() if f["role_broken"])
    return {
        "domain": domain,
        "split": split,
        "user_model": user.model,
        "tasks": len(first),
        "in_role": len(first) - broken,
        "role_broken": broken,
        "first_messages": first,
    }


__all__ = ["GREETING", "probe_user"]
