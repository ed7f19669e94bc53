"""Tool output is data. Text in it that reads like an instruction is flagged, never obeyed.

Replies are built from fields, not from free text, and the model view wraps tool results as
data; this module finds the instruction-like text so the audit can show the attempt, and
``defang`` makes tool text inert before anyone can render it.

Flagging runs on a normalized copy (NFKC, so full-width letters become ASCII; zero-width and
other invisible characters removed; case-folded; whitespace collapsed), so "ＩＧＮＯＲＥ",
"ig\u200bnore" and "SYSTEM:" are the same to it as "ignore" and "system:". Chinese spaced out
("忽 略 上 面") and English written letter by letter ("f o r g e t") are read with the gaps
closed. The "forget / disregard / override everything above" family is matched with its
quantifier ("everything", "all of", "一切", "所有") so that "never mind, forget it" and
"我忘记之前的订单号了" are not; ``tests/attack/truth.py`` measures false positives on the
seeded data and the evaluation set.
"""

from __future__ import annotations

import copy
import re
import unicodedata
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from security.pii import ZERO_WIDTH

_DROP = r"(?:ignore|disregard|forget|override|overrule|discard|erase|neglect)"
"""Verbs that throw away what came before."""
_EN = [
    r"\b(?:ignore|disregard|forget|override|skip|bypass)\b.{0,30}?\b(?:previous|prior|above|"
    r"earlier|preceding|system|original|all|any|your|those|these)\b.{0,30}?\b(?:instructions?|"
    r"messages?|rules?|prompts?|directions?|guidelines?|context|policy|policies|constraints?)\b",
    r"\bignore (?:the |all |everything )?(?:previous|above|prior)\b",
    r"\byou are now\b",
    r"\bfrom now on,? you\b",
    r"\b(?:act|behave) as (?:an? )?(?:admin|administrator|root|developer|system|dan)\b",
    r"\bpretend (?:to be|you are)\b",
    r"\bnew (?:instructions?|rules?|task)\s*:",
    r"\bsystem prompt\b",
    r"\b(?:developer|god|admin|jailbreak) mode\b",
    r"\b(?:reveal|print|show|repeat|leak) (?:me )?(?:your|the) (?:system )?"
    r"(?:prompt|instructions)\b",
    r"\b(?:call|use|invoke|run|execute) (?:the )?\w+ (?:tool|function)\b",
    # "all the money", not "send money to ACC-2001" (an ordinary transfer request)
    r"\b(?:transfer|send|wire) (?:all(?: (?:of )?(?:the|my|your))?|the (?:entire|whole)"
    r"|everything in the) (?:money|funds|balance)\b",
    r"(?:^|\n)\s*(?:system|assistant|developer|tool)\s*:",
    r"<\|?\s*(?:system|assistant|developer|im_start|im_end|endoftext)\s*\|?>",
    r"</?\s*(?:system|instructions?|assistant|developer)\s*>",
    r"\[/?(?:inst|system|sys)\]",
    r"<<\s*sys\s*>>",
    r"(?:^|\n)\s*#{1,6}\s*(?:system|instructions?)\b",
    r"\bimportant\s*:\s*(?:the )?(?:assistant|ai|agent|model)\b",
    # the "forget / disregard / override everything above" family: a quantifier, then where
    *(
        pattern.replace(" ", r"\s+")  # across line breaks too
        for pattern in (
            rf"\b{_DROP}\b,? (?:all(?: of)?|everything|anything|whatever)(?: (?:that|which))?"
            r"(?: (?:was|were|is|has been|you(?:'ve| have| were)?(?: been)?|i) "
            r"(?:said|told(?: you)?|written|given|read|seen|sent))?"
            r" (?:above|before(?: this)?|earlier|previously|so far|until now"
            r"|up to (?:now|here|this point)|prior(?: to this)?|in this (?:chat|conversation)"
            r"|(?:the |this )?(?:above|preceding))\b",
            rf"\b{_DROP}\b,? (?:all of )?the (?:above|foregoing|preceding)\b",
            rf"\b{_DROP}\b,? everything (?:you(?:'ve| have)? been told|you were told"
            r"|i (?:said|told you))",
            r"\b(?:everything|all|the (?:text|instructions?|rules?|messages?))"
            r" (?:above|before this|so far) (?:is|are|was|were) (?:now )?"
            r"(?:void|null|cancell?ed|invalid|no longer (?:valid|in effect))\b",
        )
    ),
]
_ZH = [
    r"(?:请)?(?:忽略|无视|忘记|忘掉|不要理会|跳过)(?:掉)?(?:你)?(?:之前|以上|上面|前面|先前|上述|此前|所有|全部|原来|原有|系统)"
    r".{0,6}?(?:指令|规则|提示|说明|命令|要求|设定|内容|限制)",
    r"你现在(?:是|扮演|作为|变成)",
    r"从现在(?:开始|起)[,，]?你",
    r"(?:扮演|假装)(?:一个|成)?(?:管理员|系统|开发者|客服主管)",
    r"新的?(?:指令|规则|任务)\s*[:：]",
    r"系统(?:提示|指令|消息)",
    r"(?:立即|马上|现在)(?:调用|执行|转账|退款|打款)",
    r"以(?:管理员|系统|开发者)(?:身份|权限)",
    r"(?:^|\n)\s*(?:系统|助手|开发者)\s*[:：]",
    # "把所有余额都转到", not "把钱转到我另一个账户" (an ordinary transfer request)
    r"(?:把|将)(?:(?:所有|全部)的?(?:余额|钱|资金)|(?:余额|钱|资金)(?:都|全部|全都))(?:都)?(?:转|打)(?:到|给)",
    # "忘掉上面的一切" / "无视以上全部内容": where, what was said there, then all of it
    r"(?:忽略|无视|無視|忘记|忘記|忘掉|忘了|不要理会|不要理會|不用理会|别理会|不要管|别管|抛开|抛弃|丢掉"
    r"|推翻|覆盖|覆蓋)(?:掉)?"
    r"(?:你)?(?:之前|以上|上面|前面|先前|上述|此前|前述|刚才|上文|前文)"
    r"(?:(?:说|讲|提|写|给|发)(?:过)?)?(?:的)?(?:所有|全部|一切|任何)(?:的)?"
    r"(?:内容|指令|规则|提示|说明|命令|要求|设定|限制|东西|信息|消息|对话|设置)?",
    r"(?:忽略|无视|無視|忘记|忘記|忘掉|不要理会|推翻|覆盖)(?:掉)?(?:你)?(?:之前|以上|上面|前面|上述|上文)"
    r"的?一切",
    r"(?:以上|上面|之前|前面|上述|上文)的?(?:所有|全部)?(?:内容|指令|规则|提示|设定|说明|要求)"
    r"(?:都|全部|一律|统统)?(?:作废|无效|不算数?|不再有效|失效)",
]
_INJECTION = re.compile("|".join([*_EN, *_ZH]), re.IGNORECASE | re.DOTALL)
_SPACED_EN = re.compile(
    rf"{_DROP}(?:all|everything|anything)?(?:ofthe|the)?"
    r"(?:above|before|previous|prior|earlier|preceding|instructions?|rules?|prompts?)"
    r"|(?:youarenow|systemprompt|newinstructions?|developermode)"
)
"""The same family written letter by letter ("f o r g e t  e v e r y t h i n g  a b o v e")."""
_LETTER_RUN = re.compile(r"(?<![^\W\d_])(?:[a-z][ .\-_*·]){3,}[a-z](?![^\W\d_])")
_CJK_GAP = re.compile(r"(?<=[\u3400-\u9fff])[ \t\n.\-_*·]+(?=[\u3400-\u9fff])")

_INVISIBLE_CATEGORIES = frozenset({"Cf", "Cc"})


def normalize_for_matching(text: str) -> str:
    """Return the form flagging looks at: NFKC, invisible characters removed, case-folded."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(
        char
        for char in text
        if char not in ZERO_WIDTH
        and (char in "\n\t" or unicodedata.category(char) not in _INVISIBLE_CATEGORIES)
    )
    text = text.casefold()
    return re.sub(r"[ \t\u00a0\u3000]+", " ", text)


def looks_like_instruction(text: str) -> bool:
    """Tell whether ``text`` reads like an instruction to the agent (zh or en).

    Besides the normalized text, two spellings meant to slip past a pattern are read: Chinese
    with spaces or dots between its characters ("忽 略 上 面 的 指 令"), and English written
    letter by letter ("i g n o r e  a l l"), each with the gaps closed.
    """
    normal = normalize_for_matching(text[:20_000])
    if _INJECTION.search(normal) or _INJECTION.search(_CJK_GAP.sub("", normal)):
        return True
    for run in _LETTER_RUN.findall(normal):
        if _SPACED_EN.search(re.sub(r"[^a-z]", "", run)):
            return True
    return False


def find_injections(value: Any, path: str = "") -> list[str]:
    """Return the paths of strings in ``value`` that look like instructions to the agent."""
    found: list[str] = []
    if isinstance(value, str):
        if looks_like_instruction(value):
            found.append(path or "(value)")
    elif isinstance(value, dict):
        for key, item in value.items():
            found.extend(find_injections(item, f"{path}.{key}" if path else str(key)))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found.extend(find_injections(item, f"{path}[{index}]"))
    return found


FLAG_PREFIX = "untrusted_instruction:"
"""The executor's flag on a result path whose text reads like an instruction."""
_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


R = TypeVar("R", bound=Mapping[str, Any])
"""A tool's envelope (``tools.executor.envelope.ToolResult``, which this layer cannot name)."""


def withhold_flagged(result: R, marker: str) -> R:
    """Return ``result`` with the text at every flagged path replaced by ``marker``.

    What the executor flagged (``untrusted_instruction:<path>``) is not repeated to the
    user as if it were the system's own words: a reply shows the marker in its place.
    The result itself is left as it is (the audit and ``tool_results`` keep the text).
    """
    paths = [
        flag.removeprefix(FLAG_PREFIX)
        for flag in result.get("flags") or []
        if isinstance(flag, str) and flag.startswith(FLAG_PREFIX)
    ]
    if not paths:
        return cast("R", dict(result))  # a copy of the same envelope
    data = copy.deepcopy(result.get("data"))
    for path in paths:
        data = _replace_at(data, path, marker)
    return cast("R", {**result, "data": data})  # the same envelope, its data withheld


def _replace_at(value: Any, path: str, marker: str) -> Any:
    if path == "(value)":
        return marker if isinstance(value, str) else value
    steps = [key if key else int(index) for key, index in _STEP.findall(path)]
    target = value
    for step in steps[:-1]:
        try:
            target = target[step]
        except (KeyError, IndexError, TypeError):
            return value
    last = steps[-1] if steps else None
    try:
        if isinstance(target[last], str):
            target[last] = marker
    except (KeyError, IndexError, TypeError):
        pass
    return value


_IMAGE = re.compile(r"!\[([^\]\n]{0,200})\]\([^)\n]{0,2000}\)")
_LINK = re.compile(r"\[([^\]\n]{0,200})\]\(\s*([^)\s]{0,2000})[^)\n]{0,200}\)")
_REF_DEF = re.compile(r"(?m)^\s{0,3}\[([^\]\n]{1,100})\]:\s*\S+.*$")
_URL = re.compile(
    r"\b(?:(?:https?|ftp|file|javascript|data|vbscript|mailto|tel|sms)\s*:\s*/{0,2}|www\.)"
    r"[^\s<>\"'()\[\]]*",
    re.IGNORECASE,
)
_ANGLE = re.compile(r"[<>]")


def defang(text: str) -> str:
    """Return ``text`` that no renderer turns into a link, an image, HTML or a role tag.

    Images become ``[image removed: alt]``; links keep their text and show the target
    defanged (``hxxps://evil[.]com/x``); bare URLs and ``www.`` hosts are defanged the same
    way; angle brackets become full-width, so ``<img>`` or ``<|system|>`` stay plain text.
    Invisible characters are removed so a defanged URL cannot be rebuilt from hidden parts.
    """
    if not text:
        return text
    text = "".join(char for char in text if char not in ZERO_WIDTH)
    text = _IMAGE.sub(lambda m: f"[image removed: {m.group(1)}]", text)
    text = _LINK.sub(lambda m: f"{m.group(1)} ({_defang_url(m.group(2))})", text)
    text = _REF_DEF.sub(lambda m: f"[{m.group(1)}] (link removed)", text)
    text = _URL.sub(lambda m: _defang_url(m.group(0)), text)
    return _ANGLE.sub(lambda m: "＜" if m.group(0) == "<" else "＞", text)


def _defang_url(url: str) -> str:
    if "hxxp" in url or "[.]" in url:
        return url  # already inert
    url = re.sub(r"(?i)^(https?|ftp|file)", lambda m: m.group(1)[0] + "xx" + m.group(1)[3:], url)
    url = re.sub(r"(?i)^(javascript|data|vbscript)\s*:", r"\1[:]", url)
    return url.replace(".", "[.]")


def defang_value(value: Any) -> Any:
    """Defang every string nested in ``value`` (dict keys are left as they are)."""
    if isinstance(value, str):
        return defang(value)
    if isinstance(value, dict):
        return {key: defang_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [defang_value(item) for item in value]
    return value


__all__ = [
    "FLAG_PREFIX",
    "withhold_flagged",
    "defang",
    "defang_value",
    "find_injections",
    "looks_like_instruction",
    "normalize_for_matching",
]
