"""Packs from functions and OpenAPI: cards, safe defaults, typed and grounded values, budget."""

from __future__ import annotations

import sys
import types
from datetime import date
from typing import Any, Literal

import pytest

from contract.scenario import ScenarioSet
from nodes.services import Services
from packs import ToolAnnotation, card_from_function, pack_from_functions, pack_from_module
from packs.functions import parameters_model, tool, writes_by_name
from packs.grounding import choices, grounded, typed
from packs.openapi import pack_from_openapi
from packs.understanding import PackCommandGenerator
from tools.executor.errors import UserFixableError
from tools.registry.context import ToolContext
from understanding.reader import RuleCommandGenerator
from understanding.view import DialogueView, TaskView


def exchange_items(order_id: str, item_ids: list[str], note: str = "") -> dict[str, Any]:
    """Exchange items of a delivered order.

    Args:
        order_id: The order id, such as '#W0000000'.
        item_ids: The item ids to exchange.
        note: Anything the customer adds.
    """
    return {"order_id": order_id, "items": item_ids}


def find_order(order_id: str) -> dict[str, Any]:
    """Find an order.

    Args:
        order_id: The order id.
    """
    if order_id != "#W1":
        raise ValueError("Order not found")
    return {"order_id": order_id}


CTX = ToolContext(user_id="u1", user_role="customer")


def test_parameters_come_from_the_signature_and_the_docstring():
    model = parameters_model(exchange_items)
    schema = model.model_json_schema()
    assert schema["required"] == ["order_id", "item_ids"]
    assert schema["properties"]["item_ids"]["type"] == "array"
    assert schema["properties"]["order_id"]["description"].startswith("The order id")
    assert schema["additionalProperties"] is False


def test_a_parameter_without_a_type_or_a_docstring_is_refused():
    def untyped(order_id):  # type: ignore[no-untyped-def]
        """Do a thing."""

    def undocumented(order_id: str) -> None:
        pass

    with pytest.raises(TypeError, match="type annotation"):
        parameters_model(untyped)
    with pytest.raises(TypeError, match="docstring"):
        card_from_function(undocumented, pack="p")


def test_unknown_verbs_write_and_writes_are_confirmed_unless_said_otherwise():
    assert writes_by_name("get_order") is False and writes_by_name("exchange_items") is True
    card = card_from_function(exchange_items, pack="shop")
    assert (card.risk, card.writes, card.idempotent, card.permission) == (
        "high",
        True,
        False,
        "shop:write",
    )
    relaxed = card_from_function(
        exchange_items, ToolAnnotation(confirm=False, when_not_to_use="never"), pack="shop"
    )
    assert relaxed.risk == "low" and relaxed.writes and relaxed.when_not_to_use == "never"

    @tool(side_effect=False, name="ping_service")
    def ping(host: str) -> str:
        """Ping a host."""
        return host

    card = card_from_function(ping, pack="ops")
    assert card.name == "ping_service" and not card.writes and card.risk == "low"


def test_a_domain_error_of_the_function_is_the_users_to_fix():
    card = card_from_function(find_order, pack="shop")
    assert card.handler(card.parameters(order_id="#W1"), CTX) == {"order_id": "#W1"}
    with pytest.raises(UserFixableError, match="Order not found"):
        card.handler(card.parameters(order_id="#W2"), CTX)


def test_a_module_gives_its_public_functions_in_source_order():
    module = types.ModuleType("toy_shop")
    module.__dict__.update(find_order=find_order, exchange_items=exchange_items)
    find_order.__module__ = exchange_items.__module__ = "toy_shop"
    sys.modules["toy_shop"] = module
    try:
        pack = pack_from_module(module, policy="Be kind.")
    finally:
        del sys.modules["toy_shop"]
        find_order.__module__ = exchange_items.__module__ = __name__
    assert [c.name for c in pack.cards] == ["exchange_items", "find_order"]
    assert pack.scenario.name == "toy_shop"


def test_values_are_typed_as_the_parameter_wants():
    assert typed(list[str], '["1", "2"]') == ["1", "2"]
    assert typed(list[str], "1, 2") == ["1", "2"]
    assert typed(int, " 42 ") == 42
    assert typed(int, "many") == "many"  # kept as said: validation refuses it, with why
    assert typed(Literal["a", "b"], "a") == "a"


def test_only_values_the_conversation_shows_are_kept():
    card = card_from_function(exchange_items, pack="shop")
    seen = 'get order details: {"order_id":"#W1","items":[{"item_id":"111"},{"item_id":"222"}]}'
    values, refused = grounded(
        card, [("order_id", "#W1"), ("item_ids", '["111","999"]'), ("note", "hi")], seen
    )
    assert values == {"order_id": "#W1"}
    assert refused == {"item_ids": '["111","999"]', "note": "hi"}


def test_a_choice_in_the_description_grounds_but_an_example_does_not():
    said = "The reason, which should be either 'no longer needed' or 'ordered by mistake'."
    assert choices(str, said) == {"no longer needed", "ordered by mistake"}
    assert choices(str, "The order id, such as '#W0000000'.") == frozenset()


class _NoModel:
    def with_structured_output(self, *args: Any, **kwargs: Any) -> _NoModel:
        return self


def test_the_prompt_stays_within_its_budget(monkeypatch):
    policy = "\n\n".join(f"Rule {n}: " + "be careful " * 40 for n in range(60))
    pack = pack_from_functions("shop", [find_order, exchange_items], policy=policy)

    generator = PackCommandGenerator(
        _NoModel(), pack.cards, policy, RuleCommandGenerator.__new__(RuleCommandGenerator),
        budget_tokens=2000,
    )  # fmt: skip
    assert "(policy cut here for length)" in generator.system_prompt
    recent = tuple(("user" if n % 2 else "agent", f"turn {n} " + "x" * 900) for n in range(30))
    view = DialogueView(recent=recent, waiting=TaskView("find_order", {}, ("order_id",)))
    situation = generator.situation(view, "my order is #W1")
    assert len(generator.system_prompt) + len(situation) <= 2000 * 3
    assert situation.endswith("Message: my order is #W1")
    assert "turn 29" in situation and "turn 0 " not in situation  # the oldest go first


def test_an_openapi_document_becomes_cards_that_call_it(httpserver):
    httpserver.expect_request("/orders/W1", method="GET").respond_with_json({"status": "ok"})
    httpserver.expect_request("/orders/W1/cancel", method="POST").respond_with_json(
        {"detail": "not pending"}, status=409
    )
    document = {
        "info": {"title": "Shop"},
        "paths": {
            "/orders/{order_id}": {
                "get": {
                    "operationId": "get_order",
                    "summary": "Get an order.",
                    "parameters": [
                        {"name": "order_id", "in": "path", "schema": {"type": "string"}}
                    ],
                }
            },
            "/orders/{order_id}/cancel": {
                "post": {
                    "operationId": "cancel_order",
                    "summary": "Cancel an order.",
                    "parameters": [
                        {"name": "order_id", "in": "path", "schema": {"type": "string"}}
                    ],
                    "requestBody": {
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "required": ["reason"],
                                    "properties": {
                                        "reason": {"type": "string", "enum": ["mistake", "late"]}
                                    },
                                }
                            }
                        }
                    },
                }
            },
        },
    }
    pack = pack_from_openapi(document, policy="p", base_url=httpserver.url_for(""))
    cards = {c.name: c for c in pack.cards}
    assert cards["get_order"].risk == "low" and cards["cancel_order"].risk == "high"
    get = cards["get_order"]
    assert get.handler(get.parameters(order_id="W1"), CTX) == {"status": "ok"}
    cancel = cards["cancel_order"]
    with pytest.raises(UserFixableError, match="not pending"):
        cancel.handler(cancel.parameters(order_id="W1", reason="late"), CTX)
    assert cancel.json_schema()["properties"]["reason"]["enum"] == ["mistake", "late"]


class _Scripted:
    """A chat model stand-in whose structured call answers one fixed parse."""

    def __init__(self, parsed: dict[str, Any]) -> None:
        self.parsed = parsed

    def with_structured_output(self, *args: Any, **kwargs: Any) -> _Scripted:
        return self

    def invoke(self, messages: Any) -> dict[str, Any]:
        return {"raw": None, "parsed": self.parsed, "parsing_error": None}


def test_a_set_for_a_call_nothing_waits_on_starts_it_and_a_set_for_the_waiting_one_fills_it():
    said = {
        "commands": [
            {
                "kind": "set",
                "tool": "find_order",
                "arguments": [{"name": "order_id", "value": "#W1"}],
            }
        ]
    }
    pack = pack_from_functions("shop", [find_order, exchange_items], policy="p")
    rules = RuleCommandGenerator.__new__(RuleCommandGenerator)
    generator = PackCommandGenerator(_Scripted(said), pack.cards, "p", rules)
    commands, _ = generator._checked(said, "my order #W1", DialogueView(language="en"))
    assert [(c.kind, c.intent, dict(c.slots)) for c in commands] == [
        ("start", "find_order", {"order_id": "#W1"})
    ]
    waiting = DialogueView(language="en", waiting=TaskView("find_order", {}, ("order_id",)))
    commands, _ = generator._checked(said, "my order #W1", waiting)
    assert [(c.kind, c.intent) for c in commands] == [("set", "find_order")]


def find_member(phone: str) -> dict[str, Any]:
    """Find a member by phone.

    Args:
        phone: The phone number, such as '13800001111'.

    Returns:
        member_id: The member number.
    """
    return {"member_id": "M-1001"}


def list_classes(day: date) -> list[dict[str, Any]]:
    """List the classes on a day.

    Args:
        day: The day.

    Returns:
        class_id: The class number.
    """
    return []


def book_class(member_id: str, class_id: str) -> dict[str, Any]:
    """Book a member into a class.

    Args:
        member_id: The member number, such as 'M-1001'.
        class_id: The class number, such as 'C-0620-YOGA'.
    """
    return {"booking_id": "B-1"}


def _gym() -> tuple[Any, RuleCommandGenerator]:
    pack = pack_from_functions("gym", [find_member, list_classes, book_class], policy="p")
    catalog = ScenarioSet([pack.scenario])
    today = lambda: date(2024, 6, 18)  # noqa: E731
    recognizer = Services(scenarios=catalog).recognizer
    rules = RuleCommandGenerator(catalog, recognizer, today=today)
    return pack, rules


def _start(tool: str, **values: str) -> dict[str, Any]:
    pairs = [{"name": k, "value": v} for k, v in values.items()]
    return {"kind": "start", "tool": tool, "arguments": pairs}


def _starts(reading_commands: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(c.intent, dict(c.slots)) for c in reading_commands if c.kind == "start"]


def test_a_write_named_by_its_value_starts_with_what_the_conversation_said():
    pack, rules = _gym()
    generator = pack.generator(None, rules)
    said = (("user", "This is 13800001111"), ("agent", "member number: M-1001"))
    reading = generator.generate(
        "book me into C-0620-YOGA", DialogueView(language="en", recent=said)
    )
    assert _starts(reading.commands) == [
        ("book_class", {"class_id": "C-0620-YOGA", "member_id": "M-1001"})
    ]
    bare = generator.generate("This is 13800001111.", DialogueView(language="en"))
    assert _starts(bare.commands) == [("find_member", {"phone": "13800001111"})]


def test_the_models_lookups_beside_a_write_are_left_to_the_write():
    pack, rules = _gym()
    said = {
        "commands": [
            _start("find_member", phone="13800001111"),
            _start("list_classes", day="2024-06-18"),
            _start("book_class", class_id="C-0621-HIIT"),
        ]
    }
    generator = pack.generator(_Scripted(said), rules)
    text = "我是13800001111，帮我约 C-0621-HIIT"
    reading = generator.generate(text, DialogueView(language="zh"))
    # the member is looked up by the booking itself (its suggester); the invented day is gone
    assert _starts(reading.commands) == [("book_class", {"class_id": "C-0621-HIIT"})]
    assert reading.refused == {"day": "2024-06-18"} and reading.source == "model"


def get_order(order_id: str) -> dict[str, Any]:
    """Look up an order's status and total.

    Args:
        order_id: The order id, such as '#A0'.
    """
    return {"order_id": order_id}


def cancel_order(
    order_id: str, reason: Literal["no longer needed", "ordered by mistake"]
) -> dict[str, Any]:
    """Cancel a pending order.

    Args:
        order_id: The order id, such as '#A0'.
        reason: Why the customer cancels.
    """
    return {"order_id": order_id}


class _Counting(_Scripted):
    """The scripted model, counting the calls."""

    calls = 0

    def invoke(self, messages: Any) -> dict[str, Any]:
        self.calls += 1
        return super().invoke(messages)


def _shop() -> tuple[Any, RuleCommandGenerator]:
    pack = pack_from_functions("shop", [get_order, cancel_order], policy="p")
    catalog = ScenarioSet([pack.scenario])
    recognizer = Services(scenarios=catalog).recognizer
    return pack, RuleCommandGenerator(catalog, recognizer, today=lambda: date(2024, 6, 18))


def test_a_value_said_in_words_goes_to_the_model_and_its_cannot_tell_keeps_the_rules():
    pack, rules = _shop()
    text = "cancel #A1, I am bored"
    heard = rules.generate(text, DialogueView(language="en"))
    assert _starts(heard.commands) == [("cancel_order", {"order_id": "#A1"})]  # sure of it
    model = _Counting({"commands": [{"kind": "cannot_tell", "tool": "none", "arguments": []}]})
    reading = pack.generator(model, rules).generate(text, DialogueView(language="en"))
    # the reason is no type's to read: the model was asked; it could not tell, the rules hold
    assert model.calls == 1 and reading.model_calls == 1 and reading.source == "rules"
    assert _starts(reading.commands) == [("cancel_order", {"order_id": "#A1"})]


def test_a_never_mind_with_a_plausible_task_and_nothing_waiting_is_the_tasks_to_read():
    _, rules = _shop()
    looked_up = TaskView(intent="get_order", slots={"order_id": "#A1"})
    (command,) = rules.generate("Please cancel it", DialogueView(last=looked_up)).commands
    assert command.kind == "cannot_tell" and "cancel_order" in command.candidates
    (command,) = rules.generate("never mind", DialogueView(last=looked_up)).commands
    assert command.kind == "cancel"
    waiting = TaskView(intent="cancel_order", slots={"order_id": "#A1"}, missing=("reason",))
    (command,) = rules.generate("Please cancel it", DialogueView(waiting=waiting)).commands
    assert command.kind == "cancel"  # something waits: it is dropped


def test_a_message_of_one_value_is_read_with_the_lexicons_lead_ins_and_trails():
    pack, _ = _gym()
    catalog = ScenarioSet([pack.scenario])
    for text in (
        "Hi, my phone number is 13800001111 please",
        "It's 13800001111.",
        "您好，我的手机号是13800001111",
        "手机号：13800001111呢",
    ):
        assert catalog.bare_request(text) == "find_member", text
    assert catalog.bare_request("book 13800001111") is None
