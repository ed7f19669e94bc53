"""The masking pre-check is a superset: skipping the detectors never hides a finding."""

from __future__ import annotations

import re
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from security.pii import _find_all, could_hold, find_pii
from security.pii_bytes import (
    _DIGIT_IMAGE,
    _NOT_SPOILER_LEADS,
    _SPOILER_UTF8,
    _STEM_PARTS,
    could_hold_utf8,
)
from security.pii_patterns import (
    _ALL_KINDS,
    _CHANGED_BY_NFKC,
    _STEM_SPOILER,
    _STEMS,
    _SUSPECT_CLASS,
    ZERO_WIDTH,
)
from tests.properties import examples

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


@settings(max_examples=examples(1500), deadline=None)
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


FRAMING = st.binary(max_size=6)


@settings(max_examples=examples(1500), deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40), FRAMING, FRAMING)
def test_the_bytes_precheck_holds_every_string_the_text_precheck_holds(parts, before, after):
    # a string packed anywhere, with any framing around it, is still seen
    text = "".join(parts)
    data = before + text.encode("utf-8", "surrogatepass") + after
    for kinds in (frozenset(("id_card", "bank_card", "secret")), _ALL_KINDS):
        if could_hold(text, kinds):
            assert could_hold_utf8(data, kinds), (text, kinds)


def test_the_bytes_precheck_knows_every_digit_like_and_spoiler_character() -> None:
    suspect = re.compile(f"[{_SUSPECT_CLASS}]")
    for code in range(0x80, 0x110000):
        if 0xD800 <= code <= 0xDFFF:
            continue
        char = chr(code)
        encoded = char.encode()
        if suspect.match(char):
            assert _DIGIT_IMAGE[encoded[0]] == ord("0"), f"U+{code:04X}"
        if _STEM_SPOILER.match(char) or char == "İ":
            assert _SPOILER_UTF8.search(encoded), f"U+{code:04X}"
            assert encoded[0] not in _NOT_SPOILER_LEADS, f"U+{code:04X}"
    # every stem holds one of the parts looked for
    assert all(any(part.decode() in stem for part in _STEM_PARTS) for stem in _STEMS)


def test_clean_bytes_are_proved_clean_and_findings_are_not() -> None:
    kinds = frozenset(("id_card", "bank_card", "secret"))
    assert not could_hold_utf8("OD-20240618-001 到哪了，谢谢。".encode(), kinds)
    assert not could_hold_utf8(b"\x92\xa4role\xa5agent\xa7content\xa2ok", kinds)
    dirty = (
        "110101199001011237",
        "１１０１０１１９９００１０１１２３７",
        "ｐａｓｓ 123",
        "p\u200bin 1",
    )
    for text in dirty:
        assert could_hold_utf8(text.encode(), kinds), text
