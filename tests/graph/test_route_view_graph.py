"""Every conditional edge of the compiled graph reads ``RouteView``, not the whole state."""

from __future__ import annotations

import pytest

from state import RouteView

pytestmark = pytest.mark.integration


def test_every_router_reads_the_route_view(app):
    # a router bound with functools.partial would hide its annotation from LangGraph, which
    # would then re-run the message and protocol reducers on every edge
    branches = [spec for specs in app.builder.branches.values() for spec in specs.values()]
    assert len(branches) >= 6
    assert all(spec.input_schema is RouteView for spec in branches), [
        (spec.path, spec.input_schema) for spec in branches if spec.input_schema is not RouteView
    ]
