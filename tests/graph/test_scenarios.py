"""The design's scenarios end to end through the graph, judged by replies and by the data
they leave behind."""

from __future__ import annotations

import json
import time

import pytest
from werkzeug import Response

from observability.audit import AuditLog
from state import Context
from tests.conftest import ALICE, fast_executor, nodes_visited, registry_with, say
from tests.helpers import default_registry, set_env
from tools.executor.failures import said

pytestmark = pytest.mark.integration

ANALYST = Context(user_id="u_80001", user_role="analyst")


# ---- weather over HTTP ------------------------------------------------------------------


@pytest.fixture
def weather_api(httpserver, monkeypatch):
    set_env(monkeypatch, "REACH_WEATHER_URL", httpserver.url_for(""))
    return httpserver


def report(city="Beijing", **fields):
    return {"city": city, "temp_c": 26.5, "condition": "晴", "humidity": 40, **fields}


def test_weather_happy_path_normalizes_the_city(make_app, weather_api):
    weather_api.expect_request("/weather", query_string={"city": "Beijing"}).respond_with_json(
        report()
    )
    out = say(make_app(), "北京今天天气怎么样？")
    assert out["messages"][-1].content == "北京现在晴，气温 26.5°C，湿度 40%。"
    assert out["tool_results"][-1]["data"]["api_city"] == "Beijing"


def test_weather_in_english(make_app, weather_api):
    weather_api.expect_request("/weather", query_string={"city": "Shanghai"}).respond_with_json(
        report("Shanghai", condition="cloudy")
    )
    out = say(make_app(), "what's the weather in Shanghai?")
    assert "cloudy in Shanghai" in out["messages"][-1].content


def test_weather_asks_for_the_city_then_answers(make_app, weather_api):
    weather_api.expect_request("/weather", query_string={"city": "Hangzhou"}).respond_with_json(
        report("Hangzhou")
    )
    app = make_app()
    first = say(app, "今天天气怎么样")
    assert first["missing_slots"] == ["city"]
    assert "哪个城市" in first["messages"][-1].content
    second = say(app, "杭州")
    assert "杭州现在晴" in second["messages"][-1].content


def test_weather_500s_are_retried(make_app, weather_api):
    weather_api.expect_ordered_request("/weather").respond_with_data("boom", status=500)
    weather_api.expect_ordered_request("/weather").respond_with_data("boom", status=503)
    weather_api.expect_ordered_request("/weather").respond_with_json(report())
    out = say(make_app(), "北京天气")
    assert "北京现在晴" in out["messages"][-1].content
    assert out["tool_results"][-1]["attempts"] == 3


def test_weather_404_is_an_unknown_city(make_app, weather_api):
    weather_api.expect_request("/weather").respond_with_json({"error": "not found"}, status=404)
    out = say(make_app(), "阿特兰蒂斯的天气")
    assert out["messages"][-1].content.startswith("未找到该城市：阿特兰蒂斯")
    assert nodes_visited(make_app(), "阿特兰蒂斯的天气", thread="x")[-1] == "reply"


def test_weather_timeout_gives_a_degraded_reply(make_app, weather_api, monkeypatch):
    def slow(request):
        time.sleep(0.5)
        return Response(json.dumps(report()), content_type="application/json")

    weather_api.expect_request("/weather").respond_with_handler(slow)
    registry = registry_with("query_weather", timeout_s=0.1)
    out = say(make_app(registry=registry, max_tool_retries=0), "北京天气")
    reply = out["messages"][-1].content
    assert said(reply, "zh") == {"timeout"} and "查询天气" in reply
    assert "人工" not in reply  # a weather report needs no human hand-off
    assert out["tool_results"][-1]["status"] == "timeout"


def test_weather_field_drift_is_reported_not_turned_into_an_empty_answer(make_app, weather_api):
    drifted = {"city": "Beijing", "temperature": 26.5, "express_status": "晴"}  # renamed
    weather_api.expect_request("/weather").respond_with_json(drifted)
    out = say(make_app(), "北京天气")
    result = out["tool_results"][-1]
    assert result["error_type"] == "system" and result["retryable"] is False
    assert result["data"]["reason"] == "schema_drift"
    assert "temp_c" in result["data"]["fields"] and "condition" in result["data"]["fields"]
    # a changed format is the service failing: said as such, never as a guess or "no city"
    assert said(out["messages"][-1].content, "zh") == {"unavailable"}
    assert "°C" not in out["messages"][-1].content


def test_weather_unreachable_api(make_app, monkeypatch):
    set_env(monkeypatch, "REACH_WEATHER_URL", "http://127.0.0.1:9")  # nothing listens there
    out = say(make_app(max_tool_retries=0), "北京天气")
    assert said(out["messages"][-1].content, "zh") == {"unavailable"}


# ---- database questions (read-only) --------------------------------------------------


@pytest.fixture
def july_2024(monkeypatch):
    set_env(monkeypatch, "REACH_TODAY", "2024-07-15")


def test_sales_question_is_answered_from_the_table(make_app, db, july_2024):
    expected = db.query(
        "SELECT product, SUM(amount_cents) AS total FROM sales WHERE month = '2024-06' "
        "GROUP BY product ORDER BY total DESC LIMIT 1"
    )[0]
    out = say(make_app(), "上月销售额最高的产品", context=ANALYST)
    reply = out["messages"][-1].content
    assert expected["product"] in reply
    assert f"{expected['total'] / 100:,.2f}" in reply
    data = out["tool_results"][-1]["data"]
    assert data["month"] == "2024-06" and data["params"] == ["2024-06"]


def test_sales_in_english_and_by_units(make_app, db, july_2024):
    expected = db.query(
        "SELECT product, SUM(quantity) AS total FROM sales WHERE month = '2024-05' "
        "GROUP BY product ORDER BY total ASC LIMIT 1"
    )[0]
    out = say(
        make_app(), "which product had the lowest sales by units in 2024-05?", context=ANALYST
    )
    assert expected["product"] in out["messages"][-1].content
    assert f"{expected['total']} units" in out["messages"][-1].content


def test_a_named_products_total_is_that_products(make_app, db, july_2024):
    # answering the month's total here said something true, but not what was asked
    expected = db.query(
        "SELECT SUM(amount_cents) AS total FROM sales WHERE month = '2024-05' "
        "AND product = '麻辣香锅'"
    )[0]["total"]
    out = say(make_app(), "2024年5月麻辣香锅卖了多少钱", context=ANALYST)
    reply = out["messages"][-1].content
    assert reply == f"2024年5月「麻辣香锅」的销售额为 {expected / 100:,.2f} 元。"
    assert out["tool_results"][-1]["data"]["params"] == ["2024-05", "麻辣香锅"]


def test_customers_may_not_read_sales(make_app, july_2024):
    out = say(make_app(), "上月销售额最高的产品", context=ALICE)
    assert out["tool_results"][-1]["error_type"] == "permission_denied"
    assert "无权" in out["messages"][-1].content


def test_generated_sql_is_audited_and_the_database_is_unchanged(make_app, db, july_2024):
    audit = AuditLog()
    app = make_app(executor_factory=lambda registry: fast_executor(registry, audit=audit))
    before = db.query("SELECT COUNT(*) AS n, SUM(amount_cents) AS s FROM sales")
    say(app, "上个月总销售额是多少", context=ANALYST)
    audit.flush()
    record = [r for r in audit.records if r.get("tool") == "query_sales_report"][-1]
    assert "SELECT SUM(amount_cents) AS total FROM sales WHERE month = ?" in record["summary"]
    assert db.query("SELECT COUNT(*) AS n, SUM(amount_cents) AS s FROM sales") == before


def test_a_question_the_bot_cannot_answer(make_app, july_2024):
    out = say(make_app(), "销售部门有几个人", context=ANALYST)
    assert "我目前能回答" in out["messages"][-1].content


def test_switching_topic_mid_conversation_keeps_tasks_apart(make_app, weather_api):
    weather_api.expect_request("/weather").respond_with_json(report())
    app = make_app()
    first = say(app, "我的订单怎么还没到？")
    assert first["missing_slots"] == ["order_id"]
    weather = say(app, "先帮我查下北京天气")
    assert "北京现在晴" in weather["messages"][-1].content
    assert weather["slots"] == {"city": "北京"}  # the order task's slots did not leak in
    back = say(app, "我的订单 OD-20240618-001 到哪了")
    assert "配送中" in back["messages"][-1].content
    assert back["slots"] == {"order_id": "OD-20240618-001"}


# ---- notifications only on request ------------------------------------------------------


def notifications(db):
    return db.query("SELECT user_id, channel, content FROM notifications")


def test_a_notification_is_sent_only_when_the_user_asks(make_app, db):
    app = make_app()
    plain = say(app, "OD-20240618-001 到哪了")
    assert [r["tool"] for r in plain["tool_results"]] == ["query_order_status"]
    assert notifications(db) == []
    asked = say(app, "订单 OD-20240618-001 到哪了？到了通知我", thread="t2")
    assert [r["tool"] for r in asked["tool_results"]] == ["query_order_status", "send_notification"]
    assert "已按您的要求发送短信通知" in asked["messages"][-1].content
    assert notifications(db) == [
        {"user_id": "u_10001", "channel": "sms", "content": notifications(db)[0]["content"]}
    ]
    assert "OD-20240618-001" in notifications(db)[0]["content"]


def test_notification_tool_card_forbids_replying_with_it():
    view = default_registry().get("send_notification").model_view()["function"]["description"]
    assert "Never use it to reply in the conversation" in view


def test_no_notification_about_someone_elses_order(make_app, db):
    out = say(make_app(), "OD-20240619-003 到哪了？到了通知我")
    assert all(r["status"] != "success" for r in out["tool_results"])
    assert notifications(db) == []
