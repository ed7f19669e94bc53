"""Every shipped scenario honours the contract the generic nodes rely on."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from contract.scenario import LANGUAGES, Scenario, ScenarioSet
from nodes.clarify import clarifying_question
from nodes.reply import describe_result
from nodes.services import Services
from nodes.slot_filling import vault_sensitive
from nodes.wording import Voice
from scenarios import SCENARIOS
from tools.executor.failures import said

CATALOG = ScenarioSet(SCENARIOS)
RECOGNIZER = Services(scenarios=CATALOG).recognizer
PERMISSIONS = Services(scenarios=SCENARIOS).permissions
ROOT = Path(__file__).resolve().parents[2]


def _all_cards(scenario: Scenario):
    return [*scenario.cards, *(c for cards in scenario.agent_cards.values() for c in cards)]


@pytest.fixture(params=SCENARIOS, ids=[s.name for s in SCENARIOS])
def scenario(request) -> Scenario:
    return request.param


def test_names_are_the_documented_ones():
    assert [s.name for s in SCENARIOS] == [
        "delivery",
        "weather",
        "flights",
        "transfer",
        "appointment",
        "sales",
        "jobs",
    ]


def test_every_intent_has_examples_and_labels_in_both_languages(scenario):
    for task in scenario.tasks:
        examples = scenario.examples.get(task.intent) or {}
        for language in LANGUAGES:
            assert len(examples.get(language, ())) >= 20, f"{task.intent}: few {language} examples"
        label = scenario.wording.get(f"intent.{task.intent}") or {}
        for language in LANGUAGES:
            assert label.get(language), f"{task.intent} has no {language} label"


def test_every_required_slot_can_be_asked_for(scenario):
    for task in scenario.tasks:
        for slot in task.required_slots:
            keys = [k for k in (f"ask.{slot}", f"slot.{slot}") if k in scenario.wording]
            assert keys, f"{task.intent}: nothing asks for {slot!r}"
            for key in keys:
                assert all(scenario.wording[key].get(lang) for lang in LANGUAGES), key


def test_every_task_tool_is_registered_and_granted(scenario):
    names = {card.name for card in _all_cards(scenario)}
    for task in scenario.tasks:
        assert task.tool in names, f"{task.intent}: tool {task.tool!r} is not declared"
        for _slot, extra in task.on_request:
            assert extra in names
        if task.agent is not None:
            assert task.agent in scenario.agents
    for card in _all_cards(scenario):
        roles = [role for role in PERMISSIONS.roles() if role != "admin"]
        allowed = any(PERMISSIONS.allows(role, card.permission) for role in roles)
        assert allowed, f"no role may use {card.name} ({card.permission})"


def test_every_tool_has_a_describer_and_a_failure_it_does_not_know_is_said_generically(
    scenario,
):
    """A describer words its own results; a failure it does not know is never "not found"."""
    for card in _all_cards(scenario):
        describe = scenario.describe.get(card.name)
        assert describe is not None, f"{card.name} has no describer"
        for error_type in (None, "user_fixable", "no_such_error_type"):
            failure = {"tool": card.name, "status": "failed", "error_type": error_type, "data": {}}
            state = {"intent": scenario.tasks[0].intent, "slots": {}, "tool_results": [failure]}
            sentences = {
                lang: describe_result(failure, state, Voice(CATALOG, lang), CATALOG)
                for lang in LANGUAGES
            }
            assert all(sentences.values()), card.name
            assert sentences["zh"] != sentences["en"], card.name
            for lang, text in sentences.items():
                assert "not_found" not in said(text, lang), (card.name, error_type, text)


def test_sensitive_slots_are_required_and_vaulted(scenario, db):
    services = Services(scenarios=SCENARIOS, database_factory=lambda: db)

    for task in scenario.tasks:
        assert set(task.sensitive_slots) <= set(task.required_slots)
        for slot in task.sensitive_slots:
            secret = "110101199001011237" if slot.endswith("_id") else "123456"
            out = vault_sensitive(task, {slot: secret}, services, "u_10001")
            assert secret not in repr(out)
            assert out[slot].startswith("pii:") and "*" in out[f"{slot}_masked"]


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_what_do_you_mean_question_never_lists_every_task(language):
    question = clarifying_question(
        {"intent": "UNKNOWN", "decision": "clarify", "language": language}, CATALOG
    )
    voice = Voice(CATALOG, language)
    assert not any(voice.label(intent) in question for intent in CATALOG.intents)
    assert question == voice.say("ask_intent_open")


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_question_offers_a_customer_the_nearest_tasks_a_customer_may_do(language):
    offered = CATALOG.intents_for(lambda permission: PERMISSIONS.allows("customer", permission))
    nearest = ["EXPORT_SALES", "TRANSFER_MONEY", "QUERY_BALANCE", "QUERY_WEATHER", "BOOK_FLIGHT"]
    question = clarifying_question(
        {
            "intent": "UNKNOWN",
            "decision": "clarify",
            "language": language,
            "intent_candidates": nearest,
        },
        CATALOG,
        offered=offered,
    )
    voice = Voice(CATALOG, language)
    assert "TRANSFER_MONEY" in offered and "EXPORT_SALES" not in offered
    asked = [intent for intent in CATALOG.intents if voice.label(intent) in question]
    assert sorted(asked) == sorted(["TRANSFER_MONEY", "QUERY_BALANCE", "QUERY_WEATHER"])
    positions = [question.index(voice.label(i)) for i in nearest[1:4]]
    assert positions == sorted(positions)  # best first


def test_every_request_beyond_a_scenario_is_worded_in_both_languages(scenario):
    for request in scenario.beyond:
        sentence = scenario.wording.get(f"beyond.{request.name}") or {}
        assert all(sentence.get(lang) for lang in LANGUAGES), request.name


SERVED = (
    "OD-20240618-001 到哪了",
    "我要退款 OD-20240618-002",
    "帮我取消订单 OD-20240618-001",
    "订一张明天北京到上海的机票",
    "book a flight from Beijing to Shanghai tomorrow",
    "给 ACC-2002 转 50 元",
    "transfer 50 yuan to ACC-2002",
    "帮我预约6月20号的皮肤科",
    "取消内科的预约",
    "北京明天天气怎么样",
    "上个月销售额多少",
    "帮我催一下单",
    "我的订单送到哪个地址了",
    "这张机票多少钱",
)
"""Requests a task serves: none of them is beyond any scenario."""


@pytest.mark.parametrize("text", SERVED)
def test_a_served_request_is_never_read_as_beyond_us(text):
    reading = RECOGNIZER.read([text])[0]
    assert not reading.best.startswith("beyond."), (reading.best, reading.confidence)


def test_every_request_beyond_us_has_examples_and_a_sentence(scenario):
    for request in scenario.beyond:
        examples = scenario.examples.get(f"beyond.{request.name}") or {}
        assert all(len(examples.get(language, ())) >= 10 for language in LANGUAGES)
        assert scenario.wording.get(f"beyond.{request.name}"), request.name


GENERIC_DIRS = ("nodes", "tools")
GENERIC_KEYS = {"question"}
"""Keys the generic nodes own that a scenario's slot happens to share: the confirmation
payload's human-readable ``question`` (the sales scenario's slot is also a question)."""


def _scenario_names() -> set[str]:
    names: set[str] = set()
    for scenario in SCENARIOS:
        for task in scenario.tasks:
            names.add(task.intent)
            names.update(task.required_slots)
            names.update(task.sensitive_slots)
            names.update(slot for slot, _ in task.on_request)
        names.update(card.name for card in _all_cards(scenario))
        names.update(scenario.agents)
    return names - GENERIC_KEYS


def test_generic_modules_name_no_intent_slot_or_tool():
    names = _scenario_names()
    quoted = re.compile(r"""["']([A-Za-z_][A-Za-z0-9_]*)["']""")
    found = []
    for folder in GENERIC_DIRS:
        for path in sorted((ROOT / folder).glob("*.py")):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                for word in quoted.findall(line):
                    if word in names:
                        found.append(f"{path.relative_to(ROOT)}:{number}: {word}")
    assert not found, "\n".join(found)
