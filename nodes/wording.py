"""The generic nodes' own sentences, and the voice that finds any sentence by key.

Scenario wording lives in each scenario's ``wording.py``; these are the sentences no scenario
owns: what to say when the request is unclear, the confirmation question, the hand-over to a
human, and the answers to courtesies and "never mind" (``understanding.acts``). ``Voice`` looks a
key up in the scenarios first and here second, in the user's language.

What a failed (or declined, or held) tool call means is not worded here nor by a scenario:
``Voice.failure`` says the one sentence ``tools.executor.failures`` gives each class.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from contract.scenario import Scenario, ScenarioSet, Wording
from tools.executor.failures import Outcome, sentence

GENERIC: Wording = {
    "ask_intent_open": {
        "zh": "抱歉，我没太明白您的意思，能换个说法吗？",
        "en": "Sorry, I'm not sure what you need. Could you put it another way?",
    },
    "model_unavailable": {
        "zh": "我这边暂时没能理解，请稍后再试或换个说法。",
        "en": "Sorry, my language service isn't answering right now, so I couldn't read "
        "that. Please try again shortly, or put it another way.",
    },
    "ask_slots": {
        "zh": "好的，我来帮您{task}。还需要：{slots}。",
        "en": "Sure, I can help you {task}. I still need: {slots}.",
    },
    "confirm_generic": {
        "zh": "即将为您办理：{what}（{details}）。",
        "en": "About to: {what} ({details}).",
    },
    "confirm_field": {"zh": "{label}：{value}", "en": "{label}: {value}"},
    "confirm_fields_between": {"zh": "，", "en": ", "},
    "confirm_generic_bare": {
        "zh": "即将为您办理：{what}。",
        "en": "About to: {what}.",
    },
    "confirm_question": {
        "zh": "请确认是否继续？回复“确认”继续，回复“取消”放弃。",
        "en": "Shall I go ahead? Reply “yes” to confirm or “no” to cancel.",
    },
    "done": {"zh": "好的，已为您{task}。", "en": "Done: I did as you asked ({task})."},
    "working_on": {"zh": "好的，正在为您{task}。", "en": "Sure, working on it: {task}."},
    "set_aside": {
        "zh": "（之前等待您确认的“{task}”已取消，没有执行。）",
        "en": "(What was waiting for your yes ({task}) was cancelled; nothing was done.)",
    },
    "kept_pending": {
        "zh": "（“{task}”还在等您确认，没有执行；先处理您的新问题，稍后再请您确认。）",
        "en": "({task} is still waiting for your yes and has not been done; "
        "your new question first, then I'll ask again.)",
    },
    "next_task": {
        "zh": "接下来为您{task}。",
        "en": "Next: {task}.",
    },
    "changed": {
        "zh": "已将{slot}改为 {value}。",
        "en": "Changed {slot} to {value}.",
    },
    "after_failed": {
        "zh": "因为{first}没有完成，{then}也没有执行。",
        "en": "Since {first} did not go through, I did not {then} either.",
    },
    "confirm_again": {
        "zh": "抱歉，我没能确定您是否同意。",
        "en": "Sorry, I couldn't tell whether that was a yes.",
    },
    "already_submitted": {
        "zh": "此前已提交过，无需重复操作。以下是当时的结果：",
        "en": "This was already submitted earlier; nothing was done again. What happened then:",
    },
    "handed_over": {
        "zh": "我已为您转接人工客服，请稍候。",
        "en": "I've passed you to a human agent; please hold on.",
    },
    "handoff_stuck": {
        "zh": "抱歉，我暂时没能帮您{task}。",
        "en": "Sorry, I couldn't {task} this time.",
    },
    "done_ref": {
        "zh": "好的，已为您{task}（编号 {reference}）。",
        "en": "Done: I did as you asked ({task}); reference {reference}.",
    },
    "untrusted_withheld": {
        "zh": "（此处内容含有可疑指令，已隐去）",
        "en": "(withheld: it contained instruction-like text)",
    },
    "handoff_human": {
        "zh": "好的，正在为您转接人工客服，请稍候。",
        "en": "Sure, I'm passing you to a human agent; please hold on.",
    },
    "handoff_complaint": {
        "zh": "很抱歉给您带来不好的体验。正在为您转接人工客服处理投诉，请稍候。",
        "en": "I'm sorry about that. I'm passing your complaint to a human agent; please hold on.",
    },
    "act.greet": {
        "zh": "您好！我可以帮您{tasks}。请问有什么可以帮您？",
        "en": "Hello! I can {tasks}. How can I help?",
    },
    "act.greet_open": {
        "zh": "您好！请问有什么可以帮您？",
        "en": "Hello! How can I help?",
    },
    "act.thanks": {
        "zh": "不客气！还有其他需要随时告诉我。",
        "en": "You're welcome! Tell me whenever you need anything else.",
    },
    "act.bye": {"zh": "再见，祝您生活愉快！", "en": "Goodbye, and have a nice day!"},
    "act.bye_pending": {
        "zh": "再见！{task}还没有办完，下次回来接着说就行。",
        "en": "Goodbye! We haven't finished ({task}); come back any time to carry on.",
    },
    "act.idle_yes": {
        "zh": "目前没有需要您确认的操作。请问还有什么可以帮您？",
        "en": "Nothing is waiting for your yes right now. What else can I do for you?",
    },
    "act.idle_yes_done": {
        "zh": "目前没有需要您确认的操作，刚才的已经办好了：{done}",
        "en": "Nothing is waiting for your yes; what you asked for is done: {done}",
    },
    "ask_one": {
        "zh": "抱歉，我没太明白。请问您是想{task}吗？",
        "en": "Sorry, I'm not sure I follow. Would you like to {task}?",
    },
    "ask_among": {
        "zh": "请问您是想{first}，还是想{last}？",
        "en": "Would you like to {first}, or to {last}?",
    },
    "act.never_mind": {
        "zh": "好的，有需要随时找我。",
        "en": "OK. I'm here whenever you need me.",
    },
    "act.dropped": {
        "zh": "好的，不{task}了。还有什么可以帮您？",
        "en": "OK, I've dropped that ({task}). Anything else I can help with?",
    },
}
"""Sentences that belong to no scenario."""

LIST_SEPARATOR = {"zh": "、", "en": ", "}
"""How the generic nodes join a list of labels in each language."""


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
        return sentence(outcome, result, language=self.language, task=task, known=known)

    def label(self, intent: str) -> str:
        """Name an intent for the user (its ``intent.<INTENT>`` wording)."""
        return self.text(f"intent.{intent}") or intent

    def join(self, items: list[str]) -> str:
        """Join labels the way the language lists them."""
        return LIST_SEPARATOR.get(self.language, ", ").join(items)
