"""What a pack says, made from its cards: questions, task names and results in sentences.

Nothing here names a domain: every word comes from the functions' docstrings (``packs.docs``)
or is one of the few generic frames below, in Chinese and English.

- a task is named by its description's first sentence ("预约课程", "book a member into a
  class"), a parameter and a result field by their labels; no function name, snake_case key,
  JSON or ``None`` reaches the user;
- the question for a missing value asks for it by its label (and lists its choices), a
  value that breaks a constraint is asked again with what the constraint allows;
- a result is worded by the generic describer: a record as "label: value" pairs, a list as a
  short numbered list, a write as done; a tool's own ``describe`` wording wins. A refusal
  (the function's or its check's) and a not-found are the failure vocabulary's sentences
  (``tools.executor.failures``) with the reason given, in the user's language when the
  reason was given in both.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from contract.scenario import Describer, Speaker, Text
from packs.docs import label, task_label, words_of
from packs.values import ToolValues
from state import AgentState, ToolResult
from tools.executor.failures import classify
from tools.registry.cards import ToolCard

MAX_ITEMS = 8
"""A list shows this many items, then says how many more there are."""
MAX_CHARS = 1500
"""A result's sentence is cut here (and says so)."""
MENU_TASKS = 8
"""Up to this many tasks, a greeting or an unclear request lists them; more, it asks openly."""

FRAMES: dict[str, Text] = {
    "pack.found": {"zh": "{task}的结果：{body}", "en": "Here is what I found ({task}): {body}"},
    "pack.done": {"zh": "好的，已为您{task}。{body}", "en": "Done: {task}. {body}"},
    "pack.empty": {
        "zh": "{task}：没有找到符合的记录。",
        "en": "I found nothing that matches ({task}).",
    },
    "pack.more": {"zh": "……另有 {n} 项", "en": "… and {n} more"},
    "pack.cut": {"zh": "……（其余从略）", "en": "… (the rest left out)"},
    "pack.why": {"zh": "原因：{reason}。", "en": "Reason: {reason}."},
    "pack.yes": {"zh": "是", "en": "yes"},
    "pack.no": {"zh": "否", "en": "no"},
    "pack.choices": {"zh": "（可选：{choices}）", "en": " ({choices})"},
    "reason.invalid": {"zh": "格式不对", "en": "it is not in a form I can use"},
}
OPEN_WORDS: dict[str, Text] = {
    "ask_intent": {
        "zh": "抱歉，我没太明白您需要什么，能具体说说吗？",
        "en": "Sorry, I'm not sure what you need. Could you tell me what you would like done?",
    },
    "act.greet": {"zh": "您好！请问有什么可以帮您？", "en": "Hello! How can I help you today?"},
}
"""A pack of many tools asks openly instead of listing them all."""
SEPARATOR = {"zh": ("：", "；", "，"), "en": (": ", "; ", ", ")}
"""(label to value, between fields, between the values of a list), per language."""


def pack_wording(
    cards: Sequence[ToolCard], fields: Mapping[str, Mapping[str, Text]]
) -> dict[str, Text]:
    """The pack's sentences: task names, questions, constraint reasons and result frames."""
    words: dict[str, Text] = dict(FRAMES)
    if len(cards) > MENU_TASKS:
        words.update(OPEN_WORDS)
    for card in cards:
        words[f"intent.{card.name}"] = task_label(card.description, card.name)
        values = ToolValues(card.parameters)
        for slot, info in card.parameters.model_fields.items():
            shown = label(info.description, slot)
            reader = values.readers[slot]
            words.setdefault(f"slot.{slot}", shown)
            choices = ""
            if reader.choices:
                listed = {
                    lang: ("、" if lang == "zh" else " or ").join(
                        reader.aliases.get(c, c) if lang == "zh" else c for c in reader.choices
                    )
                    for lang in ("zh", "en")
                }
                choices = "{choices}"
                words.setdefault(
                    f"choices.{slot}",
                    {
                        lang: FRAMES["pack.choices"][lang].format(choices=listed[lang])
                        for lang in ("zh", "en")
                    },
                )
            extra = words[f"choices.{slot}"] if choices else {"zh": "", "en": ""}
            ask = {
                "zh": f"请提供{shown['zh']}{extra['zh']}。",
                "en": f"Please tell me {_the(shown['en'])}{extra['en']}.",
            }
            words.setdefault(f"ask.{slot}", ask)
            words.setdefault(
                f"invalid.{slot}",
                {
                    "zh": f"{{value}} 不行：{{reason}}。请重新提供{shown['zh']}。",
                    "en": f"{{value}} won't do: {{reason}}. Please tell me {_the(shown['en'])}.",
                },
            )
            if reader.limits is not None:
                words.setdefault(f"reason.{reader.reason}", reader.limits)
    for tool, described in fields.items():
        for name, shown in described.items():
            words[f"field.{tool}.{name}"] = shown
    return words


def _the(label_en: str) -> str:
    """``the member number``; a label that is a question already ("why …") stands alone."""
    first = label_en.split(" ", 1)[0].lower()
    if first in ("why", "how", "what", "when", "where", "which", "who", "whether", "your"):
        return label_en
    return f"the {label_en}"


def describer_of(card: ToolCard, own: Callable[[Any, str], str | None] | None = None) -> Describer:
    """The describer of ``card``'s results: ``own`` wording first, else the generic one."""

    def describe(result: ToolResult, state: AgentState, speaker: Speaker) -> str | None:
        language = speaker.language if speaker.language in SEPARATOR else "en"
        task = speaker.label(card.name)
        outcome = classify(result)
        if outcome is None:
            data = result.get("data")
            if own is not None:
                text = own(data, language)
                if text:
                    return text
            if _empty(data):
                return speaker.say("pack.empty", task=task)
            body = _cut(render(data, speaker, language, card.name), speaker)
            key = "pack.done" if card.writes else "pack.found"
            said = speaker.say(key, task=task, body=body).strip()
            return "\n".join(line.rstrip() for line in said.splitlines())
        known = list((state.get("slots") or {}).values())
        sentence = speaker.failure(outcome, result, task=task, known=known)
        reason = reason_of(result, language)
        return f"{sentence}{speaker.say('pack.why', reason=reason)}" if reason else sentence

    return describe


def reason_of(result: ToolResult, language: str) -> str:
    """Why a function or its check refused, in ``language`` when it was said in both."""
    data = result.get("data")
    given = data.get("reason") if isinstance(data, Mapping) else None
    if isinstance(given, Mapping):
        text = given.get(language) or given.get("en") or ""
        return str(text).strip().rstrip(".。")
    return ""


def render(value: Any, speaker: Speaker, language: str, tool: str, *, depth: int = 0) -> str:
    """A result as words: records as "label: value" pairs, lists as short lists."""
    colon, between, listed = SEPARATOR[language]
    if isinstance(value, bool):
        return speaker.say("pack.yes" if value else "pack.no")
    if isinstance(value, Mapping):
        pairs = [
            field_label(str(k), speaker, tool)
            + colon
            + render(v, speaker, language, tool, depth=depth + 1)
            for k, v in value.items()
            if not _empty(v)
        ]
        text = between.join(pairs)
        return f"（{text}）" if depth and language == "zh" else f"({text})" if depth else text
    if isinstance(value, list | tuple):
        items = [v for v in value if not _empty(v)]
        shown = items[:MAX_ITEMS]
        more = len(items) - len(shown)
        if any(isinstance(v, Mapping) for v in shown) and depth == 0:
            lines = [
                f"{n}. {render(v, speaker, language, tool, depth=0)}"
                for n, v in enumerate(shown, 1)
            ]
            if more:
                lines.append(speaker.say("pack.more", n=more))
            return "\n" + "\n".join(lines)
        text = listed.join(render(v, speaker, language, tool, depth=depth + 1) for v in shown)
        return text + (speaker.say("pack.more", n=more) if more else "")
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def field_label(name: str, speaker: Speaker, tool: str) -> str:
    """A result field's label: its tool's ``Returns:`` line, a parameter's, else its words."""
    for key in (f"field.{tool}.{name}", f"slot.{name}"):
        try:
            return speaker.say(key)
        except KeyError:
            continue
    return words_of(name)


def _empty(value: Any) -> bool:
    return value is None or value == "" or (isinstance(value, list | tuple | Mapping) and not value)


def _cut(text: str, speaker: Speaker) -> str:
    if len(text) <= MAX_CHARS:
        return text
    return text[:MAX_CHARS].rstrip() + speaker.say("pack.cut")


__all__ = ["FRAMES", "describer_of", "field_label", "pack_wording", "reason_of", "render"]
