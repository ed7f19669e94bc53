"""A ``Scenario`` from tool cards and a policy: one task per tool, words from the docstrings.

``pack_from_functions`` turns functions into cards (``packs.functions``) and each card into
a task whose required slots are the function's required parameters (the optional ones are
passed when given); ``pack_from_module`` takes a module's public functions. The scenario it
builds is served like any other (``build_graph(scenarios=[pack.scenario])``):

- its example requests (``Scenario.examples``) come from each function's description, the
  ``Examples:`` section of its docstring and ``examples=``: the recognizer's training data;
- its slot extractor reads values by type (``packs.values``); a message of nothing but a
  read's one value asks for that read (``Scenario.bare``); a value missing from a request is
  looked up through a read the message gives everything to (``TaskSpec.suggest``);
- its wording and describers say questions and results in sentences (``packs.wording``);
- its own command generator (``Scenario.commands``) reads messages with the rules and typed
  values first and the configured model for what they leave unsure, the policy in its
  prompt (``packs.understanding``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from contract.scenario import Examples, Scenario, TaskSpec, Text
from packs.docs import merged_examples, request_examples, result_fields
from packs.functions import (
    Invoke,
    ToolAnnotation,
    annotation_of,
    card_from_function,
    direct_invoke,
    required_parameters,
)
from packs.reading import PackValues, bare_patterns, lookup, result_keys
from packs.understanding import PackCommandGenerator, pack_reader
from packs.wording import describer_of, pack_wording
from tools.registry.cards import ToolCard
from understanding.reader import RuleCommandGenerator


@dataclass(frozen=True)
class Pack:
    """A scenario made from tools and a policy, and how to read messages for it."""

    scenario: Scenario
    """The scenario the graph serves (``build_graph(scenarios=[pack.scenario])``)."""
    policy: str
    """The policy text the command generator's prompt carries."""
    functions: Mapping[str, str] = field(default_factory=dict)
    """Card name → the function it calls (they differ when an annotation renamed it)."""
    gives: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Card name → the fields of its result (what a read can look up for another task)."""

    @property
    def cards(self) -> tuple[ToolCard, ...]:
        """The pack's tool cards."""
        return self.scenario.cards

    def generator(
        self, llm: Any, rules: RuleCommandGenerator, **options: Any
    ) -> PackCommandGenerator:
        """The pack's command generator over ``llm`` (``None``: the rules and typed values).

        ``build_graph`` builds it from the settings (``REACH_MODEL``); this is for a caller
        that brings its own client (the τ² adapter).
        """
        options.setdefault("examples", self.scenario.examples)
        options.setdefault("gives", self.gives)
        return PackCommandGenerator(llm, self.cards, self.policy, rules, **options)


def pack_from_functions(
    name: str,
    functions: Sequence[Callable[..., Any]],
    *,
    policy: str,
    annotations: Mapping[str, ToolAnnotation] | None = None,
    invoke: Invoke | None = None,
    roles: Iterable[str] = ("customer",),
    examples: Mapping[str, Sequence[str]] | None = None,
) -> Pack:
    """Build a pack from typed functions and a policy text.

    Args:
        name: The pack's name (its domain and permission prefix).
        functions: Typed, documented functions; each becomes a tool and a task.
        policy: What the agent must and must not do, in words; the model reads it.
        annotations: Function name → what its signature cannot say (overrides ``@tool``).
        invoke: Runs a call (``invoke(function_name, arguments)``); default: the function.
        roles: The roles granted every tool of the pack.
        examples: Function name → requests users make for it (Chinese or English), beside
            those of its docstring and its ``@tool(examples=...)``.
    """
    annotations = annotations or {}
    by_name = {fn.__name__: fn for fn in functions}
    call = invoke or direct_invoke(by_name)
    notes = {fn.__name__: annotation_of(fn, annotations.get(fn.__name__)) for fn in functions}
    cards = tuple(
        card_from_function(fn, notes[fn.__name__], pack=name, invoke=call) for fn in functions
    )
    fields: dict[str, Mapping[str, Text]] = {}
    gives: dict[str, frozenset[str]] = {}
    said: dict[str, dict[str, tuple[str, ...]]] = {}
    describe: dict[str, Callable[[Any, str], str | None]] = {}
    for card, fn in zip(cards, functions, strict=True):
        described = result_fields(fn)
        fields[card.name] = described
        gives[card.name] = result_keys(fn, described)
        own = (examples or {}).get(fn.__name__, ())
        said[card.name] = merged_examples(
            request_examples(fn, notes[fn.__name__].examples), request_examples(None, own)
        )
        if notes[fn.__name__].describe is not None:
            describe[card.name] = notes[fn.__name__].describe  # type: ignore[assignment]
    names = {card.name: fn.__name__ for card, fn in zip(cards, functions, strict=True)}
    scenario = scenario_of(
        name,
        cards,
        roles=roles,
        policy=policy,
        examples=said,
        fields=fields,
        gives=gives,
        describe=describe,
    )
    return Pack(scenario=scenario, policy=policy, functions=names, gives=gives)


def pack_from_module(
    module: ModuleType,
    *,
    policy: str,
    name: str | None = None,
    annotations: Mapping[str, ToolAnnotation] | None = None,
    roles: Iterable[str] = ("customer",),
    examples: Mapping[str, Sequence[str]] | None = None,
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
        examples=examples,
    )


def scenario_of(
    name: str,
    cards: Sequence[ToolCard],
    *,
    roles: Iterable[str],
    policy: str = "",
    examples: Examples | None = None,
    fields: Mapping[str, Mapping[str, Text]] | None = None,
    gives: Mapping[str, frozenset[str]] | None = None,
    describe: Mapping[str, Callable[[Any, str], str | None]] | None = None,
) -> Scenario:
    """The scenario of ``cards``: a task per card, typed values, sentences, its own reader.

    ``fields`` label each tool's result fields (its ``Returns:`` lines), ``gives`` says which fields
    each read returns (for lookups), ``describe`` holds a tool's own wording of results.
    """
    values = PackValues(cards)
    gives = gives or {}
    examples = dict(examples or {})
    tasks = tuple(
        TaskSpec(
            intent=card.name,
            tool=card.name,
            required_slots=required_parameters(card.parameters),
            optional_slots=tuple(
                n for n, i in card.parameters.model_fields.items() if not i.is_required()
            ),
            handoff_on_failure=False,
            suggest=lookup(values, gives, card.name) if gives else None,
        )
        for card in cards
    )
    permissions = frozenset(card.permission for card in cards)
    return Scenario(
        name=name,
        tasks=tasks,
        cards=tuple(cards),
        grants={role: permissions for role in roles},
        extract=values.extract,
        wording=pack_wording(cards, fields or {}),
        describe={card.name: describer_of(card, (describe or {}).get(card.name)) for card in cards},
        bare=bare_patterns(cards),
        examples=examples,
        commands=pack_reader(cards, policy, examples, gives),
    )


__all__ = [
    "Pack",
    "pack_from_functions",
    "pack_from_module",
    "scenario_of",
]
