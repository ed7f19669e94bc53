"""The full attack corpus runs only when asked for (``-m attack``); a slice runs always."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip ``attack``-marked tests unless the marker expression selects them."""
    if "attack" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="full attack corpus: run with -m attack (make attack)")
    for item in items:
        if item.get_closest_marker("attack") is not None:
            item.add_marker(skip)
