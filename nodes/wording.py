"""The generic nodes' own sentences, and the voice that finds any sentence by key.

Scenario wording lives in each scenario's ``wording.py``; the sentences no scenario owns (what
to say when the request is unclear, the confirmation question, the hand-over to a human, the
answers to courtesies and "never mind", a message too long …) are data: one catalog per
language, ``language/<code>/say.yaml``, read here as ``GENERIC``. ``Voice`` looks a key up in
the scenarios first and in the catalog second, in the user's language.

What a failed (or declined, or held) tool call means is not worded here nor by a scenario:
``Voice.failure`` says the one sentence ``tools.executor.failures`` gives each class.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from config.limits import MAX_USER_MESSAGE_CHARS
from contract.scenario import Scenario, ScenarioSet, Wording
from language import catalog, sentence
from tools.executor import failures
from tools.executor.failures import Outcome

GENERIC: Wording = catalog()
"""Sentences that belong to no scenario: key → language → sentence, from the languages'
catalogs (``language/<code>/say.yaml``)."""

LIST_SEPARATOR = GENERIC["list_separator"]
"""How the generic nodes join a list of labels in each language."""


def too_long_reply(language: str, limit: int = MAX_USER_MESSAGE_CHARS) -> str:
    """Return "message too long" in ``language`` (``zh`` or ``en``; anything else is ``en``)."""
    return sentence("message_too_long", language, default="en").format(limit=limit)


@dataclass(frozen=True)
class Voice:
    """Finds and fills sentences in one language: scenario wording first, then ``GENERIC``."""

    scenarios: ScenarioSet
    """Where scenario sentences and intent labels come from."""
    language: str = "zh"
    """``zh`` or ``en``; a missing translation falls back to Chinese."""
    prefer: Scenario | None = None
    """The scenario whose wording wins when two define the same key."""

    def text(self, key: str) -> str | None:
        """Return the unfilled sentence ``key``, or ``None`` when nothing defines it."""
        found = self.scenarios.wording(key, self.language, prefer=self.prefer)
        if found is not None:
            return found
        generic = GENERIC.get(key)
        if generic is None:
            return None
        return generic.get(self.language) or generic["zh"]

    def say(self, key: str, **values: Any) -> str:
        """Fill the sentence ``key``; an undefined key is a bug in the scenario."""
        template = self.text(key)
        if template is None:
            msg = f"no wording for {key!r}"
            raise KeyError(msg)
        return template.format(**values)

    def failure(
        self, outcome: Outcome, result: Mapping[str, Any], *, task: str, known: Iterable[Any] = ()
    ) -> str:
        """Say what a failed (declined, held, unknown…) call means: the one generic sentence.

        ``known`` holds the values the user gave (the slots), so the reference named is the
        record the call created, not the order the user named.
        """
        return failures.sentence(outcome, result, language=self.language, task=task, known=known)

    def label(self, intent: str) -> str:
        """Name an intent for the user (its ``intent.<INTENT>`` wording)."""
        return self.text(f"intent.{intent}") or intent

    def join(self, items: list[str]) -> str:
        """Join labels the way the language lists them."""
        return sentence("list_separator", self.language, default="en").join(items)
