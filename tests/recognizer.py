"""The example recognizer the tests read with: trained once per process, from the shipped data."""

from __future__ import annotations

from datetime import date
from functools import cache

from config.settings import get_settings
from nodes.services import Services
from scenarios import SCENARIOS
from understanding.reader import Reader
from understanding.recognizer import Recognizer

TODAY = date(2024, 6, 18)
"""The seeded world's day, whatever the environment says when the first test asks."""


@cache
def _services() -> Services:
    return Services(
        scenarios=SCENARIOS, settings=get_settings().model_copy(update={"today": TODAY})
    )


def recognizer() -> Recognizer:
    """The recognizer of every shipped scenario (as ``build_graph`` makes it)."""
    return _services().recognizer


def reader() -> Reader:
    """The default reader of every shipped scenario."""
    return _services().rule_commands
