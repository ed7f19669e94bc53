"""Why a τ² simulation failed, read from its trajectory: one cause each, the first that holds.

1. ``policy``: a write went out without the user's yes, or off the task's gold path;
2. ``simulator``: the simulated user left its role (answered as an agent would: "How can I
   assist you?", "I'm here to help you with your order", "I'm just a computer program", "I
   don't have access to …", or ended the call at once) before the task could be done, or
   never said what it wanted;
3. ``tool error``: a call failed for the data (not its arguments' shape) and no gold write
   followed;
4. ``slot``: the agent kept asking for the same detail (three times or more), or calls were
   refused for their arguments;
5. ``understanding``: none of these: the agent did the wrong thing or nothing (a wrong tool,
   no write where one was due, a conversation that ran out of steps);
6. ``error``: the simulation itself raised (a prompt longer than the context, say).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

ROLE_BROKEN = re.compile(
    r"how (?:can|may) i (?:help|assist) you|i'?m (?:just )?(?:a|an) (?:computer program|ai\b|"
    r"language model|assistant|virtual)|i don'?t have access to|as an ai\b|"
    r"i (?:can(?:no|')t|am unable to) (?:provide|access) (?:any )?(?:personal|your)|"
    r"i'?m here to (?:help|assist)|is there anything (?:specific )?(?:you|i can)|^\s*###stop###",
    re.IGNORECASE,
)
CAUSES = ("policy", "simulator", "tool error", "slot", "understanding", "error")


def cause(simulation: Any, figures: Any) -> str | None:
    """The failure's cause, or ``None`` for a simulation that passed."""
    if simulation.reward_info is not None and simulation.reward_info.reward >= 1.0 - 1e-6:
        return None
    messages = list(simulation.messages or [])
    if not messages:
        return "error"
    if figures.unconfirmed_writes or figures.off_gold_writes:
        return "policy"
    users = [m.content or "" for m in messages if m.role == "user" and not m.tool_calls]
    if any(ROLE_BROKEN.search(text) for text in users[:4]) or not any(u.strip() for u in users):
        return "simulator"
    if figures.tool_errors > figures.rejected_by_validation and not figures.writes:
        return "tool error"
    asked = Counter((m.content or "").strip() for m in messages if _asks(m))
    if figures.rejected_by_validation or (asked and max(asked.values()) >= 3):
        return "slot"
    return "understanding"


def _asks(message: Any) -> bool:
    """An agent message that asks the user something."""
    if message.role != "assistant" or message.tool_calls or not message.content:
        return False
    text = message.content.strip()
    return "?" in text or text.lower().startswith(("please tell me", "请提供"))


def tally(simulations: list[Any], rows: list[Any]) -> dict[str, int]:
    """Failed simulations by cause (``rows``: their figures, matched by task and trial)."""
    by_key = {(row.task_id, row.trial): row for row in rows}
    counted: Counter[str | None] = Counter(
        cause(sim, by_key[(str(sim.task_id), sim.trial)])
        for sim in simulations
        if (str(sim.task_id), sim.trial) in by_key
    )
    counted.pop(None, None)
    return {name: counted.get(name, 0) for name in CAUSES if counted.get(name)}


__all__ = ["CAUSES", "cause", "tally"]
