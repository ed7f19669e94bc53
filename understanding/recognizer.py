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

import math
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache
from typing import Literal, Protocol

from contract.scenario import UNKNOWN, ScenarioSet, SlotResult
from contract.text_match import close_word, negated, normalize, openings, sound_alike

Language = Literal["zh", "en"]
CONFIDENCE_THRESHOLD = 0.6
TOPIC_WEIGHT = 0.4
"""What one general topic word ("订单", "order") adds to each of its scenario's intents."""
FUZZY_WEIGHT = 0.8
"""What a typo-tolerant match of a cue counts, relative to an exact one, when reconsidering."""
CLASSIFY_FUZZY_WEIGHT = 0.4
"""The same on a first look: a typo names the intent but keeps it below the threshold unless
other evidence agrees, so a guess from a misspelling is confirmed before it acts."""

WEAK_EVIDENCE_MIN = 0.6
"""Below this, an intent backed by no cue of its own (only a topic word such as "订单", or an
entity such as a bare city or order number) is not named: "北京有什么好玩的" and "how do I
change my delivery address" are about a city and an order, but ask for none of the tasks."""

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
    cued: bool = False
    """The intent has a cue of its own in the message, not only a topic word or an entity
    (an order number, a city): a clause that names a request, not one that answers one."""


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
_LATIN_WORD = re.compile(r"(?<![A-Za-z0-9-])[A-Za-z]{2,}(?![A-Za-z0-9]|-\d)")
"""A word, not the letters of a code ("ACC-2001", "OD-20240618-001" say no language)."""


def detect_language(text: str) -> Language | None:
    """Return ``zh`` for Chinese, ``en`` for English words, ``None`` for neither."""
    if _CJK.search(normalize(text)):
        return "zh"
    plain = unicodedata.normalize("NFKC", text)
    words = [w for w in _LATIN_WORD.findall(plain) if w.upper() != "OD"]
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
        self._cue_table: _CueTable | None = None

    def _table(self) -> _CueTable:
        """Prepare the cues once: normalizing and compiling them per message cost 40% of a turn."""
        if self._cue_table is None:
            self._cue_table = _CueTable.of(self.scenarios)
        return self._cue_table

    def classify(self, text: str) -> IntentResult:
        """Score every intent's cues and calibrate the best one's confidence."""
        return self._score(text, fuzzy=CLASSIFY_FUZZY_WEIGHT)

    def reconsider(
        self, text: str, *, pending_intent: str | None, missing_slots: list[str]
    ) -> IntentResult:
        """Re-examine with context, then with fuzzy cue matching for typos.

        A message that supplies exactly what a pending task asked for continues that task.
        """
        language = detect_language(text)
        if self.scenarios.task(pending_intent) is not None and pending_intent and missing_slots:
            found = self.extract_slots(text, pending_intent)
            named = {
                *found.slots,
                *found.invalid,
                *(k for reading in found.either for k in reading),
            }
            if named & set(missing_slots):
                return IntentResult(
                    intent=pending_intent,
                    confidence=0.9,
                    language=language,
                    evidence=("answers the pending question",),
                    candidates=(pending_intent,),
                )
        return self._score(text, fuzzy=FUZZY_WEIGHT)

    def extract_slots(self, text: str, intent: str) -> SlotResult:
        """Find the slots ``intent`` needs with its scenario's extractor."""
        return self.scenarios.extract(text, intent, today=self.today())

    def _score(self, text: str, *, fuzzy: float) -> IntentResult:
        """Add up cue weights per intent; ``fuzzy`` is what a typo-tolerant match counts.

        Cues match the normalized text (see ``contract.text_match``); a negated cue counts
        nothing ("不要退款" is not a refund request); a cue found only through a typo (a
        homophone, a pinyin syllable, a swapped letter) counts ``fuzzy`` of its weight.
        """
        normal = normalize(text)
        sound = sound_alike(normal)
        words = re.findall(r"[a-z]+", normal)
        scores: dict[str, float] = {}
        evidence: list[str] = []
        table = self._table()
        candidates = table.candidates(normal, sound, words, fuzzy=bool(fuzzy))
        for group, (intent, cues) in enumerate(table.intents):
            found = candidates.get(group)
            if not found:
                scores[intent] = 0
                continue
            matcher = _Matcher(normal, sound, words, fuzzy)
            scores[intent] = sum(matcher.match(cues[index], evidence) for index in found)
        specific = {intent for intent, score in scores.items() if score > 0}
        for group, (intents, cues) in enumerate(table.topics, start=len(table.intents)):
            found = candidates.get(group)
            if not found:
                continue
            matcher = _Matcher(normal, sound, words, fuzzy)
            topic = sum(matcher.match(cues[index], evidence) for index in found)
            if topic:
                for intent in intents:
                    scores[intent] += topic
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
        if best <= 0 or (best_intent not in specific and best < WEAK_EVIDENCE_MIN):
            return IntentResult(
                intent=UNKNOWN,
                confidence=round(calibrate(0.0, 0.0), 3),
                language=detect_language(text),
                evidence=tuple(evidence),
                candidates=tuple(intent for intent, _ in ranked if intent in specific),
            )
        return IntentResult(
            intent=best_intent,
            confidence=round(calibrate(best, runner_up), 3),
            language=detect_language(text),
            evidence=tuple(evidence),
            candidates=tuple(intent for intent, _ in ranked if intent in specific),
            cued=best_intent in specific,
        )


@dataclass(frozen=True)
class _Cue:
    """One cue as matched: normalized, compiled, and its homophone form, computed once."""

    text: str
    weight: float
    pattern: re.Pattern[str]
    heard: str
    """``sound_alike`` of the cue, for homophone typos."""
    homophone: bool
    """A Chinese cue of two characters or more: a homophone of it counts (fuzzily)."""
    latin_word: bool
    """A one-word Latin cue: a misspelled word counts (fuzzily)."""

    @classmethod
    def of(cls, cue: str, weight: float) -> _Cue:
        """Prepare ``cue``."""
        normal = normalize(cue)
        return cls(
            text=normal,
            weight=weight,
            pattern=_cue_pattern(normal),
            heard=sound_alike(normal),
            homophone=len(normal) >= 2 and _CJK.search(normal) is not None,
            latin_word=" " not in normal,
        )


@dataclass(frozen=True)
class _CueTable:
    """Every intent's cues and every scenario's topic words, longest first.

    Longest first, each match consumed, so "还没到" does not also count "没到".
    """

    intents: tuple[tuple[str, tuple[_Cue, ...]], ...]
    topics: tuple[tuple[tuple[str, ...], tuple[_Cue, ...]], ...]
    """Per scenario: its intents, and its topic words (each worth ``TOPIC_WEIGHT``)."""
    by_first: dict[str, tuple[tuple[str, int, int], ...]] = field(default_factory=dict)
    """First character of a cue → (cue, group, index): groups are the intents, then the
    topics, in order; ``index`` is the cue's place in its group."""
    heard_by_first: dict[str, tuple[tuple[str, int, int], ...]] = field(default_factory=dict)
    """The same for homophone cues, by their ``heard`` form."""
    by_opening: dict[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    """First two letters of a one-word Latin cue → (group, index)."""

    def candidates(
        self, normal: str, sound: str, words: list[str], *, fuzzy: bool
    ) -> dict[int, list[int]]:
        """Return, per group, the cues that can match this message, in their order.

        A cue absent from the message adds nothing and changes nothing, so only those
        that can match are tried: about 350 cues were looked at one by one for every
        message, when a handful share a character with it. A cue can match when its text
        is in the message, or, looking fuzzily, when its homophone form is in the sound of
        the message or its first two letters open one of the message's words.
        """
        found: dict[int, set[int]] = {}
        for char in set(normal):
            for text, group, index in self.by_first.get(char, ()):
                if text in normal:
                    found.setdefault(group, set()).add(index)
        if fuzzy:
            for char in set(sound):
                for heard, group, index in self.heard_by_first.get(char, ()):
                    if heard in sound:
                        found.setdefault(group, set()).add(index)
            for opening in {o for word in words for o in openings(word)}:
                for group, index in self.by_opening.get(opening, ()):
                    found.setdefault(group, set()).add(index)
        return {group: sorted(indexes) for group, indexes in found.items()}

    @classmethod
    def of(cls, scenarios: ScenarioSet) -> _CueTable:
        """Prepare the cues of ``scenarios``."""
        intents = tuple(
            (
                intent,
                tuple(
                    _Cue.of(cue, weight)
                    for cue, weight in sorted(cues, key=lambda item: len(item[0]), reverse=True)
                ),
            )
            for intent, cues in scenarios.cues().items()
        )
        topics = tuple(
            (
                tuple(task.intent for task in scenario.tasks),
                tuple(
                    _Cue.of(cue, TOPIC_WEIGHT)
                    for cue in sorted(scenario.topic_cues, key=len, reverse=True)
                ),
            )
            for scenario in scenarios.scenarios
        )
        groups = [cues for _, cues in intents] + [cues for _, cues in topics]
        by_first: dict[str, list[tuple[str, int, int]]] = {}
        heard_by_first: dict[str, list[tuple[str, int, int]]] = {}
        by_opening: dict[str, list[tuple[int, int]]] = {}
        for group, cues in enumerate(groups):
            for index, cue in enumerate(cues):
                if cue.text:
                    by_first.setdefault(cue.text[0], []).append((cue.text, group, index))
                if cue.homophone and cue.heard:
                    heard_by_first.setdefault(cue.heard[0], []).append((cue.heard, group, index))
                if cue.latin_word:
                    by_opening.setdefault(cue.text[:2], []).append((group, index))
        return cls(
            intents=intents,
            topics=topics,
            by_first={key: tuple(value) for key, value in by_first.items()},
            heard_by_first={key: tuple(value) for key, value in heard_by_first.items()},
            by_opening={key: tuple(value) for key, value in by_opening.items()},
        )


class _Matcher:
    """Find cues in one message, consuming what each match covers (longest cues first)."""

    def __init__(self, normal: str, sound: str, words: list[str], fuzzy: float) -> None:
        self.normal, self.sound, self.words, self.fuzzy = normal, sound, words, fuzzy
        self.openings = {o for word in words for o in openings(word)}
        """A typo keeps a word's first two letters (``close_word``, ``openings``): other cues
        need no look."""

    def match(self, cue: _Cue, evidence: list[str]) -> float:
        """Return what ``cue`` adds: its weight, nothing when negated, less for a typo."""
        # a substring test first: most cues are absent, and the pattern only narrows it
        positions = (
            [m.start() for m in cue.pattern.finditer(self.normal)]
            if cue.text in self.normal
            else []
        )
        if positions:
            self.normal = cue.pattern.sub(lambda m: "\0" * len(m.group()), self.normal)
            self.sound = self.sound.replace(cue.heard, "\0" * len(cue.text))
            if all(negated(self.normal, at) for at in positions):
                evidence.append(f"not {cue.text}")
                return 0.0
            evidence.append(cue.text)
            return cue.weight
        if not self.fuzzy:
            return 0.0
        if cue.homophone and cue.heard in self.sound:
            positions = _positions(self.sound, cue.heard)
            self.sound = self.sound.replace(cue.heard, "\0" * len(cue.heard))
            if all(negated(self.sound, at) for at in positions):
                return 0.0
            evidence.append(f"~{cue.text}")
            return cue.weight * self.fuzzy
        if cue.latin_word and cue.text[:2] in self.openings and close_word(cue.text, self.words):
            evidence.append(f"~{cue.text}")
            return cue.weight * self.fuzzy
        return 0.0


@lru_cache(maxsize=2048)
def _cue_pattern(cue: str) -> re.Pattern[str]:
    """Match a cue as written; a Latin cue starts a word, and a short one is a whole word.

    So "hot" is not found in "hotel", nor "rush" in "brush", while "reimburse" still finds
    "reimbursed" and "track" finds "帮我track一下".
    """
    if not cue[:1].isascii() or not cue[:1].isalpha():
        return re.compile(re.escape(cue))
    end = r"(?![a-z])" if len(cue.strip()) <= 4 else ""
    return re.compile(rf"(?<![a-z]){re.escape(cue)}{end}")


def _positions(text: str, part: str) -> list[int]:
    return [m.start() for m in re.finditer(re.escape(part), text)]
