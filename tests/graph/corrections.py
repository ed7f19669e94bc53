"""Messages that name a new value for a pending slot: fillers × value forms × languages.

Issue 37's property: at a pending confirmation and during slot filling, a message that names
a different value for a pending slot never has the old value executed; the default reader
applies the new one in at least 90 % of them. The fillers and forms below were written for
this matrix from how people change their mind in each language; none is a reader's rule.
"""

from __future__ import annotations

from dataclasses import dataclass

FILLERS = {
    "zh": (
        "{v}",
        "改成{v}",
        "不对，{v}",
        "{v}吧",
        "还是{v}",
        "呃，{v}就行",
        "嗯…还是{v}",
        "换成{v}",
        "不是{old}，是{v}",
        "{v}，不是{old}",
        "我说错了，{v}",
        "应该是{v}",
        "哦不对 {v}",
        "那就{v}好了",
        "等下，{v}",
    ),
    "en": (
        "{v}",
        "make it {v}",
        "{v} instead",
        "actually {v}",
        "no, {v}",
        "sorry, {v}",
        "hmm {v}",
        "{v} please",
        "not {old}, {v}",
        "{v} not {old}",
        "change it to {v}",
        "let's do {v}",
        "I meant {v}",
        "wait, {v}",
        "oops, should be {v}",
    ),
}
"""How a new value is said; ``{old}`` is the value it replaces, as the user said it."""

AMOUNTS = {
    "zh": (("60", "80"), ("60元", "80元"), ("六十", "八十"), ("六十块", "八十块")),
    "en": (("60", "80"), ("60 yuan", "80 yuan"), ("sixty", "eighty")),
}
"""(new, old) forms of 60 replacing 80 yuan."""

DAYS = {
    "zh": (("21号", "20号"), ("6月21号", "6月20号"), ("6/21", "6/20"), ("大后天", "后天")),
    "en": (("the 21st", "the 20th"), ("June 21", "June 20"), ("june 21st", "june 20th")),
}
"""(new, old) forms of 2024-06-21 replacing 2024-06-20 (today is 2024-06-18)."""


@dataclass(frozen=True)
class Change:
    """One message that changes a pending value."""

    language: str
    text: str

    @property
    def id(self) -> str:
        return f"{self.language}:{self.text}"


def changes(forms: dict[str, tuple[tuple[str, str], ...]]) -> list[Change]:
    """Every filler with every form, per language (a filler that repeats the old value only
    where it reads naturally: with the same form)."""
    out = []
    for language, fillers in FILLERS.items():
        for filler in fillers:
            for new, old in forms[language]:
                out.append(Change(language, filler.format(v=new, old=old)))
    return out


def sample(items: list[Change], every: int) -> list[Change]:
    """Every ``every``-th item, spread over the fillers and forms (``make check``)."""
    return items[::every] if every > 1 else items


__all__ = ["AMOUNTS", "DAYS", "FILLERS", "Change", "changes", "sample"]
