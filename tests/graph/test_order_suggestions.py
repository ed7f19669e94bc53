"""An order task without its number: the item named finds the order, else the newest are offered."""

from __future__ import annotations

import pytest

from scenarios.delivery.tools import names_item
from state import Context
from tests.conftest import BOB, say

STAFF = Context(user_id="u_90001", user_role="agent")


def test_the_item_named_finds_the_callers_order(app):
    out = say(app, "我点的黄焖鸡怎么还没送来")
    assert (
        "OD-20240618-001" in out["messages"][-1].content and "配送中" in out["messages"][-1].content
    )


def test_without_an_item_the_question_offers_the_callers_newest_orders(app):
    out = say(app, "我的订单怎么还没到？")
    question = out["messages"][-1].content
    assert "请提供您的订单号" in question
    for order in ("202506001（蓝牙耳机，已发货）", "OD-20240618-001（黄焖鸡米饭，配送中）"):
        assert order in question
    assert "OD-20240619-003" not in question  # Bob's
    assert "配送中" in say(app, "OD-20240618-001")["messages"][-1].content


def test_an_item_named_later_answers_the_question(app):
    say(app, "帮我催一下单")
    out = say(app, "黄焖鸡那个")
    assert "OD-20240618-001" in out["messages"][-1].content


def test_another_user_sees_only_their_own_orders(app):
    out = say(app, "我的订单到哪了", thread="bob", context=BOB)
    question = out["messages"][-1].content
    assert "OD-20240619-003（酸菜鱼，配送中）" in question and "黄焖鸡" not in question
    out = say(app, "我点的黄焖鸡怎么还没到", thread="bob2", context=BOB)
    assert "OD-20240618-001" not in out["messages"][-1].content  # Alice's item names nothing


def test_a_refund_found_by_its_item_still_asks_for_confirmation(app, db):
    out = say(app, "麻辣香锅洒了，我要退款")
    assert "OD-20240618-002" in out["__interrupt__"][0].value["question"]
    assert db.query("SELECT * FROM refunds") == []


def test_staff_without_orders_are_just_asked(app):
    out = say(app, "帮我查订单", context=STAFF)
    assert "最近的订单" not in out["messages"][-1].content


@pytest.mark.parametrize(
    ("hint", "item", "named"),
    [
        ("我点的黄焖鸡怎么还没送来", "黄焖鸡米饭", True),
        ("我的耳机到哪了", "蓝牙耳机", True),
        ("黄焖鸡那个", "黄焖鸡米饭", True),
        ("我的订单怎么还没到", "黄焖鸡米饭", False),
        ("米", "黄焖鸡米饭", False),  # one character names nothing
        ("", "黄焖鸡米饭", False),
    ],
)
def test_what_names_an_item(hint, item, named):
    assert names_item(hint, item) is named


def test_a_reply_naming_an_offered_order_goes_on_to_the_refund(app, db):
    say(app, "我想退款")
    out = say(app, "麻辣香锅那单")
    assert "OD-20240618-002" in out["__interrupt__"][0].value["question"]
    assert db.query("SELECT * FROM refunds") == []


def test_the_caller_can_list_their_own_orders(app):
    out = say(app, "能帮我看看我所有的订单吗")
    reply = out["messages"][-1].content
    assert "OD-20240618-001（黄焖鸡米饭，配送中）" in reply and "酸菜鱼" not in reply
    assert (
        "Your latest orders" in say(app, "show me my orders", thread="en")["messages"][-1].content
    )


def test_spilled_food_is_a_refund_of_the_order_named_next(app, db):
    assert "申请退款" in say(app, "外卖洒了")["messages"][-1].content
    out = say(app, "麻辣香锅")
    assert "OD-20240618-002" in out["__interrupt__"][0].value["question"]
    assert db.query("SELECT * FROM refunds") == []
