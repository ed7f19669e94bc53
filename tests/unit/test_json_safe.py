"""``json_safe``'s fast paths for exact types give what the general walk gives."""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tools.limits import (
    MAX_DEPTH,
    MAX_ITEMS,
    MAX_STRING_CHARS,
    _short_repr,
    clean_string,
    json_safe,
)


def _reference(value: Any, depth: int = 0) -> Any:
    """The walk before the fast paths: one isinstance chain for every value."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if value.bit_length() <= 63 else f"[int of {value.bit_length()} bits]"
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return clean_string(value)
    if depth >= MAX_DEPTH:
        return f"[cut: nested deeper than {MAX_DEPTH}]"
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for index, (key, item) in enumerate(value.items()):
            if index >= MAX_ITEMS:
                out["$cut_items"] = len(value) - MAX_ITEMS
                break
            name = clean_string(key if isinstance(key, str) else _short_repr(key), 256)
            out[name] = _reference(item, depth + 1)
        return out
    if isinstance(value, list | tuple):
        kept = [_reference(item, depth + 1) for item in list(value)[:MAX_ITEMS]]
        if len(value) > MAX_ITEMS:
            kept.append(f"[cut: {len(value) - MAX_ITEMS} more items]")
        return kept
    return _short_repr(value)


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
    assert _same(json_safe(value), _reference(value))


def test_deep_and_wide_values_are_cut_the_same_way():
    deep: Any = "leaf"
    for _ in range(MAX_DEPTH + 3):
        deep = {"k": deep}
    wide = {f"k{i}": i for i in range(MAX_ITEMS + 5)}
    for value in (deep, wide, [wide], {"x": [deep]}):
        assert _same(json_safe(value), _reference(value))
    assert "$cut_items" in json_safe(wide)
