"""Understanding a user message: intent with a calibrated confidence, and slots.

``Understanding`` is the interface the graph depends on. ``RuleBasedUnderstanding`` is the
offline implementation; it reads the cues, entity support and slot extractors of the
scenarios it is given and names none of them itself. A model-backed one implements the same
three methods.

Confidence is not a constant. Each intent collects weighted cues; the confidence is a
logistic function of the best score and of its margin over the runner-up, so a message with
one clear cue scores high, a message with cues for two intents scores near the 0.6
threshold, and a message with no cue scores low.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Literal, Protocol

from nodes.tasks import UNKNOWN, ScenarioSet, SlotResult

Language = Literal["zh", "en"]
CONFIDENCE_THRESHOLD = 0.6
TOPIC_WEIGHT = 0.4
"""What one general topic word ("订单", "order") adds to each of its scenario's intents."""
FUZZY_WEIGHT = 0.8
"""What a typo-tolerant match of a cue counts, relative to an exact one."""

# Logistic calibration: logit = BIAS + W_SCORE * best + W_MARGIN * (best - runner_up).
BIAS, W_SCORE, W_MARGIN = -2.5, 1.5, 2.5


@dataclass(frozen=True)
class IntentResult:
    """The recognized intent of one message."""

    intent: str
    """An intent of the scenarios, or ``UNKNOWN``."""
    confidence: float
    """Calibrated probability that ``intent`` is right."""
    language: Language | None
    """The message's language, or ``None`` when it has no words (a bare order id)."""
    evidence: tuple[str, ...] = ()
    """The cues that matched."""
    candidates: tuple[str, ...] = ()
    """Intents with any support, best first, for a clarifying question."""
    source: str = "rules"
    """Who answered: ``rules`` or ``model`` (a model's failure is answered by the rules)."""
    error: str | None = None
    """Why a configured model's answer was not used; the protocol records it."""


class Understanding(Protocol):
    """What the intent, reflect-refine and slot-filling nodes need from a recognizer."""

    def classify(self, text: str) -> IntentResult:
        """Recognize the intent of ``text`` on its own."""
        ...

    def reconsider(
        self, text: str, *, pending_intent: str | None, missing_slots: list[str]
    ) -> IntentResult:
        """Look again at a low-confidence message, using what the conversation is waiting for."""
        ...

    def extract_slots(self, text: str, intent: str) -> SlotResult:
        """Find the slots ``intent`` needs in ``text``."""
        ...


_CJK = re.compile(r"[\u4e00-\u9fff]")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")


def detect_language(text: str) -> Language | None:
    """Return ``zh`` for Chinese, ``en`` for English words, ``None`` for neither."""
    if _CJK.search(text):
        return "zh"
    words = [w for w in _LATIN_WORD.findall(text) if w.upper() != "OD"]
    return "en" if words else None


def calibrate(best: float, runner_up: float) -> float:
    """Map cue scores to a probability that the best intent is right."""
    best = min(best, 2.0)
    margin = min(best - runner_up, 1.5)
    return 1.0 / (1.0 + math.exp(-(BIAS + W_SCORE * best + W_MARGIN * margin)))


class RuleBasedUnderstanding:
    """Offline, deterministic understanding over the scenarios' cues (Chinese and English)."""

    def __init__(self, scenarios: ScenarioSet, *, today: Callable[[], date] = date.today) -> None:
        """Read cues, support and extractors from ``scenarios``; dates count from ``today``."""
        self.scenarios = scenarios
        self.today = today

    def classify(self, text: str) -> IntentResult:
        """Score every intent's cues and calibrate the best one's confidence."""
        return self._score(text, fuzzy=False)

    def reconsider(
        self, text: str, *, pending_intent: str | None, missing_slots: list[str]
    ) -> IntentResult:
        """Re-examine with context, then with fuzzy cue matching for typos.

        A message that supplies exactly what a pending task asked for continues that task.
        """
        language = detect_language(text)
        if self.scenarios.task(pending_intent) is not None and pending_intent and missing_slots:
            slots = self.extract_slots(text, pending_intent)
            if any(name in slots.slots or name in slots.invalid for name in missing_slots):
                return IntentResult(
                    intent=pending_intent,
                    confidence=0.9,
                    language=language,
                    evidence=("answers the pending question",),
                    candidates=(pending_intent,),
                )
        return self._score(text, fuzzy=True)

    def extract_slots(self, text: str, intent: str) -> SlotResult:
        """Find the slots ``intent`` needs with its scenario's extractor."""
        return self.scenarios.extract(text, intent, today=self.today())

    def _score(self, text: str, *, fuzzy: bool) -> IntentResult:
        lowered = text.lower()
        words = re.findall(r"[a-z']+", lowered)
        scores: dict[str, float] = {}
        evidence: list[str] = []
        for intent, cues in self.scenarios.cues().items():
            score = 0.0
            remaining = lowered
            # Longest cues first, each match consumed, so "还没到" does not also count "没到".
            for cue, weight in sorted(cues, key=lambda item: len(item[0]), reverse=True):
                if cue in remaining:
                    score += weight
                    evidence.append(cue)
                    remaining = remaining.replace(cue, " ")
                elif fuzzy and " " not in cue and cue.isascii() and len(cue) >= 5:
                    if difflib.get_close_matches(cue, words, n=1, cutoff=0.8):
                        score += weight * FUZZY_WEIGHT
                        evidence.append(f"~{cue}")
            scores[intent] = score
        specific = {intent for intent, score in scores.items() if score > 0}
        for scenario in self.scenarios.scenarios:
            topic, remaining = 0.0, lowered
            for cue in sorted(scenario.topic_cues, key=len, reverse=True):
                if cue in remaining:
                    topic += TOPIC_WEIGHT
                    evidence.append(cue)
                    remaining = remaining.replace(cue, " ")
            if topic:
                for task in scenario.tasks:
                    scores[task.intent] += topic
        for scenario in self.scenarios.scenarios:
            if scenario.support is None:
                continue
            for intent, weight, label in scenario.support(text):
                if intent in scores:
                    scores[intent] += weight
                    if label not in evidence:
                        evidence.append(label)
        ranked = sorted(scores.items(), key=lambda item: item[1], reverse=True)
        best_intent, best = ranked[0] if ranked else (UNKNOWN, 0.0)
        runner_up = ranked[1][1] if len(ranked) > 1 else 0.0
        if best <= 0:
            return IntentResult(
                intent=UNKNOWN,
                confidence=round(calibrate(0.0, 0.0), 3),
                language=detect_language(text),
            )
        return IntentResult(
            intent=best_intent,
            confidence=round(calibrate(best, runner_up), 3),
            language=detect_language(text),
            evidence=tuple(evidence),
            candidates=tuple(intent for intent, _ in ranked if intent in specific),
        )
