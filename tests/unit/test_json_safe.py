"""``json_safe``'s fast paths for exact types give what its general walk gives."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tools.limits import (
    MAX_DEPTH,
    MAX_ITEMS,
    MAX_STRING_CHARS,
    json_safe,
)


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


def _same(left: Any, right: Any) -> bool:
    return json.dumps(left, sort_keys=True) == json.dumps(right, sort_keys=True)


@settings(max_examples=400, deadline=None)
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
