"""``json_safe``'s fast paths for exact types give what its general walk gives."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from config.limits import (
    MAX_DEPTH,
    MAX_ITEMS,
    MAX_STRING_CHARS,
    dumps_compact,
    json_bytes,
    json_safe,
)
from tests.properties import examples


class _Str(str):
    """A str the exact-type fast path does not take: it goes the general way."""


class _Dict(dict[Any, Any]):
    """Likewise for dicts."""


class _Float(float):
    """Likewise for floats."""


def _general(value: Any) -> Any:
    """Return ``value`` with every str, dict and float a subclass, so no fast path applies."""
    if type(value) is str:
        return _Str(value)
    if type(value) is float:
        return _Float(value)
    if type(value) is dict:
        return _Dict({_general(key): _general(item) for key, item in value.items()})
    if type(value) is list:
        return [_general(item) for item in value]
    return value


TEXT = st.one_of(
    st.text(max_size=20),
    st.text(alphabet="ab\ud800é", max_size=12),  # lone surrogates and non-ASCII
    st.just("x" * (MAX_STRING_CHARS + 3)),
    st.just("键" * 300),  # a key longer than 256 characters
)
LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    TEXT,
)
VALUE = st.recursive(
    LEAF,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.one_of(TEXT, st.integers(0, 3)), inner, max_size=4)
    ),
    max_leaves=25,
)


def _nest(inner: Any) -> Any:
    return st.lists(inner, max_size=4) | st.dictionaries(
        st.one_of(TEXT, st.integers(0, 3)), inner, max_size=4
    )


def _same(left: Any, right: Any) -> bool:
    return json.dumps(left, sort_keys=True) == json.dumps(right, sort_keys=True)


@settings(max_examples=examples(400), deadline=None)
@given(VALUE)
def test_json_safe_gives_what_the_general_walk_gives(value):
    assert _same(json_safe(value), json_safe(_general(value)))


def test_deep_and_wide_values_are_cut_the_same_way():
    deep: Any = "leaf"
    for _ in range(MAX_DEPTH + 3):
        deep = {"k": deep}
    wide = {f"k{i}": i for i in range(MAX_ITEMS + 5)}
    for value in (deep, wide, [wide], {"x": [deep]}):
        assert _same(json_safe(value), json_safe(_general(value)))
    assert "$cut_items" in json_safe(wide)


def _json_reference(value: Any) -> bytes:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return text.encode("utf-8", errors="replace")


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    if isinstance(value, list):
        return all(_finite(item) for item in value)
    if isinstance(value, dict):
        return all(_finite(item) for item in value.values())
    return True


@settings(max_examples=examples(400), deadline=None)
@given(VALUE)
def test_dumps_compact_reads_back_as_json_dumps_does(value):
    # same text but for float exponents (1e-5 for 1e-05) and NaN written as null
    fast, reference = dumps_compact(value), _json_reference(value)
    if _finite(value):
        assert json.loads(fast) == json.loads(reference)
    else:
        json.loads(fast)  # still JSON


@given(st.recursive(st.none() | st.booleans() | st.integers(-(2**60), 2**60) | TEXT, _nest))
@settings(max_examples=examples(300), deadline=None)
def test_without_floats_dumps_compact_writes_json_dumps_own_bytes(value):
    assert dumps_compact(value) == _json_reference(value)
    assert json_bytes(value) == len(_json_reference(value))


def test_what_orjson_refuses_takes_json_path():
    huge = {"n": 2**80, "s": "a\ud800b", "when": datetime(2024, 6, 18, 9, 30)}
    assert dumps_compact(huge) == _json_reference(huge)
    assert json.loads(dumps_compact(huge))["when"] == "2024-06-18 09:30:00"  # str(), as json
