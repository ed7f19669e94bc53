"""The example recognizer the tests read with: trained once per process, from the shipped data."""

from __future__ import annotations

from functools import cache

from nodes.services import Services
from scenarios import SCENARIOS
from understanding.reader import Reader
from understanding.recognizer import Recognizer


@cache
def recognizer() -> Recognizer:
    """The recognizer of every shipped scenario (as ``build_graph`` makes it)."""
    return Services(scenarios=SCENARIOS).recognizer


@cache
def reader() -> Reader:
    """The default reader of every shipped scenario."""
    return Services(scenarios=SCENARIOS).rule_commands
