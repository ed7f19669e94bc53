"""The masking pre-check is a superset: skipping the detectors never hides a finding."""

from __future__ import annotations

import re
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from tools.pii import (
    _CHANGED_BY_NFKC,
    _STEM_SPOILER,
    _STEMS,
    ZERO_WIDTH,
    _find_all,
    find_pii,
)

PIECES = [
    *"0123456789Xx -\t",
    # NFKC turns these into digits or spaces
    "１",
    "２",
    "９",
    "０",
    "－",
    "\u3000",
    "\u00a0",
    "①",
    "²",
    *sorted(ZERO_WIDTH),
    "pin",
    "PIN",
    "ｐａｓｓ",
    "pa",
    "ss",
    "word",
    "code",
    "密码",
    "验证码",
    "口令",
    "是",
    "：",
    "订单",
    "OD-",
    "，",
    "我的",
    "a",
    "z",
    ".",
    "_",
    "/",
    "*",
    "+86",
    "110101199001011237",
    "4111111111111111",
    "13800138000",
    "2026-11-30T23:47:52",
]


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40))
def test_precheck_never_hides_a_finding(parts: list[str]) -> None:
    text = "".join(parts)
    for kinds in (None, frozenset(("id_card", "bank_card", "secret"))):
        wanted = kinds or frozenset(("id_card", "bank_card", "phone", "secret"))
        assert find_pii(text, kinds) == _find_all(text, wanted)


def test_common_strings_skip_the_detectors() -> None:
    assert find_pii("OD-20240618-001") == []
    assert find_pii("2026-11-30T23:47:52.123Z") == []
    assert find_pii("call_3f2a12349be0c1d2") == []
    # still found: each kind, in odd spellings
    assert find_pii("身份证１１０１０１１９９００１０１１２３７")[0].kind == "id_card"
    assert find_pii("卡号 4111 1111 1111 1111")[0].kind == "bank_card"
    assert find_pii("call me on 138-0013-8000")[0].kind == "phone"
    assert find_pii("ｐａｓｓword: 123456")[0].kind == "secret"
    assert find_pii("①②③④⑤⑥ 是密码")[0].kind == "secret"  # no ASCII digit at all


def test_stem_spoiler_covers_every_character_that_folds_into_a_stem() -> None:
    stem_chars = set("".join(_STEMS).lower())
    missed = []
    for low, high in re.findall(r"(.)(?:-(.))?", _CHANGED_BY_NFKC):
        for code in range(ord(low), ord(high or low) + 1):
            char = chr(code)
            folded = unicodedata.normalize("NFKC", char).lower()
            if any(c in stem_chars for c in folded) and not _STEM_SPOILER.search(char):
                missed.append(f"U+{code:04X}")
    missed += [f"U+{ord(c):04X}" for c in ZERO_WIDTH if not _STEM_SPOILER.search(c)]
    assert missed == []
