"""The model's prompt for a pack: a fixed part a server's prompt cache keeps, and the situation.

The fixed part is the instructions, the **policy** and the tools (each with its parameters,
``[write]`` for a write, its first sentence and a few example requests); the policy is cut at
a paragraph when the whole would leave the situation less than ``SITUATION_MIN_TOKENS``. The
situation is today, the latest turns, what waits (a call's missing values, a yes or no) and
the message, held within what the fixed part leaves of ``budget_tokens``. Used by
``packs.understanding``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date
from typing import Any

from contract.scenario import Examples
from packs.grounding import param_hint
from tools.registry.cards import ToolCard
from understanding.model_base import commands_schema
from understanding.view import DialogueView, TaskView

KINDS = ("start", "set", "correct", "cancel", "confirm", "reject", "handoff", "cannot_tell")
NO_TOOL = "none"
MAX_COMMANDS = 3
BUDGET_TOKENS = 3500
"""The prompt's ceiling (fixed part and situation), in estimated tokens."""
CHARS_PER_TOKEN = 3.0
"""A cautious estimate: ids and JSON tokenize densely (a digit is often a token)."""
TURN_CHARS = 1600
"""Longest single turn shown; a longer one keeps its start."""
SITUATION_MIN_TOKENS = 900
"""What the situation always keeps room for; the policy is cut to leave it."""
EXAMPLES_SHOWN = 2
"""Example requests shown per tool and language in the prompt."""

INSTRUCTIONS = (
    "You are the understanding step of a customer-service agent. Read the customer's latest "
    "message in the light of the conversation and say, as JSON commands, which tool call it "
    "asks for. You never write to the customer: the agent asks for missing values itself, "
    "and asks for a yes before any change.\n"
    "Kinds: start = call a tool now (give every argument the conversation already shows); "
    "set = gives what the waiting call asks for; correct = changes a value of the waiting or "
    "pending call; cancel = drops the waiting call; reject = says no to the pending call; "
    "handoff = wants a human agent, or the policy says to transfer; cannot_tell = no tool fits.\n"
    "Pick the tool that does what the customer asks: to book, freeze, cancel or change "
    "something, start that write (the agent looks up what it needs); a lookup only when the "
    "customer asks to see something. Follow the policy. Copy values exactly as written in "
    "the conversation or a result; never invent one; leave out what is not known yet. "
    "Dates as YYYY-MM-DD. A list value is a JSON list."
)


def fixed_prompt(
    cards: Mapping[str, ToolCard], examples: Examples, policy: str, budget_tokens: int
) -> str:
    """The instructions, the policy (cut to leave the situation room) and the tools."""
    tools = ["Tools (a write is done only after the customer's yes):"]
    for card in cards.values():
        params = ", ".join(
            param_hint(name, info.annotation, info.is_required())
            for name, info in card.parameters.model_fields.items()
        )
        mark = " [write]" if card.writes else ""
        tools.append(f"- {card.name}({params}){mark}: {_first_sentence(card.description)}")
        said = [
            example
            for language in ("en", "zh")
            for example in examples.get(card.name, {}).get(language, ())[1 : 1 + EXAMPLES_SHOWN]
        ]
        if said:
            tools.append("  e.g. " + " | ".join(f'"{s}"' for s in said))
    fixed = f"{INSTRUCTIONS}\n" + "\n".join(tools)
    room = int((budget_tokens - SITUATION_MIN_TOKENS) * CHARS_PER_TOKEN) - len(fixed)
    return f"{INSTRUCTIONS}\nPolicy:\n{_cut(policy.strip(), room)}\n" + "\n".join(tools)


def situation(
    view: DialogueView, text: str, *, today: date, system_prompt: str, budget_tokens: int
) -> str:
    """The dynamic part of the prompt, held within what the fixed part leaves."""
    tail: list[str] = []
    if view.pending is not None:
        tail.append(f"Waiting for a yes or no: {view.pending.intent}({_shown(view.pending)})")
    if view.waiting is not None:
        tail.append(
            f"Waiting call: {view.waiting.intent} needs {', '.join(view.waiting.missing)}; "
            f"has {_shown(view.waiting) or 'nothing'}"
        )
    tail.append(f"Message: {text[:TURN_CHARS]}")
    head = [f"Today: {today.isoformat()} ({today.strftime('%A')})"]
    room = int(budget_tokens * CHARS_PER_TOKEN) - len(system_prompt)
    room -= sum(len(line) + 1 for line in [*head, *tail])
    turns: list[str] = []
    for who, said in reversed(view.recent):
        line = f"{who}: {' '.join(said.split())[:TURN_CHARS]}"
        if len(line) + 1 > room:
            break
        turns.append(line)
        room -= len(line) + 1
    if turns:
        head += ["Conversation (latest last):", *reversed(turns)]
    return "\n".join([*head, *tail])


def schema(cards: Mapping[str, ToolCard]) -> dict[str, Any]:
    """The JSON schema of the model's answer: commands naming the pack's tools."""
    names = sorted({n for card in cards.values() for n in card.parameters.model_fields})
    return commands_schema(
        kinds=KINDS,
        target="tool",
        targets=[*cards, NO_TOOL],
        values="arguments",
        names=names or [NO_TOOL],
        max_commands=MAX_COMMANDS,
        max_values=8,
        description="What the customer's message asks the agent to do.",
    )


def _shown(task: TaskView) -> str:
    return ", ".join(f"{k}={v}" for k, v in task.slots.items())


def _first_sentence(text: str) -> str:
    match = re.match(r"(.+?[.!?])(?:\s|$)", " ".join(text.split()))
    return match.group(1) if match else text


def _cut(policy: str, room: int) -> str:
    """The policy, cut at a paragraph to ``room`` characters when it is longer."""
    if len(policy) <= room:
        return policy
    kept = policy[: max(room, 0)]
    end = kept.rfind("\n\n")
    return (kept[:end] if end > 0 else kept) + "\n(policy cut here for length)"


__all__ = ["BUDGET_TOKENS", "MAX_COMMANDS", "NO_TOOL", "fixed_prompt", "schema", "situation"]
