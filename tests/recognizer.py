"""The example recognizer the tests read with: trained once per process, from the shipped data.

Shared by every test of a process, it reads dates on the tests' business date (2024-06-18,
``REACH_TODAY`` in the graph tier), whichever test happens to build it first.
"""

from __future__ import annotations

from datetime import date
from functools import cache

from config.settings import get_settings
from nodes.services import Services
from scenarios import SCENARIOS
from understanding.reader import Reader
from understanding.recognizer import Recognizer

TODAY = date(2024, 6, 18)


@cache
def _services() -> Services:
    settings = get_settings().model_copy(update={"today": TODAY})
    return Services(scenarios=SCENARIOS, settings=settings)


def recognizer() -> Recognizer:
    """The recognizer of every shipped scenario (as ``build_graph`` makes it)."""
    return _services().recognizer


def reader() -> Reader:
    """The default reader of every shipped scenario."""
    return _services().rule_commands
