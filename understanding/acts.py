"""Dialogue acts no scenario owns, as the nodes record them: a person, a complaint, beyond.

Which act a message performs is the recognizer's to say (``understanding.recognizer``, trained
on ``language/<code>/acts.yaml``); this module only names the acts a person takes over and how
the intent node marks an act among its evidence.
"""

from __future__ import annotations

from typing import Literal

Act = Literal["human", "complaint", "beyond", "never_mind", "bye", "thanks", "greet"]

HANDED_OVER: frozenset[Act] = frozenset({"human", "complaint", "beyond"})
"""Acts a person takes over, wherever in the message they are said; ``beyond`` is a request a
scenario knows of but cannot serve (``contract.scenario.Beyond``)."""

EVIDENCE_PREFIX = "act:"
"""How the intent node records an act among the intent's evidence (the hand-off reads it)."""

__all__ = ["EVIDENCE_PREFIX", "HANDED_OVER", "Act"]
