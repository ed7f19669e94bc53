"""Every high-risk tool a shipped scenario brings says, in its own words, what it will do."""

from __future__ import annotations

import pytest

from scenarios import SCENARIOS

HIGH_RISK = [
    (scenario, card)
    for scenario in SCENARIOS
    for card in (*scenario.cards, *(c for cards in scenario.agent_cards.values() for c in cards))
    if card.risk == "high"
]


@pytest.mark.parametrize(("scenario", "card"), HIGH_RISK, ids=lambda v: getattr(v, "name", ""))
def test_a_high_risk_tool_has_its_scenarios_sentence(scenario, card):
    assert card.name in scenario.confirm, f"{scenario.name}: no confirmation for {card.name}"
    for language in ("zh", "en"):
        text = scenario.wording.get(f"confirm.{card.name}") or {}
        assert text.get(language), f"{card.name}: no {language} sentence"
        assert card.name not in text[language] and "=" not in text[language]


def test_every_shipped_high_risk_tool_is_covered():
    assert {card.name for _, card in HIGH_RISK} >= {
        "request_refund",
        "cancel_order",
        "send_bulk_notification",
        "book_flight_ticket",
        "book_appointment",
        "cancel_appointment",
        "execute_transfer",
    }
