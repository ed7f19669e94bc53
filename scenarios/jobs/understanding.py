"""Cues and slots of "is my export / bulk send done?" (zh and en)."""

from __future__ import annotations

from datetime import date

from contract.scenario import SlotResult


def extract(text: str, intent: str, *, today: date) -> SlotResult:
    """Nothing to extract: the job is the user's latest one (its id is never typed)."""
    return SlotResult()
