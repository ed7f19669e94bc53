"""Tool schemas shown to a model are spelled so llama-server can build a grammar from them."""

from __future__ import annotations

import re

from planning.planner import portable_pattern, portable_schema
from tests.helpers import default_registry


def test_shorthand_classes_are_spelled_out_and_match_the_same_strings():
    original = r"^(OD-\d{8}-\d{3}|\d{9,12})$"
    portable = portable_pattern(original)
    assert portable == "^(OD-[0-9]{8}-[0-9]{3}|[0-9]{9,12})$"
    for text in ("OD-20240618-001", "202506001", "OD-2024061-001", "12345678"):
        assert bool(re.fullmatch(original, text)) == bool(re.fullmatch(portable, text))
    assert portable_pattern(r"^[\d-]+\.\w$") == r"^[0-9-]+\.[A-Za-z0-9_]$"


def test_every_card_view_keeps_its_shape_and_loses_only_the_escapes():
    registry = default_registry()
    for name in registry.names():
        card = registry.get(name)
        view = card.model_view()
        portable = portable_schema(view)
        assert "\\d" not in str(portable)
        assert portable["function"]["name"] == view["function"]["name"]
        assert portable["function"]["parameters"].keys() == view["function"]["parameters"].keys()
