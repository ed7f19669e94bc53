"""The sentences generic code says are data: one catalog per language, the same in shape.

Issue 37: ``language/<code>/say.yaml`` holds every sentence no scenario owns (the generic
nodes', the failure vocabulary's, the busy, unreadable-resume and too-long replies …). Each
language must have every key, and each sentence the same placeholders, or a reply in one
language would fail (a ``KeyError`` on ``format``) or leave out what the other says.
"""

from __future__ import annotations

import string
from pathlib import Path

import pytest

from language import LANGUAGES, catalog, sentence, sentences
from nodes.wording import GENERIC, Voice
from tests.unit.test_generic_words import chinese_literals
from tools.executor.failures import MEANINGS

ROOT = Path(__file__).resolve().parents[2]
MOVED = [
    "nodes/wording.py",
    "nodes/compact.py",
    "nodes/job_update.py",
    "graph/resume.py",
    "graph/run_lock.py",
    "tools/executor/client_view.py",
    "config/limits.py",
]
"""Modules whose sentences moved to the catalog (``failures.py`` keeps its cues: words that
recognise a class in a reply, not sentences anyone is told)."""


def placeholders(text: str) -> set[str]:
    """The names a format string fills (``{task}`` → ``task``); raises on a malformed one."""
    return {field for _, field, _, _ in string.Formatter().parse(text) if field is not None}


def test_every_language_has_the_same_keys() -> None:
    first, *others = LANGUAGES
    for code in others:
        assert set(sentences(code)) == set(sentences(first)), code
    assert len(sentences(first)) > 50


@pytest.mark.parametrize("key", sorted(sentences(LANGUAGES[0])))
def test_each_key_has_the_same_placeholders_in_every_language(key: str) -> None:
    expected = placeholders(sentences(LANGUAGES[0])[key])
    for code in LANGUAGES:
        text = sentences(code)[key]
        assert text, (code, key)
        assert placeholders(text) == expected, (code, key, text)


def test_a_language_not_spoken_falls_back() -> None:
    assert sentences("fr") == {}
    assert sentences("../zh") == {}
    assert sentence("run.busy", "fr") == sentences("zh")["run.busy"]
    assert sentence("list_separator", "fr", default="en") == ", "
    with pytest.raises(KeyError):
        sentence("no.such.key", "en")


def test_the_generic_wording_is_the_catalog() -> None:
    assert GENERIC == catalog()
    for outcome, meaning in MEANINGS.items():
        for code in LANGUAGES:
            assert meaning.text[code] == sentences(code)[f"failure.{outcome}"]
            assert meaning.short[code] == sentences(code)[f"failure.{outcome}.short"]


def test_a_scenario_sentence_wins_over_the_catalog() -> None:
    class Scenarios:
        def wording(self, key: str, language: str, *, prefer: object = None) -> str | None:
            return "own" if key == "done" else None

    voice = Voice(Scenarios(), language="en")  # type: ignore[arg-type]
    assert voice.text("done") == "own"
    assert voice.say("ask_one", task="go") == "Sorry, I'm not sure I follow. Would you like to go?"
    assert voice.text("no.such.key") is None


@pytest.mark.parametrize("path", MOVED)
def test_no_sentence_is_left_in_the_code_it_moved_from(path: str) -> None:
    assert chinese_literals((ROOT / path).read_text(encoding="utf-8")) == []
