"""The one failure vocabulary: each class is told one way, and no two read alike."""

from __future__ import annotations

import dataclasses
from datetime import date

import pytest

from contract.scenario import LANGUAGES, ScenarioSet
from nodes.reply import describe_result
from nodes.wording import Voice
from scenarios import SCENARIOS
from tests.helpers import default_registry
from tools.executor.client_view import client_view
from tools.executor.errors import CompensatedError, ConflictError
from tools.executor.failures import MEANINGS, classify, effect_of, reference, said, sentence, short
from tools.executor.pipeline import ActionExecutor, ExecutorSettings, envelope
from tools.registry.context import ToolContext
from tools.registry.lifecycle import ToolLifecycle

CATALOG = ScenarioSet(SCENARIOS)
CTX = ToolContext(user_id="u_10001", user_role="customer", session_id="s", task_id="t")
ORDER = {"name": "query_order_status", "parameters": {"order_id": "OD-20240618-001"}}


def _result(**fields: object) -> dict:
    return envelope(tool="t_x", request_id="req_0123", **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("outcome", sorted(MEANINGS))
def test_each_class_names_itself_and_no_other(outcome, language):
    long = sentence(outcome, _result(status="failed"), language=language, task="TASK")
    assert said(long, language) == {outcome}, long
    assert said(short(outcome, language), language) == {outcome}


def test_the_two_languages_say_every_class_differently():
    for outcome, meaning in MEANINGS.items():
        assert meaning.text["zh"] != meaning.text["en"], outcome
        assert meaning.short["zh"] != meaning.short["en"], outcome


@pytest.mark.parametrize(
    ("fields", "outcome"),
    [
        ({"status": "failed", "error_type": "not_found"}, "not_found"),
        ({"status": "failed", "error_type": "validation"}, "invalid"),
        ({"status": "rejected", "error_type": "permission_denied"}, "not_permitted"),
        ({"status": "failed", "error_type": "user_fixable"}, "refused"),
        ({"status": "failed", "error_type": "disabled", "data": {"state": "retired"}}, "disabled"),
        (
            {"status": "failed", "error_type": "disabled", "data": {"sunset": "2024-06-01"}},
            "sunset",
        ),
        ({"status": "failed", "error_type": "system"}, "unavailable"),
        ({"status": "rejected", "error_type": "circuit_open"}, "unavailable"),
        ({"status": "timeout", "error_type": "system"}, "timeout"),
        ({"status": "unknown", "error_type": "system"}, "unknown"),
        ({"status": "rejected", "error_type": "rate_limited"}, "rate_limited"),
        ({"status": "failed", "error_type": "conflict"}, "conflict"),
        ({"status": "failed", "error_type": "compensated"}, "compensated"),
        ({"status": "success", "data": {"status": "pending_review"}}, "pending_review"),
        ({"status": "rejected"}, "declined"),
        ({"status": "pending"}, "awaiting"),
        ({"status": "failed", "error_type": "something_new"}, "unavailable"),
        ({"status": "success", "data": {"status": "completed"}}, None),
    ],
)
def test_every_envelope_has_one_class(fields, outcome):
    assert classify(_result(**fields)) == outcome


def test_only_a_class_that_knows_nothing_ran_says_so():
    assert effect_of(_result(status="unknown", error_type="system")) == "unknown"
    assert effect_of(_result(status="failed", error_type="compensated")) == "undone"
    assert effect_of(_result(status="success", data={"status": "pending_review"})) == "held"
    assert effect_of(_result(status="success")) == "happened"
    for outcome, meaning in MEANINGS.items():
        for language in LANGUAGES:
            nothing = ("没有执行任何操作", "nothing was done")
            text = meaning.text[language]
            if meaning.effect != "none":
                assert not any(phrase in text for phrase in nothing), (outcome, text)


def test_the_reference_is_the_record_created_not_the_one_named():
    refund = _result(
        status="success", data={"order_id": "OD-1", "refund_id": "RF-9", "status": "pending_review"}
    )
    assert reference(refund, known=["OD-1"]) == "RF-9"
    assert reference(_result(status="unknown", error_type="system")) == "req_0123"


def test_a_switched_off_tool_is_not_a_missing_order(db):
    registry = default_registry()
    registry.disable("query_order_status")
    executor = ActionExecutor(registry, settings=ExecutorSettings(max_attempts=1))
    result = executor.execute(ORDER, ToolContext(**{**CTX.__dict__, "resources": db}))
    assert classify(result) == "disabled"
    seen = client_view(result)
    assert seen["cause"] == "disabled" and said(seen["message"], "zh") == {"disabled"}
    state = {"intent": "CHECK_ORDER_STATUS", "slots": {"order_id": "OD-20240618-001"}}
    for language in LANGUAGES:
        text = describe_result(result, state, Voice(CATALOG, language), CATALOG)  # type: ignore[arg-type]
        assert said(text, language) == {"disabled"}, text


def test_past_its_sunset_a_tool_says_since_when(db):
    registry = default_registry()
    registry.lifecycle = ToolLifecycle(today=lambda: date(2024, 6, 18))
    registry.deprecate("urge_delivery", sunset=date(2024, 6, 1), reason="replaced")
    executor = ActionExecutor(registry, settings=ExecutorSettings(max_attempts=1))
    call = {"name": "urge_delivery", "parameters": {"order_id": "OD-20240618-001"}}
    result = executor.execute(call, CTX)
    assert classify(result) == "sunset"
    text = describe_result(result, {"intent": "URGE_DELIVERY"}, Voice(CATALOG, "zh"), CATALOG)  # type: ignore[arg-type]
    assert "2024-06-01" in text and said(text, "zh") == {"sunset"}


@pytest.mark.parametrize(
    ("error", "outcome"), [(ConflictError, "conflict"), (CompensatedError, "compensated")]
)
def test_a_handler_raising_a_new_class_is_told_that_class(error, outcome, db):
    registry = default_registry()
    card = registry.get("urge_delivery")
    assert card is not None

    def raises(args, ctx):
        raise error("injected")

    registry.register(dataclasses.replace(card, handler=raises), replace_existing=True)
    executor = ActionExecutor(registry, settings=ExecutorSettings(max_attempts=1))
    call = {"name": "urge_delivery", "parameters": {"order_id": "OD-20240618-001"}}
    result = executor.execute(call, ToolContext(**{**CTX.__dict__, "resources": db}))
    assert classify(result) == outcome
    # a compensation is the backend's own failure: the breaker counts it; a conflict is not
    failures = executor.breakers.get("urge_delivery").failures
    assert failures == (1 if outcome == "compensated" else 0)


def test_an_idempotency_key_reused_for_other_arguments_is_a_conflict(db):
    executor = ActionExecutor(default_registry(), settings=ExecutorSettings(max_attempts=1))
    ctx = ToolContext(**{**CTX.__dict__, "resources": db})
    first = {"name": "urge_delivery", "parameters": {"order_id": "OD-20240618-001"}}
    executor.execute({**first, "idempotency_key": "k1"}, ctx)
    other = {"name": "urge_delivery", "parameters": {"order_id": "202506001"}}
    assert classify(executor.execute({**other, "idempotency_key": "k1"}, ctx)) == "conflict"
