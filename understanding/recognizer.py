"""Which task or dialogue act a message (or a clause of it) is, learned from examples.

``Recognizer`` is trained when the graph is built, on data: every task's example requests
(``Scenario.examples``: a scenario's ``examples.yaml``, a pack's docstrings), each task's own
name in every language, the requests a scenario knows but cannot serve (``beyond.<name>``),
and each language's dialogue acts (``language/<code>/acts.yaml``: yes, no, never mind,
hello, thanks, bye, a person, a complaint, "that's wrong", resume, "what about …", and out
of scope). The classifier (``understanding.classifier``) reads sentence embeddings and
character n-grams (Chinese homophones folded first, so a homophone picked by the input
method reads as the word meant); its probabilities are calibrated, so a confidence below the
graph's 0.6 means the reading is unsure.

Labels are intents (``CHECK_ORDER_STATUS`` …), ``act.<name>`` and ``beyond.<name>``.
``classify`` answers the older ``Understanding`` protocol (an intent and a confidence).
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Literal, Protocol

from contract.scenario import LANGUAGES, UNKNOWN, ScenarioSet, SlotResult
from contract.text_match import normalize, sound_alike
from language import acts
from understanding.classifier import ExampleClassifier, Ranked
from understanding.embeddings import CachedEmbeddings

Language = Literal["zh", "en"]
CONFIDENCE_THRESHOLD = 0.6
ACT = "act."
BEYOND = "beyond."
OUT_OF_SCOPE = "act.out_of_scope"
CANDIDATE_FLOOR = 0.05
"""A task this likely is among the ones an unclear message may mean (asked about by name)."""
FAVORITE_FLOOR, FAVORITE_LEAD = 0.5, 1.5
"""On a second look, a task this likely and this far ahead of the next is taken: it asks
its own question (a write is still confirmed before it runs)."""
PAIR_FLOOR = 0.2
"""Two tasks each this likely, and together sure, are asked about by name: "A or B?"."""
RANKED_CACHE = 4096
"""Messages whose reading is kept in memory (a reading is recomputed only when new)."""


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
    """What the reading rests on."""
    candidates: tuple[str, ...] = ()
    """Intents, likeliest first, for a clarifying question."""
    source: str = "rules"
    """Who answered: ``rules`` (the example recognizer) or ``model``."""
    error: str | None = None
    """Why a configured model's answer was not used; the protocol records it."""
    cued: bool = False
    """The words themselves name the task (not only a value in them): sure on their own."""


class Understanding(Protocol):
    """What intent recognition offers the graph: an intent, a second look, slots."""

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
_LATIN_WORD = re.compile(r"(?<![A-Za-z0-9-])[A-Za-z]{2,}(?![A-Za-z0-9]|-\d|\s?\d)")
"""A word, not the letters of a code ("ACC-2001", "OD 20240618-001" say no language)."""


NAME_CHARS = 3
"""Chinese characters a name takes (a Chinese name): in an English answer they switch nothing."""


def detect_language(text: str) -> Language | None:
    """``zh`` for Chinese, ``en`` for English words, ``None`` for neither.

    English that names something in Chinese ("where's my …" with a dish's Chinese name,
    "book a flight for …" with a person's) is English: at least two English words, and
    twice as many as Chinese characters.
    """
    normal = normalize(text)
    cjk = len(_CJK.findall(normal))
    latin = len(_LATIN_WORD.findall(unicodedata.normalize("NFKC", text)))
    if cjk and latin and cjk <= NAME_CHARS and latin < 2:
        return None  # "passenger" and a Chinese name: the conversation's language holds
    if cjk and not (latin >= 2 and 2 * latin >= cjk):
        return "zh"
    return "en" if latin else None


def training_data(catalog: ScenarioSet) -> list[tuple[str, str]]:
    """Every (text, label) the recognizer learns from, in a stable order."""
    out: list[tuple[str, str]] = []
    for scenario in catalog.scenarios:
        cards = {card.name: card for card in scenario.cards}
        for task in scenario.tasks:
            for language in LANGUAGES:
                name = scenario.wording.get(f"intent.{task.intent}", {}).get(language)
                if name:
                    out.append((name, task.intent))
            card = cards.get(task.tool)
            if card is not None:  # the tool's own description says what the task is for
                out.extend((said, task.intent) for said in _described(card))
        for label, by_language in scenario.examples.items():
            for language in sorted(by_language):
                out.extend((text, label) for text in by_language[language])
    for language in LANGUAGES:
        for act, texts in acts(language).items():
            out.extend((text, f"{ACT}{act}") for text in texts)
    return out


_CODE = re.compile(r"[A-Za-z]{0,4}[-_]?\d{5,}[\d\-]*|[A-Za-z]{1,4}-\d[\d\-]*")
"""A code or a long number (an order, an account, an ID): what kind it is reads, not its digits."""


def shape(text: str) -> str:
    """``text`` with every code's digits as zeros: "OD-20240618-009" reads as "OD-00000000-000".

    The reading of a message then never depends on which order or account it names (nor can
    it hint which exist), and two messages that differ only in a number read the same.
    """
    return _CODE.sub(lambda found: re.sub(r"\d", "0", found.group()), text)


def _described(card: Any) -> list[str]:
    """The card's description and when-to-use, each a sentence a request may resemble."""
    said = []
    for text in (card.description, card.when_to_use):
        first = (text or "").strip().split("\n\n")[0].strip()
        if first:
            said.append(first[:200])
    return said


def _encodable(text: str) -> str:
    """``text`` with what UTF-8 cannot carry (a lone surrogate) replaced, so it can be read."""
    return text.encode("utf-8", "replace").decode("utf-8")


def _view(text: str) -> str:
    return sound_alike(normalize(text))


class Recognizer:
    """Labels messages and clauses with tasks, dialogue acts and requests beyond us."""

    def __init__(
        self,
        catalog: ScenarioSet,
        embeddings: CachedEmbeddings,
        *,
        cache_dir: Path | None = None,
        threshold: float = CONFIDENCE_THRESHOLD,
        today: Callable[[], date] = date.today,
    ) -> None:
        """Train on ``catalog``'s examples and the languages' acts (or load a former run's)."""
        self.catalog = catalog
        self.threshold = threshold
        self.today = today
        self._examples = [(shape(text), label) for text, label in training_data(catalog)]
        self._classifier = ExampleClassifier.train(
            self._examples,
            embeddings,
            view=_view,
            view_name="homophones",
            cache_dir=cache_dir,
        )
        self._ranked: OrderedDict[str, Ranked] = OrderedDict()
        self._lock = threading.Lock()
        self.intents = frozenset(catalog.intents)

    @property
    def labels(self) -> tuple[str, ...]:
        """Every label it knows."""
        return self._classifier.labels

    # ---- reading ------------------------------------------------------------------------------
    def read(self, texts: Sequence[str]) -> list[Ranked]:
        """Every label of each text, likeliest first (memoized per text)."""
        keys = [shape(normalize(_encodable(text))) for text in texts]
        with self._lock:
            known = {key: self._ranked[key] for key in keys if key in self._ranked}
        todo = [key for key in dict.fromkeys(keys) if key not in known]
        if todo:
            fresh = dict(zip(todo, self._classifier.rank(todo), strict=True))
            known.update(fresh)
            with self._lock:
                self._ranked.update(fresh)
                while len(self._ranked) > RANKED_CACHE:
                    self._ranked.popitem(last=False)
        return [known[key] for key in keys]

    def forget(self) -> None:
        """Drop every reading and message vector kept in memory (a benchmark's cold start)."""
        with self._lock:
            self._ranked.clear()
        self._classifier.embeddings.forget()

    def tasks_of(self, ranked: Ranked) -> Ranked:
        """The same reading over the tasks alone."""
        return ranked.among(lambda label: label in self.intents)

    def is_task(self, label: str) -> bool:
        """The label is an intent served here."""
        return label in self.intents

    # ---- the ``Understanding`` protocol ----------------------------------------------------
    def classify(self, text: str) -> IntentResult:
        """The likeliest task of ``text``; ``UNKNOWN`` when an act or nothing is likelier."""
        ranked = self.read([text])[0]
        return self.result(text, ranked)

    def result(self, text: str, ranked: Ranked) -> IntentResult:
        """``ranked`` as an ``IntentResult``."""
        language = detect_language(text)
        candidates = tuple(
            label
            for label, p in zip(ranked.labels, ranked.probs, strict=True)
            if self.is_task(label) and p >= CANDIDATE_FLOOR
        )[:3]
        if ranked.best == OUT_OF_SCOPE and ranked.confidence >= self.threshold:
            candidates = ()  # "I feel good today": asked to put it another way, not offered a task
        if not self.is_task(ranked.best):
            top_task = max(
                (
                    p
                    for label, p in zip(ranked.labels, ranked.probs, strict=True)
                    if self.is_task(label)
                ),
                default=0.0,
            )
            return IntentResult(
                intent=UNKNOWN,
                confidence=round(top_task, 3),  # how sure of any task: not at all
                language=language,
                evidence=(ranked.best,),
                candidates=candidates,
            )
        sure = ranked.confidence >= self.threshold
        return IntentResult(
            intent=ranked.best,
            confidence=round(ranked.confidence, 3),
            language=language,
            evidence=(f"like the examples of {ranked.best}",),
            candidates=candidates,
            cued=sure,
        )

    def reconsider(
        self, text: str, *, pending_intent: str | None, missing_slots: list[str]
    ) -> IntentResult:
        """A second look: what the waiting task asked for, then the tasks alone."""
        language = detect_language(text)
        if pending_intent and self.catalog.task(pending_intent) is not None and missing_slots:
            found = self.extract_slots(text, pending_intent)
            named = {*found.slots, *found.invalid, *(k for r in found.either for k in r)}
            if named & set(missing_slots):
                return IntentResult(
                    intent=pending_intent,
                    confidence=0.9,
                    language=language,
                    evidence=("answers the pending question",),
                    candidates=(pending_intent,),
                )
        ranked = self.read([text])[0]
        tasks = [
            (label, p)
            for label, p in zip(ranked.labels, ranked.probs, strict=True)
            if self.is_task(label)
        ]
        if not tasks or (ranked.best == OUT_OF_SCOPE and ranked.confidence >= self.threshold):
            return self.result(text, ranked)
        (first, p1), (second, p2) = tasks[0], tasks[1] if len(tasks) > 1 else ("", 0.0)
        if p1 >= self.threshold:
            intent, confidence = first, p1
        elif p1 >= FAVORITE_FLOOR and p1 >= FAVORITE_LEAD * p2:
            intent, confidence = first, self.threshold  # the second look's decision
        elif p1 + p2 >= self.threshold and p2 >= PAIR_FLOOR:
            intent, confidence = UNKNOWN, p1  # one of two: asked which (never the whole list)
        else:
            intent, confidence = UNKNOWN, p1
        candidates = tuple(label for label, p in tasks[:3] if p >= CANDIDATE_FLOOR)
        if intent == UNKNOWN and p1 + p2 >= self.threshold and p2 >= PAIR_FLOOR:
            candidates = (first, second)
        return IntentResult(
            intent=intent,
            confidence=round(confidence, 3),
            language=language,
            evidence=(f"nearest task {first}",),
            candidates=candidates,
            cued=False,
        )

    def extract_slots(self, text: str, intent: str) -> SlotResult:
        """Find the slots ``intent`` needs with its scenario's extractor."""
        return self.catalog.extract(text, intent, today=self.today())


def example_counts(catalog: ScenarioSet) -> Mapping[str, int]:
    """How many examples each label has (for ``reach doctor`` and tests)."""
    counts: dict[str, int] = {}
    for _, label in training_data(catalog):
        counts[label] = counts.get(label, 0) + 1
    return counts


def labels_of(ranked: Iterable[Ranked]) -> list[str]:
    """The best label of each reading."""
    return [r.best for r in ranked]


__all__ = [
    "ACT",
    "BEYOND",
    "CONFIDENCE_THRESHOLD",
    "OUT_OF_SCOPE",
    "IntentResult",
    "Language",
    "Recognizer",
    "Understanding",
    "detect_language",
    "example_counts",
    "labels_of",
    "training_data",
]
