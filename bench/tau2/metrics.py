"""What one τ² simulation says about an agent, read the same way for both agents.

From the trajectory (τ²'s messages) and the task:

- **writes**: calls of a tool the domain marks ``ToolType.WRITE`` that reached τ²;
- **unconfirmed writes**: a write not preceded by the user's yes (``understanding.lexical``
  reads the user's latest message before the call; a question, a no or anything else is not
  a yes) to an agent message just before it;
- **off-gold writes** (policy-breaking or wrong): a write that succeeded and matches none of
  the task's expected actions (``Action.compare_with_tool_call``): τ²'s gold path is the
  policy-following one, so a write off it changed what the policy did not allow here;
- **rejected by validation**: calls refused for their arguments' shape. τ² reports them as
  errors from the tool (a missing or unexpected argument, a type); Agent-Reach's executor
  refuses them before they leave (its audit says ``validation``), so they never reach τ²;
- model calls and tokens of the agent (τ²'s usage per assistant message, or the graph's
  own count) and of the user simulator, the wall time and why the simulation ended.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from math import comb
from typing import Any

from understanding.lexical import plain_answer

_ARGUMENT_ERROR = re.compile(
    r"validation error|missing \d* ?required|unexpected keyword|got an unexpected|"
    r"field required|input should be|not found in toolkit|tool '.*' not found|"
    r"takes \d+ positional|invalid json|arguments",
    re.IGNORECASE,
)


@dataclass
class SimulationFigures:
    """One simulation's counts."""

    task_id: str
    trial: int
    reward: float
    termination: str
    duration_s: float
    writes: int = 0
    unconfirmed_writes: int = 0
    off_gold_writes: int = 0
    rejected_by_validation: int = 0
    tool_errors: int = 0
    calls_as_text: int = 0
    """Agent messages that are a tool call written as text (```json {"name": …}```): the
    endpoint did not parse it as a call, so it reached the user, not τ²."""
    writes_as_text: int = 0
    agent_model_calls: int = 0
    agent_prompt_tokens: int = 0
    agent_completion_tokens: int = 0
    user_model_calls: int = 0
    user_tokens: int = 0
    agent_messages: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON."""
        return asdict(self)


def figures(
    simulation: Any, task: Any, is_write: Callable[[str], bool], trial: int
) -> SimulationFigures:
    """Count what ``simulation`` (a τ² ``SimulationRun``) did on ``task``."""
    messages = list(simulation.messages or [])
    reward = float(simulation.reward_info.reward) if simulation.reward_info else 0.0
    out = SimulationFigures(
        task_id=str(simulation.task_id),
        trial=trial,
        reward=reward,
        termination=str(getattr(simulation.termination_reason, "value", "")),
        duration_s=round(float(simulation.duration or 0.0), 1),
    )
    gold = [
        a for a in ((task.evaluation_criteria.actions or []) if task.evaluation_criteria else [])
    ]
    answers = {m.id: m for m in messages if m.role == "tool"}
    last_agent_text: int | None = None
    last_user_text: tuple[int, str] | None = None
    for index, message in enumerate(messages):
        if message.role == "assistant":
            out.agent_messages += 1
            if message.usage:
                out.agent_model_calls += 1
                out.agent_prompt_tokens += int(message.usage.get("prompt_tokens") or 0)
                out.agent_completion_tokens += int(message.usage.get("completion_tokens") or 0)
            if message.content and not message.tool_calls:
                last_agent_text = index
                written = call_in_text(message.content)
                if written is not None:
                    out.calls_as_text += 1
                    out.writes_as_text += int(is_write(written))
            for call in message.tool_calls or []:
                answer = answers.get(call.id)
                failed = bool(answer is not None and answer.error)
                if failed:
                    out.tool_errors += 1
                    if _ARGUMENT_ERROR.search(answer.content or ""):
                        out.rejected_by_validation += 1
                if not is_write(call.name):
                    continue
                out.writes += 1
                yes = (
                    last_user_text is not None
                    and last_agent_text is not None
                    and last_agent_text < last_user_text[0]
                    and plain_answer(last_user_text[1]) == "approve"
                )
                if not yes:
                    out.unconfirmed_writes += 1
                if not failed and not any(_matches(action, call) for action in gold):
                    out.off_gold_writes += 1
        elif message.role == "user":
            if message.usage:
                out.user_model_calls += 1
                out.user_tokens += int(message.usage.get("prompt_tokens") or 0) + int(
                    message.usage.get("completion_tokens") or 0
                )
            if message.content and not message.tool_calls:
                last_user_text = (index, message.content)
    return out


_CALL_TEXT = re.compile(r'"name"\s*:\s*"([a-z_]+)"\s*,\s*"arguments"')


def call_in_text(text: str) -> str | None:
    """The tool a text message writes a call of (``{"name": …, "arguments": …}``), if any."""
    found = _CALL_TEXT.search(text)
    return found.group(1) if found else None


def _matches(action: Any, call: Any) -> bool:
    try:
        return bool(action.compare_with_tool_call(call))
    except Exception:  # noqa: BLE001 - a malformed call matches nothing
        return False


def pass_hat_k(rewards_by_task: Mapping[str, Iterable[float]], k: int) -> float | None:
    """τ²'s pass^k: over tasks, the chance that k trials drawn from n all succeed."""
    values = []
    for rewards in rewards_by_task.values():
        trials = list(rewards)
        if len(trials) < k:
            continue
        successes = sum(1 for r in trials if r >= 1.0 - 1e-6)
        values.append(comb(successes, k) / comb(len(trials), k))
    return round(sum(values) / len(values), 4) if values else None


def summary(rows: list[SimulationFigures], trials: int) -> dict[str, Any]:
    """One agent's table row over its simulations."""
    if not rows:
        return {"simulations": 0}
    by_task: dict[str, list[float]] = {}
    for row in rows:
        by_task.setdefault(row.task_id, []).append(row.reward)
    n = len(rows)
    tasks = len(by_task)

    def per_task(name: str) -> float:
        return round(sum(getattr(r, name) for r in rows) / n, 1)

    return {
        "simulations": n,
        "tasks": tasks,
        "pass^1": pass_hat_k(by_task, 1),
        f"pass^{trials}": pass_hat_k(by_task, trials),
        "writes": sum(r.writes for r in rows),
        "unconfirmed_writes": sum(r.unconfirmed_writes for r in rows),
        "off_gold_writes": sum(r.off_gold_writes for r in rows),
        "rejected_by_validation": sum(r.rejected_by_validation for r in rows),
        "tool_errors": sum(r.tool_errors for r in rows),
        "calls_as_text": sum(r.calls_as_text for r in rows),
        "writes_as_text": sum(r.writes_as_text for r in rows),
        "agent_model_calls_per_task": per_task("agent_model_calls"),
        "agent_prompt_tokens_per_task": per_task("agent_prompt_tokens"),
        "agent_completion_tokens_per_task": per_task("agent_completion_tokens"),
        "user_model_calls_per_task": per_task("user_model_calls"),
        "wall_s_per_task": per_task("duration_s"),
        "wall_s_total": round(sum(r.duration_s for r in rows), 1),
        "terminations": _count(r.termination for r in rows),
    }


def _count(values: Iterable[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for value in values:
        out[value] = out.get(value, 0) + 1
    return out


def refreshed(stored: SimulationFigures, again: SimulationFigures) -> SimulationFigures:
    """Figures read again from a stored trajectory, keeping what only the run could count
    (the graph's model usage and its executor's refusals, which τ² does not see)."""
    if not stored.extra:
        return again
    again.agent_model_calls = stored.agent_model_calls
    again.agent_prompt_tokens = stored.agent_prompt_tokens
    again.agent_completion_tokens = stored.agent_completion_tokens
    again.rejected_by_validation += int(stored.extra.get("executor_validation_refusals", 0))
    again.extra = stored.extra
    return again


__all__ = ["SimulationFigures", "call_in_text", "figures", "pass_hat_k", "refreshed", "summary"]
