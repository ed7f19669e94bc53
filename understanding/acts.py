"""Conversation acts no scenario owns: hello, thanks, goodbye, "never mind", a person, a complaint.

A customer-service chat opens with "你好", closes with "谢谢" or "再见", drops a request half
way ("算了不挂了") and asks for a person ("转人工"). None of these is a task, so the
scenarios' recognizers read them as unclear, and the agent answered each one with its list of
services, or asked again for the slot the user had just walked away from.

A message is read as a courtesy or as "never mind" only when that is all it says: what is left
after the act's words and fillers ("好的", "吧", "then") is nothing. "你好，OD-… 到哪了" is a
question about an order, and "我的快递不见了" a missing parcel, not "不…了". Asking for a
person or complaining is read wherever it is said: a human takes that over, whatever else the
message holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Act = Literal["human", "complaint", "beyond", "never_mind", "bye", "thanks", "greet"]

HANDED_OVER: frozenset[Act] = frozenset({"human", "complaint", "beyond"})
"""Acts a person takes over, wherever in the message they are said; ``beyond`` is a request a
scenario knows of but cannot serve (``contract.scenario.Beyond``), its name the act's cue."""

EVIDENCE_PREFIX = "act:"
"""How the intent node records an act among the intent's evidence (the hand-off reads it)."""

_HUMAN = re.compile(
    r"人工(?!智能)|真人|客服人员|接线员|(?:找|转|要|联系|接)(?:客服|财务|经理|主管)|"
    r"\b(?:human|real person|live (?:agent|person|chat)|representative|operator|"
    r"(?:talk|speak|chat) (?:to|with) (?:a |an |some|your )?"
    r"(?:one|body|person|agent|staff|customer service|support))\b",
    re.IGNORECASE,
)
_COMPLAINT = re.compile(r"投诉|\bcomplain(?:t|ts|ing)?\b", re.IGNORECASE)

_COURTESY: dict[Act, re.Pattern[str]] = {
    "never_mind": re.compile(
        r"算了|算啦|不用了|不需要了|不要了|没事了|先不(?:用|要|办|弄)?了?|"
        r"不(?![错好对够行多少早晚大小太])[\u4e00-\u9fff]{1,2}了|"
        r"改天再说|以后再说|"
        r"\b(?:never ?mind|nvm|forget (?:about )?it|no need|changed my mind|skip it|no,? thanks?|"
        r"don'?t bother)\b",
        re.IGNORECASE,
    ),
    "bye": re.compile(
        r"再见|拜拜|回见|没有了|没了|没(?:有)?(?:别的|其他的?)(?:事|问题)?了|就这些|就这样|"
        r"\b(?:good ?bye|bye|see you|that'?s all|that is all|nothing else|"
        r"have a (?:nice|good) day)\b",
        re.IGNORECASE,
    ),
    "thanks": re.compile(
        r"谢谢|多谢|感谢|谢了|谢啦|辛苦了|麻烦(?:你|您)?了|"
        r"\b(?:thank you|thanks?|thx|ty|cheers|much appreciated|appreciate it)\b",
        re.IGNORECASE,
    ),
    "greet": re.compile(
        r"你好|您好|嗨|哈喽|哈啰|在吗|在不在|有人吗|早上好|上午好|中午好|下午好|晚上好|早安|"
        r"\b(?:hello|hi|hey|hiya|good (?:morning|afternoon|evening)|anyone there|are you there)\b",
        re.IGNORECASE,
    ),
}
"""The acts that must be all a message says, checked in this order for their words."""

_FILLER = re.compile(
    r"那就|那个|那|就|先|还是|其实|要不|也|都|我们|我|你们|你|您|亲|的|好的|好吧|好|行|嗯+|哦+|噢|喔|"
    r"啊|呀|哈+|吧|啦|了|呢|呗|嘛|哇|呃|额|客服|"
    r"\b(?:ok(?:ay)?|oh|well|then|please|so|just|alright|all right|fine|actually|um+|uh+|nah|"
    r"hmm+|yes|yeah|no|sir|madam|very|much|so much|a lot|and|for now|you|guys|it|that|"
    r"again|bot|there)\b|"
    r"[\s\W_]+",
    re.IGNORECASE,
)
"""Words that say nothing of their own around an act, and punctuation, spaces and emoji."""


@dataclass(frozen=True)
class ReadAct:
    """What a message does besides (or instead of) asking for a task."""

    kind: Act
    """The act, the strongest first: a person, a complaint, never mind, bye, thanks, hello."""
    cue: str
    """The words that said it, for the evidence."""


def read_act(text: str) -> ReadAct | None:
    """Return the act ``text`` performs, or ``None`` when it is (also) something else."""
    for kind, pattern in (("human", _HUMAN), ("complaint", _COMPLAINT)):
        found = pattern.search(text)
        if found:
            return ReadAct(kind, found.group())  # type: ignore[arg-type]
    said: list[tuple[Act, str]] = []
    rest = text
    for kind, pattern in _COURTESY.items():
        found = pattern.search(rest)
        if found:
            said.append((kind, found.group()))
            rest = pattern.sub(" ", rest)
    if not said or _FILLER.sub("", rest):
        return None
    kind, cue = said[0]
    return ReadAct(kind, cue)


_FOLLOW_UP = re.compile(
    r"^\s*(?:那么?|那换成?|换成|改成|那要是)|呢\s*[?？]?\s*$|^\s*(?:what|how)\s+about\b|^\s*and\b"
    r"|^\s*[\u4e00-\u9fff]{1,5}的\s*(?:吗|吧)?\s*[?？]?\s*$"
    r"|^\s*(?:only\s+)?(?:the\s+)?[a-z]+\s+ones?\s*\??\s*$",
    re.IGNORECASE,
)
"""A message that asks the last request again with something changed ("那上海呢", "what about
Shanghai?", "下午的", "the afternoon ones?")."""


def is_follow_up(text: str) -> bool:
    """Tell whether ``text`` asks the last request again with something changed."""
    return bool(_FOLLOW_UP.search(text))


__all__ = ["EVIDENCE_PREFIX", "HANDED_OVER", "Act", "ReadAct", "is_follow_up", "read_act"]
