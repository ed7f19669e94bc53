"""A message masked at intake still does its task: the graph reveals tokens to extract slots,
keeps the very token as the slot, and nothing it stores holds the raw value."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.types import Command

from graph.checkpoint import sqlite_checkpointer
from graph.checkpoint.compress import protect
from security.intake import TOKEN, tokenize_text
from security.vault import IdentityVault
from tests.conftest import ALICE, BOB, say
from tests.helpers import set_env

pytestmark = pytest.mark.integration

CONFIG = {"configurable": {"thread_id": "t1"}}
VALID_ID = "110101199001011237"


def stored_text(app: Any, config: dict[str, Any] = CONFIG) -> str:
    """Everything the checkpointer holds for the thread, every checkpoint, as text."""
    return "\n".join(repr(snapshot) for snapshot in app.get_state_history(config))


def streamed(app: Any, value: Any, context: Any = ALICE) -> tuple[str, dict[str, Any]]:
    """Run one turn; return every state and update it produced, unserialized, as text.

    That is what a server's own checkpointer is handed (ours masks on the way to disk, so
    the stored history alone would not tell), and the turn's last state.
    """
    seen: list[str] = []
    last: dict[str, Any] = {}
    for mode, chunk in app.stream(
        value, CONFIG, context=context, stream_mode=["values", "updates"]
    ):
        seen.append(repr(chunk))
        if mode == "values":
            last = chunk
    return "\n".join(seen), last


def balance(db: Any, account: str) -> int:
    row = db.query_one("SELECT balance_cents FROM accounts WHERE account_id = ?", (account,))
    return int(row["balance_cents"])


def test_a_transfer_with_a_tokenized_pin_completes_and_keeps_the_token(make_app, db):
    app = make_app(checkpointer=InMemorySaver())
    message = tokenize_text("帮我转500元给ACC-2001，密码123456", ALICE.user_id, IdentityVault(db))
    token = TOKEN.search(message)
    assert token is not None and "123456" not in message
    before = balance(db, "ACC-1001")
    asked, _ = streamed(app, {"messages": [("user", message)]})
    assert app.get_state(CONFIG).values["slots"]["pin"] == token.group(0)  # the same token
    done, out = streamed(app, Command(resume="确认"))
    assert [r["status"] for r in out["tool_results"]] == ["success"] * 4
    assert "已向李四（ACC-2001）转账 500.00 元" in out["messages"][-1].content
    assert balance(db, "ACC-1001") == before - 50_000
    assert "123456" not in asked + done + stored_text(app)


def test_the_raw_pin_would_reach_the_states_a_server_stores(make_app):
    """The check above has teeth: without intake the raw PIN is in what the graph hands on."""
    asked, _ = streamed(make_app(), {"messages": [("user", "帮我转500元给ACC-2001，密码123456")]})
    assert "123456" in asked


def test_a_wrong_pin_behind_a_token_is_still_a_wrong_pin(make_app, db):
    app = make_app()
    message = tokenize_text("转 100 元给 ACC-2001，密码 111111", ALICE.user_id, IdentityVault(db))
    out = say(app, message)
    assert [(r["tool"], r["status"]) for r in out["tool_results"]] == [
        ("verify_identity", "failed")
    ]
    assert "支付密码不正确" in out["messages"][-1].content


def test_someone_elses_token_reveals_nothing(make_app, db):
    """Bob pastes Alice's PIN token: it is not his, so no PIN is taken from it."""
    app = make_app()
    alices = tokenize_text("密码123456", ALICE.user_id, IdentityVault(db))
    seen, out = streamed(app, {"messages": [("user", f"帮我转500元给ACC-2001，{alices}")]}, BOB)
    assert "pin" in out["missing_slots"], out["missing_slots"]
    assert "123456" not in seen


def test_a_flight_booked_with_a_tokenized_id_number(make_app, db, monkeypatch):
    set_env(monkeypatch, "REACH_TODAY", "2024-06-18")
    app = make_app(checkpointer=InMemorySaver())
    text = (
        f"帮我订一张2024-06-20从上海去北京的机票，乘客张三，身份证号 {VALID_ID[:6]} {VALID_ID[6:]}"
    )
    message = tokenize_text(text, ALICE.user_id, IdentityVault(db))
    assert VALID_ID[:6] + " " not in message
    asked, _ = streamed(app, {"messages": [("user", message)]})
    payload = app.get_state(CONFIG).tasks[0].interrupts[0].value
    assert payload["actions"][0]["arguments"]["passenger_id"] == "110101********1237"
    done, out = streamed(app, Command(resume="确认"))
    assert "FL-20240620001" in out["messages"][-1].content
    rows = db.query("SELECT passenger_masked FROM flight_bookings")
    assert rows == [{"passenger_masked": "110101********1237"}]
    assert VALID_ID not in asked + done + stored_text(app)


def test_an_id_number_corrected_at_the_confirmation_is_revealed_and_revaulted(
    make_app, db, monkeypatch
):
    """A resume masked at intake ("不对，身份证号是 pii:…") still corrects the pending booking."""
    set_env(monkeypatch, "REACH_TODAY", "2024-06-18")
    app = make_app(checkpointer=InMemorySaver())
    vault = IdentityVault(db)
    other = "110101198001011232"
    first = f"帮我订一张2024-06-20从上海去北京的机票，乘客张三，身份证号{VALID_ID}"
    streamed(app, {"messages": [("user", tokenize_text(first, ALICE.user_id, vault))]})
    correction = tokenize_text(f"不对，身份证号是 {other}", ALICE.user_id, vault)
    seen, revised = streamed(app, Command(resume=correction))
    payload = app.get_state(CONFIG).tasks[0].interrupts[0].value
    assert payload["actions"][0]["arguments"]["passenger_id"] == "110101********1232"
    assert revised["slots"]["passenger_id"] == vault.token_for(ALICE.user_id, other)
    assert other not in seen and VALID_ID not in seen


def test_an_id_number_given_alone_as_the_missing_answer_fills_the_slot(make_app, db, monkeypatch):
    """The bare token that replaced a bare ID number still answers "乘客身份证号?"."""
    set_env(monkeypatch, "REACH_TODAY", "2024-06-18")
    app = make_app()
    first = say(app, "帮我订一张2024-06-20从上海去北京的机票，乘客张三")
    assert first["missing_slots"] == ["passenger_id"]
    answer = tokenize_text(VALID_ID, ALICE.user_id, IdentityVault(db))
    assert TOKEN.fullmatch(answer)
    say(app, answer)
    payload = app.get_state(CONFIG).tasks[0].interrupts[0].value
    assert payload["actions"][0]["arguments"]["passenger_id"] == "110101********1237"


def test_a_run_cut_after_intent_resumes_with_the_pin_from_a_token(make_app, db, tmp_path):
    """Embedded use has no intake middleware: the intent node swaps the PIN for a token.

    The input checkpoint holds the PIN masked, so before this a process killed right after
    the intent node came back without the PIN and asked for it again (``make crash``).
    """
    saver = sqlite_checkpointer(tmp_path / "checkpoints.db")
    cut = make_app(checkpointer=saver, interrupt_after=["intent"])
    say(cut, "帮我转500元给ACC-2001，密码123456")
    kept = cut.get_state(CONFIG).values["messages"][-1].content
    assert TOKEN.search(kept) and "123456" not in kept
    before = balance(db, "ACC-1001")
    again = make_app(checkpointer=saver)  # a new life of the process, same saver
    again.invoke(None, CONFIG, context=ALICE)  # picks the run up where it stopped
    assert any(task.interrupts for task in again.get_state(CONFIG).tasks)  # the confirmation
    again.invoke(Command(resume="确认"), CONFIG, context=ALICE)
    assert balance(db, "ACC-1001") == before - 50_000
    assert "123456" not in stored_text(again)


def stored_bytes(path: Any) -> bytes:
    """Every checkpoint and write the SQLite file holds, decompressed, as one byte string."""
    serde = protect(JsonPlusSerializer(), compress=True)
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT type, checkpoint FROM checkpoints").fetchall()
    rows += conn.execute("SELECT type, value FROM writes").fetchall()
    conn.close()
    return b"\n".join(repr(serde.loads_typed((kind, blob))).encode() for kind, blob in rows)


def test_a_transfer_answered_slot_by_slot_with_a_bare_pin_keeps_no_pin(make_app, db, tmp_path):
    """ "200" answers the amount, "123456" alone the PIN; the PIN is vaulted, never stored."""
    path = tmp_path / "checkpoints.db"
    app = make_app(checkpointer=sqlite_checkpointer(path))
    before = balance(db, "ACC-1001")
    say(app, "我要转账给ACC-2001")
    say(app, "200")
    values = app.get_state(CONFIG).values
    assert values["slots"]["amount_cents"] == 20_000 and values["missing_slots"] == ["pin"]
    out = say(app, "123456")
    assert "200.00 元" in out["__interrupt__"][0].value["question"]
    assert TOKEN.fullmatch(app.get_state(CONFIG).values["slots"]["pin"])
    app.invoke(Command(resume="确认"), CONFIG, context=ALICE)
    assert balance(db, "ACC-1001") == before - 20_000
    assert b"123456" not in stored_bytes(path)
    assert "123456" not in stored_text(app)


def test_a_bare_pin_is_vaulted_at_intake(db):
    message = tokenize_text("１２３ ４５６", ALICE.user_id, IdentityVault(db))
    assert TOKEN.fullmatch(message)
    assert IdentityVault(db).reveal(ALICE.user_id, message) == "123456"
    kept = "订单 123456 的事"  # six digits inside a sentence are no answer to a PIN question
    assert tokenize_text(kept, ALICE.user_id, IdentityVault(db)) == kept
