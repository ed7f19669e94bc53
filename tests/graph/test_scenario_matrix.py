"""The failure ways every scenario must handle, and the clarification turns they need."""

from __future__ import annotations

import pytest
from langgraph.types import Command

from state import Context
from tests.conftest import ALICE, registry_with, say
from tests.helpers import set_env
from tools.executor.errors import PermanentToolError

pytestmark = pytest.mark.integration

ANALYST = Context(user_id="u_80001", user_role="analyst")
CONFIG = {"configurable": {"thread_id": "t1"}}
VALID_ID = "110101199001011237"
FLIGHT = f"帮我订一张2024-06-20从上海去北京的机票，乘客张三，身份证号{VALID_ID}"


@pytest.fixture(autouse=True)
def june_18(monkeypatch):
    set_env(monkeypatch, "REACH_TODAY", "2024-06-18")


@pytest.mark.parametrize(
    ("text", "table"),
    [
        (FLIGHT, "flight_bookings"),
        ("帮我转500元给ACC-2001，密码123456", "transfers"),
        ("帮我预约6月20号的皮肤科", "appointments"),
        ("我要退款 OD-20240618-002", "refunds"),
    ],
)
def test_a_role_without_the_permission_changes_nothing(make_app, db, text, table):
    out = say(make_app(), text, context=ANALYST)
    assert any(r["error_type"] == "permission_denied" for r in out["tool_results"])
    assert "无权" in out["messages"][-1].content
    assert db.query(f"SELECT COUNT(*) AS n FROM {table}")[0]["n"] == 0  # noqa: S608


@pytest.mark.parametrize(
    ("tool", "text", "table"),
    [
        ("book_flight_ticket", FLIGHT, "flight_bookings"),
        ("request_refund", "我要退款 OD-20240618-002", "refunds"),
    ],
)
def test_a_backend_failure_is_not_passed_off_as_success(make_app, db, tool, text, table):
    def broken(args, ctx):
        raise PermanentToolError("backend 500")

    app = make_app(registry=registry_with(tool, handler=broken))
    say(app, text)
    out = app.invoke(Command(resume="确认"), CONFIG, context=ALICE)
    reply = out["messages"][-1].content
    assert "人工客服" in reply  # handed over, never "done"
    assert db.query(f"SELECT COUNT(*) AS n FROM {table}")[0]["n"] == 0  # noqa: S608


def test_transfer_asks_for_the_missing_pin_and_never_invents_it(make_app, db):
    app = make_app()
    out = say(app, "帮我转500元给ACC-2001")
    assert out["missing_slots"] == ["pin"]
    assert "支付密码" in out["messages"][-1].content
    assert db.query("SELECT COUNT(*) AS n FROM transfers")[0]["n"] == 0


def test_unknown_department_is_asked_again(make_app, db):
    out = say(make_app(), "帮我预约6月20号的眼科")
    assert out["missing_slots"] == ["department"]
    assert "内科、儿科、皮肤科" in out["messages"][-1].content


SCRIPTS = {
    "delivery": ["我的订单怎么还没到？", "OD-20240618-001"],
    "flights": ["帮我订一张去北京的机票", "6月20号从上海出发", f"乘客张三，身份证{VALID_ID}"],
    "transfer": ["帮我转500元给ACC-2001", "密码123456"],
    "appointment": ["我想挂号", "皮肤科，6月20号"],
    "weather-free": ["帮我查一下 202506001"],
}


def test_average_clarification_turns(make_app, capsys):
    app = make_app()
    turns = {}
    for name, script in SCRIPTS.items():
        config = {"configurable": {"thread_id": name}}
        asked = 0
        for text in script:
            out = app.invoke({"messages": [("user", text)]}, config, context=ALICE)
            if not out.get("missing_slots"):
                break
            asked += 1
        assert not out.get("missing_slots"), name
        turns[name] = asked
    average = sum(turns.values()) / len(turns)
    with capsys.disabled():
        print(f"\nclarification turns per scenario {turns}; average {average:.2f}")
    assert average <= 2
