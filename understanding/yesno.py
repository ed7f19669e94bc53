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
    r"|更正|修改为|改一下|"
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


def is_correction(text: str) -> bool:
    """Tell whether ``text`` says a value given before is replaced."""
    return CORRECTION.search(text) is not None


def corrected_part(text: str) -> str | None:
    """Return what follows the correction words ("不对，改成50" → "50"), or ``None``.

    Extractors read a bare answer ("50", "21号") as the slot the question asks for; after
    "不对，改成" the same words stand alone and are read the same way.
    """
    rest = _LEADING_NO.sub("", text)
    found = _CORRECTION_LEAD.match(rest)
    part = rest[found.end() :] if found else rest
    part = part.strip(" ，,。.!！吧啦了呢")
    return part if part and part != text.strip() else None


__all__ = ["CORRECTION", "Answer", "corrected_part", "is_correction", "read_answer"]
