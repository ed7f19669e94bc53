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


# --- Homophones -------------------------------------------------------------------------
# Groups of characters that share a pinyin syllable (tone ignored), as a pinyin input method
# offers them side by side. Matching through the group's first character catches the wrong
# pick ("推款", "专账", "鸡票", "天汽", "预越") without a pinyin dictionary. Only syllables
# of common service words are listed; a character in no group stands for itself.
_HOMOPHONES: dict[str, str] = {
    "kuan": "款宽框",
    "tui": "退推腿颓",
    "zhuan": "转专砖赚",
    "hao": "号好浩毫豪",
    "yue": "约越月阅悦跃",
    "xiao": "销消小晓效笑校",
    "ji": "机鸡几击基急及即记",
    "qi": "气汽器起期其奇",
    "ding": "订定顶丁",
    "mai": "卖买迈麦",
    "xing": "行型形星性醒",
    "piao": "票漂飘",
    "dan": "单担丹但",
    "cui": "催崔翠脆",
    "cha": "查茶察差",
    "yu": "预遇域雨语与鱼余于",
    "gua": "挂瓜刮",
    "tian": "天添田甜",
    "zhang": "账帐仗涨",
    "qian": "钱前浅欠",
    "qu": "取去曲趣",
    "song": "送宋颂松",
    "dao": "到道倒导",
    "wu": "物务误雾",
    "liu": "流留刘",
    "zhuang": "状壮撞装",
    "jin": "进近紧今",
    "du": "度渡读",
    "men": "门们闷",
    "zhen": "诊真珍阵",
    "yi": "医衣依一",
    "shou": "售收手受",
    "hui": "汇会回惠",
    "wen": "温问文稳",
    "ban": "班办半",
    "hang": "航杭",
    "fei": "飞非费",
    "tai": "态太泰台抬",
    "tou": "投头透",
}
_CANONICAL: dict[str, str] = {char: chars[0] for chars in _HOMOPHONES.values() for char in chars}
_PINYIN = re.compile(
    rf"(?<=[{_CJK_CHAR}])({'|'.join(sorted(_HOMOPHONES, key=len, reverse=True))})"
    rf"|({'|'.join(sorted(_HOMOPHONES, key=len, reverse=True))})(?=[{_CJK_CHAR}])"
)


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
_CLAUSE_BREAK = re.compile(r"[,，。.!！?？;；:：、\n]|\bbut\b|\bjust\b|但是|只是|就是|只要")
_ZH_NEGATOR = re.compile(r"不需要|不用|不要|不必|无需|不想|不是|先别|别|不")
_NOT_NEGATORS = re.compile(r"[分区特识类个差告级性派辨鉴]别|别[人的处]|不[错少过久断仅同管]")
"""Words that hold 别 or 不 and deny nothing: "分别啥情况" asks about each order, "不过"
is "but"; each is blanked (same length) before the negators are looked for."""
_EN_NEGATORS = frozenset({"dont", "no", "not", "never", "without", "stop"})
ZH_SCOPE, EN_SCOPE = 3, 3
"""How far (characters, words) a negator reaches forward to the cue it negates."""


def negated(text: str, start: int) -> bool:
    """Say whether the cue at ``start`` of normalized ``text`` is negated in its clause.

    Chinese: a negator ending at most ``ZH_SCOPE`` characters before the cue ("不要退款",
    "不用查天气", "我不取消"); an A不A question ("要不要带伞", "会不会下雨") is not a
    negation. "没" is deliberately not a negator: "还没到" is a complaint, not a denial.
    English: a negator at most ``EN_SCOPE`` words before the cue ("don't want a refund", "no
    refund"); "hasn't arrived" is a complaint, so contractions other than don't are not
    negators. A clause break ends the scope: "不用查了，直接退款".
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
        if match.group().startswith("不") and at > 0 and clause[at - 1] == after:
            continue
        return True
    words = re.findall(r"[a-z]+", clause)
    return any(word in _EN_NEGATORS for word in words[-(EN_SCOPE + 1) :])


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
