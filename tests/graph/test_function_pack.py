"""A pack from three functions and a policy, on the compiled graph, with no other code.

The toy shop below is all a team would write: typed, documented functions. The pack gives
them cards, the model command generator (a scripted OpenAI-compatible server here) reads
the messages, and the executor's pipeline does the rest: validation, confirmation before
the write, idempotency on a replay.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import Field

from graph import time_travel
from graph.builder import build_graph
from packs import pack_from_functions, tool
from state import Context
from tests.conftest import fast_executor
from tests.fakes.openai_server import FakeOpenAIServer, Scripted
from tests.helpers import set_env

pytestmark = pytest.mark.integration

USER = Context(user_id="u_shop_1", user_role="customer")
POLICY = "Cancel only pending orders, and only after the customer says yes."


class Shop:
    """Three functions over a dict: what a team brings, nothing more."""

    def __init__(self) -> None:
        self.orders = {"#A1": {"status": "pending", "total": 30}}
        self.cancels: list[str] = []

    def get_order(self, order_id: str) -> dict[str, Any]:
        """Look up an order's status and total.

        Args:
            order_id: The order id, such as '#A0'.
        """
        if order_id not in self.orders:
            raise ValueError(f"no order {order_id}")
        return {"order_id": order_id, **self.orders[order_id]}

    def list_products(self, category: str, limit: int = 5) -> list[dict[str, Any]]:
        """List the products of a category.

        Args:
            category: A category such as 'mugs'.
            limit: How many at most.
        """
        return [{"name": "mug", "price": 5}][:limit]

    def cancel_order(
        self, order_id: str, reason: Literal["no longer needed", "ordered by mistake"]
    ) -> dict[str, Any]:
        """Cancel a pending order.

        Args:
            order_id: The order id, such as '#A0'.
            reason: Why the customer cancels.
        """
        self.cancels.append(order_id)
        self.orders[order_id]["status"] = "cancelled"
        return {"order_id": order_id, "status": "cancelled"}


def commands(*items: dict[str, Any]) -> Scripted:
    return Scripted(content=json.dumps({"commands": list(items)}))


def start(tool: str, **arguments: str) -> dict[str, Any]:
    args = [{"name": k, "value": v} for k, v in arguments.items()]
    return {"kind": "start", "tool": tool, "arguments": args}


def give(**arguments: str) -> dict[str, Any]:
    args = [{"name": k, "value": v} for k, v in arguments.items()]
    return {"kind": "set", "tool": "none", "arguments": args}


@pytest.fixture
def shop() -> Shop:
    return Shop()


@pytest.fixture
def app(shop: Shop, openai_server: FakeOpenAIServer, db, monkeypatch) -> Any:
    # the one documented route: the pack's scenario, the model from the settings
    set_env(monkeypatch, "REACH_MODEL", "fake")
    set_env(monkeypatch, "REACH_BASE_URL", openai_server.base_url)
    set_env(monkeypatch, "REACH_MODEL_MAX_RETRIES", "0")
    pack = pack_from_functions(
        "shop", [shop.get_order, shop.list_products, shop.cancel_order], policy=POLICY
    )
    return build_graph(
        checkpointer=InMemorySaver(),
        scenarios=[pack.scenario],
        database_factory=lambda: db,
        executor_factory=fast_executor,
    )


CONFIG = {"configurable": {"thread_id": "shop"}}


def say(app: Any, text: str) -> str:
    out = app.invoke({"messages": [("user", text)]}, CONFIG, context=USER)
    return out["messages"][-1].content


def test_the_functions_become_cards_with_safe_defaults(shop):
    pack = pack_from_functions(
        "shop", [shop.get_order, shop.list_products, shop.cancel_order], policy=POLICY
    )
    cards = {card.name: card for card in pack.cards}
    read, write = cards["get_order"], cards["cancel_order"]
    assert (read.risk, read.writes, read.idempotent) == ("low", False, True)
    assert (write.risk, write.writes, write.idempotent) == ("high", True, False)
    assert "yes" in write.when_not_to_use
    schema = write.json_schema()
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["order_id", "reason"]
    assert schema["properties"]["reason"]["enum"] == ["no longer needed", "ordered by mistake"]
    tasks = {task.intent: task.required_slots for task in pack.scenario.tasks}
    assert tasks["list_products"] == ("category",)  # a default makes a parameter optional
    assert pack.scenario.grants["customer"] == {"shop:read", "shop:write"}


def test_read_then_a_confirmed_write_runs_once_even_on_replay(app, shop, openai_server):
    openai_server.push(
        commands(start("get_order", order_id="#A1")),
        commands(start("cancel_order", order_id="#A1")),
        commands(give(reason="no longer needed")),
    )
    answer = say(app, "Where is my order #A1?")
    assert "status: pending" in answer and "{" not in answer  # a sentence, not JSON
    # the model was shown the policy and the tools, and the conversation so far
    prompt = openai_server.requests[0]["messages"][0]["content"]
    assert POLICY in prompt and "cancel_order(order_id, reason: " in prompt and "[write]" in prompt
    # asks for what is missing, by its description, with its choices
    assert "why the customer cancels" in say(app, "Please cancel it")
    asked = say(app, "I no longer need it")
    # said from the card: the function's description, each argument by its ``Args:``
    assert "Cancel a pending order" in asked and "no longer needed" in asked
    assert "cancel_order" not in asked and "=" not in asked
    # each argument by its Args: description (its label: "The order id" → "order id")
    assert "(order id: #A1, why the customer cancels: no longer needed)" in asked
    assert app.get_state(CONFIG).interrupts and shop.cancels == []  # nothing before the yes
    out = app.invoke(Command(resume="yes"), CONFIG, context=USER)
    assert out["tool_results"][-1]["status"] == "success"
    assert out["tool_results"][-1]["duplicated"] is False
    assert shop.cancels == ["#A1"]
    before_tool = next(e for e in reversed(time_travel.history(app, "shop")) if e.next == ("tool",))
    replayed = time_travel.replay(app, "shop", before_tool.checkpoint_id, USER)
    assert replayed["tool_results"][-1]["duplicated"] is True
    assert shop.cancels == ["#A1"]  # the replay did not cancel twice


def test_a_no_runs_nothing(app, shop, openai_server):
    openai_server.push(commands(start("cancel_order", order_id="#A1", reason="ordered by mistake")))
    say(app, "Cancel #A1, I ordered by mistake")
    out = app.invoke(Command(resume="no"), CONFIG, context=USER)
    assert out["tool_results"][-1]["status"] == "rejected"
    assert shop.cancels == [] and shop.orders["#A1"]["status"] == "pending"


def test_a_value_outside_the_choices_is_asked_again_with_them(app, shop, openai_server):
    openai_server.push(commands(start("cancel_order", order_id="#A1", reason="I am bored")))
    reply = say(app, "cancel #A1, I am bored")
    assert "I am bored won't do" in reply and "“no longer needed”" in reply
    assert shop.cancels == [] and not app.get_state(CONFIG).interrupts


def test_an_invented_id_is_not_used_the_agent_asks_for_it(app, shop, openai_server):
    openai_server.push(commands(start("cancel_order", order_id="#Z9", reason="ordered by mistake")))
    reply = say(app, "cancel my other order please, I ordered it by mistake")
    assert "the order id" in reply and "#Z9" not in reply
    assert shop.cancels == [] and not app.get_state(CONFIG).interrupts
    commands_read = app.get_state(CONFIG).values["commands"]
    assert commands_read[0]["slots"] == {"reason": "ordered by mistake"}


def test_a_domain_error_is_said_with_the_functions_own_words(app, openai_server):
    openai_server.push(commands(start("get_order", order_id="#B7")))
    assert "no order #B7" in say(app, "what about #B7?")


def test_at_the_confirmation_a_value_outside_the_limits_is_asked_again(db, monkeypatch):
    # no model: the reader hears the new hours, which cannot be used, and asks for them with
    # why before the rental is put to the user again; nothing runs before the yes
    rentals: list[tuple[str, int]] = []

    def rent_bike(bike_id: str, hours: Annotated[int, Field(ge=1, le=8)]) -> dict[str, Any]:
        """Rent a bike for 1 to 8 hours.

        Args:
            bike_id: The bike number, such as 'B-0001'.
            hours: The rental hours.
        """
        rentals.append((bike_id, hours))
        return {"rental_id": "R-1"}

    set_env(monkeypatch, "REACH_MODEL", "rules")
    pack = pack_from_functions(
        "bikes", [tool(examples=["rent B-0001 for 3 hours"])(rent_bike)], policy="p"
    )
    rules_app = build_graph(
        checkpointer=InMemorySaver(),
        scenarios=[pack.scenario],
        database_factory=lambda: db,
        executor_factory=fast_executor,
    )
    say(rules_app, "rent B-0001 for 2 hours")
    assert rules_app.get_state(CONFIG).interrupts
    out = rules_app.invoke(Command(resume="rent B-0001 for 12 hours"), CONFIG, context=USER)
    assert "between 1 and 8" in out["messages"][-1].content
    assert not rules_app.get_state(CONFIG).interrupts and rentals == []
    say(rules_app, "3 hours")
    (asked,) = rules_app.get_state(CONFIG).interrupts
    assert "rental hours: 3" in asked.value["question"] and rentals == []
