"""What a pack reads out of a docstring besides the schema: names, labels, examples, fields.

A team writes its docstrings for people, in English or Chinese; a pack takes its words from
them and from nothing else:

- a **label** is a description's first phrase ("The member's phone number, such as …" →
  "member's phone number"); a Chinese label is the parenthesis of Chinese text it carries
  ("The member's phone number (手机号)" → "手机号"). A sentence the user reads in Chinese
  uses the Chinese label, else the English one; a field with no description is named by its
  words (``seats_left`` → "seats left"), never by its key;
- **example values** are the quoted values after "such as", "e.g." or "for example"; they
  teach the shape of a code (``packs.values``) and are never offered as answers;
- **choice aliases** are the Chinese words in parentheses after a quoted choice ("'annual'
  (年卡)"): what a Chinese message may say for it;
- **result fields** are the ``Returns:`` section's ``name: description`` lines;
- **example requests** are the ``Examples:`` section's lines (what users say), beside the
  description sentence: the recognizer's training data (``Scenario.examples``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from docstring_parser import parse as parse_docstring

from contract.scenario import Text

_CJK = re.compile(r"[\u3400-\u9fff]")
_PAREN = re.compile(r"[(（]([^()（）]*)[)）]")
_EXAMPLE_LEAD = re.compile(r"(?:such as|e\.g\.|for example|like|例如|比如|如)\s*[:：]?\s*$", re.I)
_QUOTED = re.compile(r"""(?<![A-Za-z0-9])['"‘“「]([^'"‘’“”「」]{1,60}?)['"’”」](?![A-Za-z0-9])""")
_FIELD_LINE = re.compile(r"^\s*[-*]?\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\([^)]*\))?\s*:\s*(.+)$")
_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.I)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds Chinese characters."""
    return bool(_CJK.search(text))


def language_of(text: str) -> str:
    """``zh`` for a text with Chinese characters, else ``en``."""
    return "zh" if has_cjk(text) else "en"


def words_of(name: str) -> str:
    """``seats_left`` → ``seats left``: a key as words, never as a key."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return " ".join(spaced.replace("_", " ").replace("-", " ").split()).lower()


def label(description: str | None, name: str) -> Text:
    """The label of a parameter, field or tool in each language (see the module docstring)."""
    text = " ".join((description or "").split())
    zh = next((p.strip() for p in _PAREN.findall(text) if has_cjk(p)), "")
    plain = _PAREN.sub("", text).strip()
    if has_cjk(plain):
        zh = zh or re.split(r"[，,。.;；：:（(]", plain, maxsplit=1)[0].strip()
        plain = ""
    phrase = re.split(r"[,.;:]\s|[,.;:]$|,", plain, maxsplit=1)[0].strip()
    phrase = _ARTICLE.sub("", phrase).strip()
    en = (phrase[:1].lower() + phrase[1:]) if phrase[:2] != phrase[:2].upper() else phrase
    en = en or words_of(name)
    return {"en": en, "zh": zh or en}


def task_label(summary: str, name: str) -> Text:
    """The label of a task: the description's first sentence as a verb phrase."""
    sentence = re.split(r"(?<=[.!?。！？])\s*", " ".join(summary.split()), maxsplit=1)[0]
    sentence = sentence.rstrip(".!?。！？").strip()
    zh = next((p.strip() for p in _PAREN.findall(sentence) if has_cjk(p)), "")
    plain = _PAREN.sub("", sentence).strip()
    if has_cjk(plain):
        return {"zh": zh or plain, "en": words_of(name)}
    en = (plain[:1].lower() + plain[1:]) if plain[:2] != plain[:2].upper() else plain
    en = en or words_of(name)
    return {"en": en, "zh": zh or en}


def example_values(description: str | None) -> list[str]:
    """The quoted values a description gives as examples ("such as 'M-1001'")."""
    text = description or ""
    found: list[str] = []
    chained = False
    last_end = 0
    for match in _QUOTED.finditer(text):
        between = text[last_end : match.start()]
        lead = _EXAMPLE_LEAD.search(text[max(0, match.start() - 24) : match.start()])
        if lead or (chained and re.fullmatch(r"\s*(?:,|or|and|、|或)?\s*", between, re.I)):
            found.append(match.group(1))
            chained = True
        else:
            chained = False
        last_end = match.end()
    return found


def quoted_choices(description: str | None) -> list[str]:
    """Quoted values a description gives that are not examples: choices it allows."""
    examples = set(example_values(description))
    return [m.group(1) for m in _QUOTED.finditer(description or "") if m.group(1) not in examples]


def choice_aliases(description: str | None) -> dict[str, str]:
    """``'annual' (年卡)`` in a description → ``{"annual": "年卡"}``."""
    aliases: dict[str, str] = {}
    for match in re.finditer(
        r"""(?<![A-Za-z0-9])['"‘“]([^'"‘’“”]{1,60}?)['"’”]\s*[(（]([^()（）]{1,20})[)）]""",
        description or "",
    ):
        if has_cjk(match.group(2)):
            aliases[match.group(1)] = match.group(2).strip()
    return aliases


def result_fields(fn: Callable[..., Any]) -> dict[str, Text]:
    """The ``Returns:`` section's ``name: description`` lines, as field → label."""
    doc = parse_docstring(fn.__doc__ or "")
    if doc.returns is None:
        return {}
    text = doc.returns.description or ""
    if doc.returns.type_name and not doc.returns.type_name.strip().startswith(("dict", "list")):
        text = f"{doc.returns.type_name}: {text}"
    fields: dict[str, Text] = {}
    for line in text.splitlines():
        match = _FIELD_LINE.match(line)
        if match:
            fields[match.group(1)] = label(match.group(2), match.group(1))
    return fields


def request_examples(
    fn: Callable[..., Any] | None, given: Iterable[str] = ()
) -> dict[str, tuple[str, ...]]:
    """Example requests by language: the description sentence, ``Examples:`` and ``given``."""
    doc = parse_docstring((fn.__doc__ if fn is not None else "") or "")
    texts: list[str] = []
    summary = " ".join((doc.short_description or "").split())
    if summary:
        plain = re.sub(r"\s+([.,;!?])", r"\1", _PAREN.sub("", summary)).strip()
        texts.append(plain or summary)
        zh = next((p.strip() for p in _PAREN.findall(summary) if has_cjk(p)), "")
        if zh and not has_cjk(plain):
            texts.append(zh)
    for example in doc.examples:
        for line in (example.description or example.snippet or "").splitlines():
            line = _BULLET.sub("", line).strip().strip("'\"“”")
            if line and not line.startswith(">>>"):
                texts.append(line)
    texts.extend(" ".join(t.split()) for t in given if t.strip())
    out: dict[str, list[str]] = {}
    for text in texts:
        bucket = out.setdefault(language_of(text), [])
        if text not in bucket:
            bucket.append(text)
    return {language: tuple(items) for language, items in out.items()}


def merged_examples(
    *sources: Mapping[str, tuple[str, ...]],
) -> dict[str, tuple[str, ...]]:
    """Example requests of several sources, by language, each once, in order."""
    out: dict[str, list[str]] = {}
    for source in sources:
        for language, texts in source.items():
            bucket = out.setdefault(language, [])
            bucket.extend(t for t in texts if t not in bucket)
    return {language: tuple(texts) for language, texts in out.items()}


__all__ = [
    "choice_aliases",
    "example_values",
    "has_cjk",
    "label",
    "language_of",
    "merged_examples",
    "quoted_choices",
    "request_examples",
    "result_fields",
    "task_label",
    "words_of",
]
