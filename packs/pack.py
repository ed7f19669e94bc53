"""A ``Scenario`` from tool cards and a policy: one task per tool, generic words, no cue tables.

``pack_from_functions`` turns functions into cards (``packs.functions``) and each card into
a task whose required slots are the function's required parameters; ``pack_from_module``
takes a module's public functions. The pack's wording asks for a missing parameter with its
docstring description and names a task by its tool; its describer says a result as compact
JSON (the conversation then holds the ids a later call needs) and a failure with the tool's
own message. Understanding comes from ``Pack.generator``: the model command generator with
the policy in its prompt (``packs.understanding``).
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from types import ModuleType
from typing import TYPE_CHECKING, Any

from contract.scenario import Scenario, SlotResult, Speaker, TaskSpec, Text
from packs.functions import (
    Invoke,
    ToolAnnotation,
    card_from_function,
    direct_invoke,
    required_parameters,
)
from state import AgentState, ToolResult
from tools.registry.cards import ToolCard

if TYPE_CHECKING:
    from packs.understanding import PackCommandGenerator
    from understanding.rules import RuleCommandGenerator

RESULT_CHARS = 1500
"""How much of a result's JSON a reply carries (the rest is cut, and said so)."""
DESCRIPTION_CHARS = 160


@dataclass(frozen=True)
class Pack:
    """A scenario made from tools and a policy, and how to read messages for it."""

    scenario: Scenario
    """The scenario the graph serves (``build_graph(scenarios=[pack.scenario])``)."""
    policy: str
    """The policy text the command generator's prompt carries."""
    functions: Mapping[str, str] = field(default_factory=dict)
    """Card name → the function it calls (they differ when an annotation renamed it)."""

    @property
    def cards(self) -> tuple[ToolCard, ...]:
        """The pack's tool cards."""
        return self.scenario.cards

    def generator(
        self, llm: Any, rules: RuleCommandGenerator, **options: Any
    ) -> PackCommandGenerator:
        """The model command generator for this pack (``Services(commands=...)``)."""
        from packs.understanding import PackCommandGenerator  # noqa: PLC0415 - a cycle

        return PackCommandGenerator(llm, self.cards, self.policy, rules, **options)


def pack_from_functions(
    name: str,
    functions: Sequence[Callable[..., Any]],
    *,
    policy: str,
    annotations: Mapping[str, ToolAnnotation] | None = None,
    invoke: Invoke | None = None,
    roles: Iterable[str] = ("customer",),
) -> Pack:
    """Build a pack from typed functions and a policy text.

    Args:
        name: The pack's name (its domain and permission prefix).
        functions: Typed, documented functions; each becomes a tool and a task.
        policy: What the agent must and must not do, in words; the model reads it.
        annotations: Function name → what its signature cannot say (overrides ``@tool``).
        invoke: Runs a call (``invoke(function_name, arguments)``); default: the function.
        roles: The roles granted every tool of the pack.
    """
    annotations = annotations or {}
    by_name = {fn.__name__: fn for fn in functions}
    call = invoke or direct_invoke(by_name)
    cards = tuple(
        card_from_function(fn, annotations.get(fn.__name__), pack=name, invoke=call)
        for fn in functions
    )
    names = {card.name: fn.__name__ for card, fn in zip(cards, functions, strict=True)}
    return Pack(scenario=scenario_of(name, cards, roles=roles), policy=policy, functions=names)


def pack_from_module(
    module: ModuleType,
    *,
    policy: str,
    name: str | None = None,
    annotations: Mapping[str, ToolAnnotation] | None = None,
    roles: Iterable[str] = ("customer",),
) -> Pack:
    """Build a pack from a module's public functions (those defined in it, in source order)."""
    functions = [
        fn
        for fn_name, fn in inspect.getmembers(module, inspect.isfunction)
        if not fn_name.startswith("_") and fn.__module__ == module.__name__
    ]
    functions.sort(key=lambda fn: fn.__code__.co_firstlineno)
    return pack_from_functions(
        name or module.__name__.rsplit(".", 1)[-1],
        functions,
        policy=policy,
        annotations=annotations,
        roles=roles,
    )


def scenario_of(name: str, cards: Sequence[ToolCard], *, roles: Iterable[str]) -> Scenario:
    """The scenario of ``cards``: a task per card, generic wording and describers."""
    tasks = tuple(
        TaskSpec(
            intent=card.name,
            tool=card.name,
            required_slots=required_parameters(card.parameters),
            handoff_on_failure=False,
        )
        for card in cards
    )
    permissions = frozenset(card.permission for card in cards)
    return Scenario(
        name=name,
        tasks=tasks,
        cards=tuple(cards),
        grants={role: permissions for role in roles},
        cues={},
        extract=_no_rules,
        wording=_wording(cards),
        describe={card.name: describe_result for card in cards},
    )


def _no_rules(text: str, intent: str, *, today: date) -> SlotResult:
    """A pack has no slot rules: its values come from the model's commands, checked there."""
    return SlotResult()


def label_of(name: str) -> str:
    """``get_order_details`` → ``get order details``."""
    return name.replace("_", " ")


_EXAMPLE = re.compile(
    r",?\s*(?:each\s+)?(?:such as|e\.g\.|for example)\s*'[^']*'(?:\s*(?:or|and|,)\s*'[^']*')*",
    re.IGNORECASE,
)
"""An example value in a description: a question never shows it (the user would echo it)."""
OPEN_WORDS: dict[str, Text] = {
    "ask_intent_open": {
        "zh": "抱歉，我没太明白您需要什么，能具体说说吗？",
        "en": "Sorry, I'm not sure what you need. Could you tell me what you would like done?",
    },
    "act.greet": {"zh": "您好！请问有什么可以帮您？", "en": "Hello! How can I help you today?"},
}
"""A pack's tools are many and named for a program: a question lists none of them."""


def _wording(cards: Sequence[ToolCard]) -> dict[str, Text]:
    words: dict[str, Text] = dict(OPEN_WORDS)
    for card in cards:
        label = label_of(card.name)
        words[f"intent.{card.name}"] = {"zh": label, "en": label}
        for slot, info in card.parameters.model_fields.items():
            shown = label_of(slot)
            hint = _EXAMPLE.sub("", " ".join((info.description or "").split()))
            hint = hint.strip().rstrip(".")[:DESCRIPTION_CHARS]
            words.setdefault(f"slot.{slot}", {"zh": shown, "en": shown})
            if hint:  # a confirmation names the argument by its ``Args:`` description
                words.setdefault(f"field.{slot}", {"zh": hint, "en": hint})
            ask = f"Please tell me the {shown}" + (f" ({hint})" if hint else "") + "."
            words.setdefault(f"ask.{slot}", {"zh": f"请提供 {shown}。", "en": ask})
    return words


def describe_result(result: ToolResult, state: AgentState, speaker: Speaker) -> str | None:
    """Say a result as compact JSON, or a failure with the tool's own message."""
    tool = str(result.get("tool") or "")
    label = speaker.label(tool) if tool else "the request"
    if result.get("status") == "success":
        return f"{label}: {compact(result.get('data'))}"
    message = result.get("message")
    if result.get("error_type") in ("user_fixable", "not_found", "conflict") and message:
        return f"Could not {label}: {message}"
    return None


def compact(data: Any, limit: int = RESULT_CHARS) -> str:
    """``data`` as short JSON: no empty values, no spaces after separators, cut at ``limit``."""
    text = json.dumps(_pruned(data), ensure_ascii=False, separators=(",", ":"), default=str)
    if len(text) <= limit:
        return text
    return text[:limit] + "…(cut)"


def _pruned(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _pruned(v) for k, v in value.items() if v not in (None, "", [], {})}
    if isinstance(value, list | tuple):
        return [_pruned(v) for v in value]
    return value


__all__ = [
    "RESULT_CHARS",
    "Pack",
    "compact",
    "describe_result",
    "label_of",
    "pack_from_functions",
    "pack_from_module",
    "scenario_of",
]
