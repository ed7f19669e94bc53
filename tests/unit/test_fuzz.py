"""Property tests: no input shape crashes the protocol, the argument parser or the executor,
and nothing unchecked ever reaches a handler."""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from state import MAX_PROTOCOL_BYTES, append_protocol
from tests.helpers import default_registry
from tests.properties import examples
from tools.executor.parsing import ArgumentParseError, argument_problem, parse_arguments
from tools.executor.pipeline import ActionExecutor, ExecutorSettings, PreparedCall
from tools.registry.cards import ToolRegistry
from tools.registry.context import ToolContext

FUZZ = settings(
    max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
CTX = ToolContext(user_id="u_10001", user_role="admin", session_id="s", task_id="t")

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=50)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=20,
)
odd_values = (
    json_values
    | st.binary(max_size=20)
    | st.sets(st.integers(), max_size=3)
    | st.just(object())
    | st.just(10**400)
    | st.text(alphabet=st.characters(), min_size=0, max_size=30)
    | st.just("\ud800")
    | st.just("x" * 9000)
)
SECRET_PHRASES = (
    "Passcode is 123456",
    "Pin: 123456",
    "身份证 110101 1990 0101 1237",
    "密码１２３４５６",
)
"""A PIN or an ID number said as one: what the protocol must never keep."""
secretish = st.sampled_from(SECRET_PHRASES)


def said_bare(fields: dict[str, Any], digits: str) -> bool:
    """Tell whether ``digits`` occur in ``fields`` outside the secret phrases.

    A bare ``123456`` (a dict key, a count) says nothing secret and is kept; hypothesis draws
    this module's own literals as text, so it does generate one.
    """
    raw = json.dumps(fields, default=repr, ensure_ascii=False)
    for phrase in SECRET_PHRASES:
        raw = raw.replace(phrase, "")
    return digits in raw.replace(" ", "")


@FUZZ
@given(
    role=st.sampled_from(["user", "assistant", "tool", "system", "agent"]) | st.text(max_size=5),
    content=odd_values | secretish,
    extra=st.dictionaries(st.text(min_size=1, max_size=8), odd_values, max_size=4),
    calls=st.lists(
        st.fixed_dictionaries(
            {
                "name": st.text(max_size=20),
                "parameters": st.dictionaries(st.text(max_size=5), odd_values, max_size=3),
            }
        ),
        max_size=3,
    ),
)
@example(role="user", content={"123456": None}, extra={}, calls=[])  # a bare number: kept
@example(role="user", content={"Pin: 123456": None}, extra={}, calls=[])  # a key said as one
def test_protocol_messages_never_crash_and_never_exceed_the_limit(role, content, extra, calls):
    fields = {"role": role, "content": content, "tool_calls": calls, **extra}
    try:
        stored = append_protocol([], fields)
    except ValidationError:
        return  # a field of the wrong type is a validation error, never anything else
    text = json.dumps(stored[0], ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    assert len(text.encode()) <= MAX_PROTOCOL_BYTES + 16
    for digits in ("123456", "19900101"):
        if not said_bare(fields, digits):
            assert digits not in text.replace(" ", "")


@FUZZ
@given(raw=st.text(max_size=200) | st.binary(max_size=50) | odd_values)
def test_argument_parsing_returns_a_dict_or_a_parse_error(raw):
    try:
        value, repairs = parse_arguments(raw)
    except ArgumentParseError:
        return
    assert isinstance(value, dict) and isinstance(repairs, list)


@FUZZ
@given(depth=st.integers(min_value=1, max_value=3000), kind=st.sampled_from("[{"))
def test_deeply_nested_argument_text_is_refused_not_raised(depth, kind):
    close = "]" if kind == "[" else "}"
    inner = '{"a":' * depth + "1" + "}" * depth if kind == "{" else kind * depth + close * depth
    raw = '{"x": ' + inner + "}"
    try:
        value, _ = parse_arguments(raw)
    except ArgumentParseError:
        return
    assert argument_problem(value) is None or depth > 30


class _Recorder:
    """A handler that records what reached it; what reaches it must be checked data."""

    def __init__(self) -> None:
        self.calls: list[Any] = []

    def __call__(self, args: Any, _ctx: ToolContext) -> dict[str, Any]:
        self.calls.append(args)
        return {"ok": True}


def _recording_registry() -> tuple[ToolRegistry, dict[str, _Recorder], dict[str, type[BaseModel]]]:
    source = default_registry()
    registry = ToolRegistry()
    recorders: dict[str, _Recorder] = {}
    models: dict[str, type[BaseModel]] = {}
    for name in source.names():
        card = source.get(name)
        assert card is not None
        recorder = _Recorder()
        recorders[name], models[name] = recorder, card.parameters
        registry.register(
            dataclasses.replace(
                card,
                handler=recorder,
                owner_of=None,
                requires=(),
                risk="low",
                status_lookup=None,
                summarize=None,
                rate_limit=None,
                cache_ttl_s=None,
            )
        )
    return registry, recorders, models


REGISTRY, RECORDERS, MODELS = _recording_registry()
EXECUTOR = ActionExecutor(REGISTRY, settings=ExecutorSettings(max_attempts=1))


def _no_unchecked_values(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, BaseModel):
        return all(_no_unchecked_values(v) for v in value.__dict__.values())
    if isinstance(value, dict):
        return all(_no_unchecked_values(v) for v in value.values())
    if isinstance(value, list | tuple):
        return all(_no_unchecked_values(v) for v in value)
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
    return not isinstance(value, bytes | set)


def _call_strategy(name: str) -> st.SearchStrategy[dict[str, Any]]:
    fields = list(MODELS[name].model_fields)
    keys = st.sampled_from(fields) | st.text(max_size=6) if fields else st.text(max_size=6)
    arguments = st.dictionaries(
        keys,
        odd_values | secretish,
        max_size=len(fields) + 2,
    )
    as_text = arguments.map(lambda a: json.dumps(a, default=repr))
    return st.fixed_dictionaries(
        {"name": st.just(name), "parameters": arguments | as_text | odd_values}
    )


@pytest.mark.parametrize("name", sorted(MODELS))
@FUZZ
@given(data=st.data())
def test_every_tool_model_lets_only_checked_values_through(name, data):
    call = data.draw(_call_strategy(name))
    before = len(RECORDERS[name].calls)
    result = EXECUTOR.execute(call, CTX)
    assert result["status"] in ("success", "failed", "rejected")
    json.dumps(result, allow_nan=False)
    reached = RECORDERS[name].calls[before:]
    assert len(reached) <= 1  # a repeated call is answered from its record, not run again
    if result["status"] == "success" and not result["duplicated"] and result["attempts"]:
        assert len(reached) == 1
    for args in reached:
        assert isinstance(args, MODELS[name])
        assert _no_unchecked_values(args)
        MODELS[name].model_validate(args.model_dump())  # still valid as checked


@FUZZ
@given(
    call=odd_values
    | st.lists(odd_values, max_size=3)
    | st.dictionaries(st.text(max_size=8), odd_values)
)
def test_prepare_never_raises_for_any_call(call):
    prepared = EXECUTOR.prepare(call, CTX)
    assert isinstance(prepared, PreparedCall | dict)
    if isinstance(prepared, dict):
        assert prepared["status"] != "success" or prepared.get("duplicated")
