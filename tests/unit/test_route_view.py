"""Routers read only ``RouteView``, which is what LangGraph gives them."""

from __future__ import annotations

import ast
import inspect
import typing

import nodes.routing
from state import AgentState, RouteView


def _keys_read(source: str) -> set[str]:
    """Return the keys a module reads as ``state.get("k")`` or ``state["k"]``."""
    keys: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "state"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            keys.add(str(node.args[0].value))
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id == "state"
            and isinstance(node.slice, ast.Constant)
        ):
            keys.add(str(node.slice.value))
    return keys


def test_the_routers_read_nothing_outside_route_view():
    # a key outside RouteView would always read as missing under LangGraph
    read = _keys_read(inspect.getsource(nodes.routing))
    assert read, "the walk found no reads at all"
    assert read <= set(RouteView.__annotations__), read - set(RouteView.__annotations__)


def test_route_view_has_agent_states_keys_and_types():
    view = typing.get_type_hints(RouteView)
    full = typing.get_type_hints(AgentState)  # reducers stripped: include_extras=False
    assert set(view) <= set(full)
    assert {key: view[key] for key in view} == {key: full[key] for key in view}
