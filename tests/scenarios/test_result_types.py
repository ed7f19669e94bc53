"""Every shipped tool names the type of its result, and that type agrees with its check.

A handler's return annotation is what the scenario's describer reads (``result_data``); the
card's ``result_model`` is what the executor checks a result against. Both describe one
answer, so they must name the same fields.
"""

from __future__ import annotations

import types
import typing

import pytest

from contract.scenario import Scenario
from scenarios import SCENARIOS
from tools.registry.cards import ToolCard


def _cards() -> list[ToolCard]:
    def of(scenario: Scenario) -> list[ToolCard]:
        return [*scenario.cards, *(c for cards in scenario.agent_cards.values() for c in cards)]

    seen: dict[str, ToolCard] = {}
    for scenario in SCENARIOS:
        for card in of(scenario):
            seen.setdefault(card.name, card)
    return list(seen.values())


CARDS = _cards()


def _result_type(card: ToolCard) -> type:
    """The handler's declared result, ``X | None`` read as ``X``."""
    returned = typing.get_type_hints(card.handler)["return"]
    if isinstance(returned, types.UnionType) or typing.get_origin(returned) is typing.Union:
        returned = next(arg for arg in typing.get_args(returned) if arg is not type(None))
    return returned


@pytest.mark.parametrize("card", CARDS, ids=[c.name for c in CARDS])
def test_each_tool_declares_a_typed_result(card: ToolCard) -> None:
    result = _result_type(card)
    assert typing.is_typeddict(result), f"{card.name} returns {result!r}, not a TypedDict"


@pytest.mark.parametrize(
    "card", [c for c in CARDS if c.result_model], ids=[c.name for c in CARDS if c.result_model]
)
def test_the_result_type_and_the_result_check_name_the_same_fields(card: ToolCard) -> None:
    assert card.result_model is not None
    declared = set(typing.get_type_hints(_result_type(card)))
    checked = set(card.result_model.model_fields)
    assert declared == checked, f"{card.name}: the type has {declared}, the check {checked}"
