"""Text normalization, negation scope and typo tolerance for rule cues (language-generic).

Users type on phones with pinyin input methods and in two languages, so the same cue reaches
the rules in many surface forms: full-width letters, spaces inside Chinese ("骑手 太慢"),
curly apostrophes, a homophone picked from the candidate list ("退宽" for "退款"), a syllable
left in pinyin ("取xiao订单"), a swapped or dropped letter ("refnud", "fligt"). And a cue
that is negated ("不要退款", "don't cancel") is evidence *against* its intent, not for it.

Nothing here names an intent, a slot or a tool: it is shared by every scenario's cues.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from language import LANGUAGES, alternation, every, lexicon

_CJK_CHAR = "\u4e00-\u9fff"
_SPACE_NEAR_CJK = re.compile(rf"(?<=[{_CJK_CHAR}])\s+|\s+(?=[{_CJK_CHAR}])")
_APOSTROPHES = re.compile(r"['’‘`´]")
_SPACES = re.compile(r"\s+")


@lru_cache(maxsize=4096)
def normalize(text: str) -> str:
    """Return ``text`` in the one form cues are matched against.

    NFKC folds full-width letters, digits and punctuation to their ASCII forms; lower case
    and dropped apostrophes make "Where’s" and "wheres" the same word; spaces next to Chinese
    characters carry no meaning ("帮我 track 一下", "骑手 太慢"), spaces between Latin words do.
    """
    folded = unicodedata.normalize("NFKC", text).lower()
    folded = _APOSTROPHES.sub("", folded)
    folded = _SPACES.sub(" ", folded).strip()
    return _SPACE_NEAR_CJK.sub("", folded)


def _fold_char(char: str) -> str:
    folded = unicodedata.normalize("NFKC", char).lower()
    return folded if len(folded) == 1 else char.lower()


@lru_cache(maxsize=4096)
def fold(text: str) -> str:
    """``text`` in lower case with full-width forms folded, character for character.

    Unlike ``normalize`` it keeps every position, so a span found in it is the same span of
    the text as the user wrote it (names keep their capitals there).
    """
    return "".join(_fold_char(char) for char in text)


# --- Homophones -------------------------------------------------------------------------
# Groups of characters that share a pinyin syllable (tone ignored), as a pinyin input method
# offers them side by side: the language's lexicon (``language/<code>/lexicon.yaml``,
# ``homophones``). Matching through the group's first character catches the wrong pick
# ("推款" for "退款") without a pinyin dictionary; a character in no group stands for itself.
def _homophones() -> dict[str, str]:
    groups: dict[str, str] = {}
    for code in LANGUAGES:
        groups.update(lexicon(code).homophones)
    return groups


_HOMOPHONES = _homophones()
_CANONICAL: dict[str, str] = {char: chars[0] for chars in _HOMOPHONES.values() for char in chars}
_SYLLABLES = "|".join(sorted(_HOMOPHONES, key=len, reverse=True)) or r"(?!x)x"
_PINYIN = re.compile(rf"(?<=[{_CJK_CHAR}])({_SYLLABLES})|({_SYLLABLES})(?=[{_CJK_CHAR}])")


@lru_cache(maxsize=4096)
def sound_alike(text: str) -> str:
    """Map a normalized text to its homophone form: each character to its group's first.

    A pinyin syllable written next to Chinese characters ("取xiao订单") becomes the group's
    character too. Lengths change only where a syllable was replaced, so positions are only
    meaningful within this form.
    """
    spelled = _PINYIN.sub(lambda m: _HOMOPHONES[m.group(1) or m.group(2)][0], text)
    return "".join(_CANONICAL.get(char, char) for char in spelled)


# --- Negation ---------------------------------------------------------------------------
# Negators, the words that hold one and deny nothing, and what ends a negator's reach are the
# lexicon's (``negators``, ``not_negators``, ``clause_breaks``, ``negation_scope``): a
# negator reaches so many characters (Chinese) or words (Latin) forward within its clause.
_CLAUSE_BREAK = re.compile(
    rf"[,，。.!！?？;；:：、\n]|{alternation(every('clause_breaks'), whole=True)}"
)
_CJK_NEGATORS = tuple(w for w in every("negators") if not w.isascii())
_LATIN_NEGATORS = frozenset(w.replace("'", "") for w in every("negators") if w.isascii())
_ZH_NEGATOR = re.compile(alternation(_CJK_NEGATORS))
_ONE_CHARACTER = frozenset(w for w in _CJK_NEGATORS if len(w) == 1)
_NOT_NEGATORS = re.compile(alternation(every("not_negators"), whole=True))
ZH_SCOPE = lexicon("zh").negation_scope
EN_SCOPE = lexicon("en").negation_scope


def negated(text: str, start: int) -> bool:
    """Say whether the word at ``start`` of normalized ``text`` is negated in its clause.

    Chinese: a negator ending at most ``ZH_SCOPE`` characters before it; an A-not-A question
    (the negator between two equal characters) is not a negation. Latin: a negator at most
    ``EN_SCOPE`` words before it. A clause break ends the scope.
    """
    clause = text[:start]
    breaks = list(_CLAUSE_BREAK.finditer(clause))
    if breaks:
        clause = clause[breaks[-1].end() :]
    clause = _NOT_NEGATORS.sub(lambda m: "_" * len(m.group()), clause)
    for match in _ZH_NEGATOR.finditer(clause):
        if len(clause) - match.end() > ZH_SCOPE:
            continue
        at = match.start()
        after = clause[at + 1] if at + 1 < len(clause) else text[start : start + 1]
        if match.group()[0] in _ONE_CHARACTER and at > 0 and clause[at - 1] == after:
            continue  # "要不要": a question, not a denial
        return True
    latin = [w.replace("'", "").replace("’", "") for w in re.findall(r"[a-z'’]+", clause)]
    return any(word in _LATIN_NEGATORS for word in latin[-(EN_SCOPE + 1) :])


# --- Typos in Latin words -----------------------------------------------------------------
def typo_distance(a: str, b: str, limit: int) -> int:
    """Optimal-string-alignment distance (a swap of neighbours counts 1), capped at limit+1."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], previous2[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        previous2, previous = previous, current
    return previous[-1]


def openings(word: str) -> set[str]:
    """The first two letters of the cues ``word`` may be a typo of.

    A typo keeps a word's first two letters, or adds one letter between them ("wheather"
    for "weather", "whhere"): the second form drops the second letter.
    """
    found = {word[:2]}
    if len(word) >= 5:
        found.add(word[0] + word[2])
    return found


def close_word(cue: str, words: list[str]) -> bool:
    """Say whether some word is a typo of the one-word Latin ``cue`` (five letters or more).

    One edit for cues up to seven letters, two beyond; the first two letters must agree, or
    a letter was added between them (``openings``), so "older" is not "order" and "wife" is
    not "wire" (four-letter cues are never fuzzy).
    """
    if len(cue) < 5 or not cue.isascii() or not cue.isalpha():
        return False
    limit = 1 if len(cue) <= 7 else 2
    for word in words:
        if word == cue or len(word) < 4 or cue[:2] not in openings(word):
            continue
        if typo_distance(word, cue, limit) <= limit:
            return True
    return False
