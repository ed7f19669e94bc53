"""A yes or a no in the user's own words, and the words that mark a correction.

Pure text reading, shared by the rule generator (``understanding.rules``) and the confirmation
reader (``nodes.confirmation.read_decisions``). An answer that is not understood is neither a
yes nor a no: the caller asks again and changes nothing.
"""

from __future__ import annotations

import re
from typing import Literal

Answer = Literal["approve", "reject"]

_QUESTION = re.compile(r"[吗?？]|是不是|是否|好不好|可不可以|能不能|行不行")
_APPROVE = re.compile(
    # Strong words approve whatever follows ("确认退款"); short ones only as a whole word,
    # so that "对了，…" (by the way), "行李…" (luggage) or "yesterday" are not approvals.
    r"^\s*(?:确认|确定|同意|继续|approve|confirm|go ahead"
    r"|(?:是的?|好的?|好吧|行|可以|没问题|对的?|嗯|yes|yep|yeah|y|ok|okay|sure)"
    r"(?=$|[\s,，。.!！~～、;；]|吧|啊|呀))",
    re.IGNORECASE,
)
_REJECT = re.compile(
    r"(不要|不用|不确认|不同意|不行|取消|算了|(?<!特)别|拒绝|放弃"
    r"|\b(?:no|nope|cancel|reject|don'?t|stop)\b)",
    re.IGNORECASE,
)

CORRECTION = re.compile(
    r"不对|不是|错了|搞错|写错|说错|输错|弄错|改成|改为|改到|换成|换为|换到|应该是|我是说|我的意思是"
    r"|更正|修改为|改一下|等下|等等|等一下|不要[^，,]+[，,]\s*要|^\s*not\s+[^,]+,|"
    r"\b(?:actually|no wait|wait|i meant|i mean|sorry|make it|change it to|change to|instead|"
    r"correction|not\s+\S+\s*,?\s*but)\b",
    re.IGNORECASE,
)
"""Words that say a value given before is replaced ("不对，改成50", "make it the 21st")."""
_CORRECTION_LEAD = re.compile(
    r"^.*?(?:改成|改为|改到|换成|换为|换到|应该是|更正为|修改为|我是说|我的意思是|是|"
    r"\bmake it\b|\bchange (?:it )?to\b|\bi meant\b|\bi mean\b|\binstead of\s+\S+\b|\bactually\b)"
    r"\s*[:：,，]?\s*",
    re.IGNORECASE,
)
_CORE_LEAD = re.compile(r"^(?:那就|就|打|转|汇|退|要|换|订|约|挂|查|给我)(?=[\dA-Za-z])")
"""A verb before the value itself ("打300", "退OD-…"): the value is what is left."""
_LEADING_NO = re.compile(r"^\s*(?:不对|不是|错了|搞错了|no|nope|wait|sorry)[\s,，。.!！]*", re.I)


def read_answer(text: str) -> Answer | None:
    """Read the user's own words as a yes or a no; a question or anything unclear is ``None``."""
    if not text.strip() or _QUESTION.search(text):
        return None
    if _REJECT.search(text):
        return "reject"
    if _APPROVE.search(text):
        return "approve"
    return None


_STRONG_NO = re.compile(
    r"取消|算了|放弃|不要了|不用了|\b(?:cancel|forget it|never ?mind|don'?t do it)\b", re.I
)
_STRONG_YES = re.compile(r"^\s*(?:确认|确定|同意|approve|confirm|go ahead)", re.IGNORECASE)
_PLAIN_WORDS = re.compile(
    r"确认|确定|同意|继续|approve|confirm|go ahead|是的?|好的?|好吧|行|可以|没问题|对的?|嗯+|"
    r"yes|yep|yeah|ok(?:ay)?|sure|please|thanks?|谢谢|请|吧|啊|呀|了|"
    r"不要|不用|不确认|不同意|不行|取消|算了|别|拒绝|放弃|no|nope|cancel|reject|don'?t|stop|"
    r"[\s,，。.!！~～、;；]+",
    re.IGNORECASE,
)


def is_plain_answer(text: str) -> bool:
    """Tell whether ``text`` is a yes or a no and nothing more ("确认", "no thanks").

    "no, June 21" is not: it says what to do instead, which understanding must read.
    """
    answer = read_answer(text)
    if answer is None or is_correction(text):
        return False
    if answer == "approve" and _STRONG_YES.match(text) and not re.search(r"\d", text):
        return True  # "确认退款": a strong yes approves whatever it names
    return not _PLAIN_WORDS.sub("", text).strip()


def is_firm_no(text: str) -> bool:
    """Tell whether ``text`` cancels outright ("算了", "cancel"), not just "no, …"."""
    return _STRONG_NO.search(text) is not None


def is_correction(text: str) -> bool:
    """Tell whether ``text`` says a value given before is replaced."""
    return CORRECTION.search(text) is not None


_NOT_THIS_BUT = re.compile(
    r"^\s*(?:不是|不要|不对[，,]?\s*不是|not)\s*[^,，]+?\s*[,，]\s*"
    r"(?:而是|是|要|换成|改成|but|it'?s|it is)?\s*(?P<new>\S.*)$",
    re.IGNORECASE,
)
""""不是20号，21号", "not the 20th, the 21st": the value after the comma replaces the one named."""


def corrected_part(text: str) -> str | None:
    """Return what follows the correction words ("不对，改成50" → "50"), or ``None``.

    Extractors read a bare answer ("50", "21号") as the slot the question asks for; after
    "不对，改成" the same words stand alone and are read the same way.
    """
    instead = _NOT_THIS_BUT.match(text)
    if instead is not None:
        part = _CORE_LEAD.sub("", instead["new"].strip(" ，,。.!！吧啦了呢啊呀"))
        return part or None
    rest = _LEADING_NO.sub("", text)
    found = _CORRECTION_LEAD.match(rest)
    part = rest[found.end() :] if found else rest
    if part.strip() == text.strip():  # "哦不对 打300吧": what follows the last correction word
        cues = list(CORRECTION.finditer(text))
        part = text[cues[-1].end() :] if cues else ""
    part = _CORE_LEAD.sub("", part.strip(" ，,。.!！吧啦了呢啊呀"))
    return part if part and part != text.strip() else None


__all__ = [
    "CORRECTION",
    "Answer",
    "corrected_part",
    "is_correction",
    "is_firm_no",
    "is_plain_answer",
    "read_answer",
]
