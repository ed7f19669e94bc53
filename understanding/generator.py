"""The interface every command generator implements: rules, a model, or both."""

from __future__ import annotations

from typing import Protocol

from understanding.commands import Reading
from understanding.view import DialogueView


class CommandGenerator(Protocol):
    """Reads one message against the conversation and returns its commands; runs nothing."""

    def generate(self, text: str, view: DialogueView) -> Reading:
        """Read ``text`` (secrets revealed, in memory only) against ``view``."""
        ...

    def reconsider(self, text: str, view: DialogueView) -> Reading:
        """Look again at a message the first reading was unsure of, without a model call."""
        ...


__all__ = ["CommandGenerator"]
