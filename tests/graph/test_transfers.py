"""The transfer chain, handed to the finance agent: strict order, each failure stopping the
chain with its own message, review above the risk threshold, compensation, and money that
is never created or lost."""

from __future__ import annotations

import json
import random

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from graph import time_travel
from scenarios.transfer.tools import FinanceBackends
from state import Context
from tests.conftest import ALICE, BOB, say
from tests.helpers import default_registry, finance_registry
from tools.executor.failures import said

pytestmark = pytest.mark.integration

CONFIG = {"configurable": {"thread_id": "t1"}}


def balances(db) -> dict[str, int]:
    return {
        r["account_id"]: r["balance_cents"]
        for r in db.query("SELECT account_id, balance_cents FROM accounts")
    }


def transfers(db):
    return db.query("SELECT from_account, to_account, amount_cents, status FROM transfers")


def steps(out) -> list[tuple[str, str]]:
    return [(r["tool"], r["status"]) for r in out["tool_results"]]


def test_happy_path_runs_the_chain_in_order_and_moves_the_money(make_app, db):
    app = make_app()
    before = balances(db)
    say(app, "帮我转500元给ACC-2001，密码123456")
    payload = app.get_state(CONFIG).tasks[0].interrupts[0].value
    assert payload["actions"][0]["tool"] == "execute_transfer"
    assert balances(db) == before  # nothing moves before the confirmation
    out = app.invoke(Command(resume="确认"), CONFIG, context=ALICE)
    assert steps(out) == [
        ("verify_identity", "success"),
        ("check_balance", "success"),
        ("assess_transfer_risk", "success"),
        ("execute_transfer", "success"),
    ]
    assert "已向李四（ACC-2001）转账 500.00 元" in out["messages"][-1].content
    after = balances(db)
    assert after["ACC-1001"] == before["ACC-1001"] - 50_000
    assert after["ACC-2001"] == before["ACC-2001"] + 50_000
    assert transfers(db) == [
        {
            "from_account": "ACC-1001",
            "to_account": "ACC-2001",
            "amount_cents": 50_000,
            "status": "completed",
        }
    ]


def test_wrong_pin_stops_at_the_first_step(make_app, db):
    before = balances(db)
    out = say(make_app(), "转 100 元给 ACC-2001，密码 111111")
    assert steps(out) == [("verify_identity", "failed")]
    assert "支付密码不正确" in out["messages"][-1].content
    assert balances(db) == before and transfers(db) == []


def test_insufficient_balance_stops_at_the_balance_step(make_app, db):
    out = say(make_app(), "转 6000 元给 ACC-2001，密码 123456")
    assert steps(out) == [("verify_identity", "success"), ("check_balance", "failed")]
    assert "余额不足（可用 5,000.00 元）" in out["messages"][-1].content
    assert transfers(db) == []


def test_unknown_payee_stops_with_its_own_message(make_app, db):
    out = say(make_app(), "转 100 元给 ACC-9999，密码 123456")
    assert steps(out)[-1] == ("check_balance", "failed")
    assert "ACC-9999 不存在" in out["messages"][-1].content


def test_high_risk_goes_to_review_and_moves_nothing(make_app, db):
    app = make_app()
    before = balances(db)
    say(app, "我要转账 3000 元到 ACC-3001，支付密码 123456")
    out = app.invoke(Command(resume="确认"), CONFIG, context=ALICE)
    risk = out["tool_results"][2]["data"]
    assert risk["risk_score"] >= 0.7 and risk["review"] is True
    reply = out["messages"][-1].content
    assert said(reply, "zh") == {"pending_review"}
    held = db.query("SELECT transfer_id FROM transfers")[0]["transfer_id"]
    assert held in reply  # held, and the user can quote it
    assert balances(db) == before
    assert transfers(db)[0]["status"] == "pending_review"


def test_clearing_failure_after_money_moved_is_compensated(make_app, db, monkeypatch):
    def refuse(record):
        raise ConnectionError("clearing network down")

    monkeypatch.setattr(FinanceBackends, "clearing", staticmethod(refuse))
    app = make_app()
    before = balances(db)
    say(app, "帮我转500元给ACC-2001，密码123456")
    out = app.invoke(Command(resume="确认"), CONFIG, context=ALICE)
    assert out["tool_results"][-1]["error_type"] == "compensated"
    assert said(out["messages"][-1].content, "zh") == {"compensated"}
    assert balances(db) == before  # the money is back where it was
    assert transfers(db)[0]["status"] == "reversed"


def test_rejected_transfer_moves_nothing(make_app, db):
    app = make_app()
    before = balances(db)
    say(app, "帮我转500元给ACC-2001，密码123456")
    out = app.invoke(Command(resume="取消"), CONFIG, context=ALICE)
    assert out["tool_results"][-1]["status"] == "rejected"
    assert "已取消" in out["messages"][-1].content
    assert balances(db) == before and transfers(db) == []


def test_money_is_never_created_or_lost(make_app, db, monkeypatch):
    rng = random.Random(7)
    total = sum(balances(db).values())
    app = make_app()
    for i in range(12):
        flaky = rng.random() < 0.3

        def clearing(record, flaky=flaky):
            if flaky:
                raise ConnectionError("clearing hiccup")

        monkeypatch.setattr(FinanceBackends, "clearing", staticmethod(clearing))
        amount = rng.choice([50, 120, 700, 2500, 9000])
        pin = rng.choice(["123456", "123456", "000000"])
        config = {"configurable": {"thread_id": f"r{i}"}}
        app.invoke(
            {"messages": [("user", f"转 {amount} 元给 ACC-2001，密码 {pin}")]},
            config,
            context=ALICE,
        )
        if app.get_state(config).next:
            app.invoke(Command(resume=rng.choice(["确认", "确认", "取消"])), config, context=ALICE)
        assert sum(balances(db).values()) == total
        assert min(balances(db).values()) >= 0


def test_finance_messages_link_to_the_conversation_task(make_app, db):
    app = make_app()
    say(app, "帮我转500元给ACC-2001，密码123456")
    out = app.invoke(Command(resume="确认"), CONFIG, context=ALICE)
    task = out["task_id"]
    finance = [m for m in out["protocol"] if m.get("parent_task_id") == task]
    assert len(finance) == 4
    assert {m["task_id"] for m in finance} == {f"{task}.finance"}
    stages = [
        m["content"].get("stage")
        for m in out["protocol"]
        if isinstance(m["content"], dict) and m["task_id"] == task
    ]
    assert "handoff" in stages and "handback" in stages


def test_the_customer_service_agent_has_no_finance_tools(db):
    main = set(default_registry().names())
    finance = set(finance_registry().names())
    assert finance == {
        "verify_identity",
        "check_balance",
        "assess_transfer_risk",
        "execute_transfer",
        "approve_large_refund",
    }
    assert not main & finance


def test_replaying_a_transfer_does_not_move_money_twice(make_app, db):
    app = make_app()
    say(app, "帮我转500元给ACC-2001，密码123456")
    app.invoke(Command(resume="确认"), CONFIG, context=ALICE)
    after_once = balances(db)
    entries = time_travel.history(app, "t1")
    before_finance = next(e for e in reversed(entries) if e.next == ("finance",))
    time_travel.replay(app, "t1", before_finance.checkpoint_id, ALICE)
    if app.get_state(CONFIG).next:
        app.invoke(Command(resume="确认"), CONFIG, context=ALICE)
    assert balances(db) == after_once
    assert len(transfers(db)) == 1


def test_the_pin_is_never_stored(make_app, db):
    saver = InMemorySaver()
    app = make_app(checkpointer=saver)
    say(app, "帮我转500元给ACC-2001，密码135790")
    out = app.invoke(Command(resume="确认"), CONFIG, context=ALICE)
    stored = repr(saver.storage) + repr(saver.writes) + repr(saver.blobs)
    assert "135790" not in stored
    assert "135790" not in json.dumps(out["protocol"], ensure_ascii=False)
    assert out["slots"]["pin"].startswith("pii:")


def test_a_large_refund_is_handed_to_finance_and_comes_back(make_app, db):
    app = make_app()
    say(app, "我要退款 202506001")  # 129 yuan: above the customer-service limit
    out = app.invoke(Command(resume="确认"), CONFIG, context=ALICE)
    assert steps(out) == [("request_refund", "failed"), ("approve_large_refund", "success")]
    assert out["tool_results"][0]["data"]["handoff"] == "finance"
    assert "已转交财务处理：已批准" in out["messages"][-1].content
    refund = db.query("SELECT order_id, status FROM refunds")
    assert refund == [{"order_id": "202506001", "status": "approved"}]
    task = out["task_id"]
    linked = [m for m in out["protocol"] if m.get("parent_task_id") == task]
    assert linked and linked[0]["task_id"] == f"{task}.finance"


def test_a_small_refund_stays_with_customer_service(make_app, db):
    app = make_app()
    say(app, "我要退款 OD-20240618-002")  # 36 yuan
    out = app.invoke(Command(resume="确认"), CONFIG, context=ALICE)
    assert steps(out) == [("request_refund", "success")]
    assert db.query("SELECT status FROM refunds") == [{"status": "submitted"}]


def test_the_balance_is_the_callers_own_with_no_pin_asked(app, db):
    for number, asked in enumerate(("我的余额还有多少", "我卡上还剩几个钱")):
        out = say(app, asked, thread=f"zh-{number}")
        assert out["messages"][-1].content == "您的账户 ACC-1001 当前余额 5,000.00 元。"
    out = say(app, "what's my balance", thread="bob", context=BOB)
    assert out["messages"][-1].content == "Your account ACC-2001 holds 2,000.00 yuan."
    # naming another's account changes nothing: the tool takes no account at all
    out = say(app, "ACC-3001 的余额是多少", thread="t3")
    assert (
        "ACC-1001" in out["messages"][-1].content and "ACC-3001" not in out["messages"][-1].content
    )
    assert balances(db)["ACC-1001"] == 500_000  # read, never moved


def test_a_caller_with_no_account_is_told_so(app):
    carol = Context(user_id="u_10003", user_role="customer")
    out = say(app, "查一下余额", thread="carol", context=carol)
    assert out["messages"][-1].content == "您名下还没有账户。"


def test_six_digits_answering_the_amount_are_the_amount_not_a_new_pin(app, db):
    say(app, "给ACC-2001转账，密码123456")
    out = say(app, "100000")  # asked only for the amount: 100,000 yuan, the PIN kept
    # the PIN still verified, so the chain reached the balance check
    assert "余额不足" in out["messages"][-1].content
    assert balances(db)["ACC-1001"] == 500_000


def test_six_digits_answering_both_questions_are_the_pin(app):
    say(app, "给ACC-2001转账")
    out = say(app, "123456")
    assert out["messages"][-1].content.endswith("还需要：转账金额。")
    out = say(app, "200")
    assert "确认" in str(out["__interrupt__"][0].value)
