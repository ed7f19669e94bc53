"""How a sales question is recognized; the whole question is the slot."""

from __future__ import annotations

from datetime import date

from contract.scenario import SlotResult


def extract(text: str, intent: str, *, today: date) -> SlotResult:
    """Take the question as it was asked; the tool turns it into checked SQL."""
    return SlotResult(slots={"question": text.strip()}) if text.strip() else SlotResult()
