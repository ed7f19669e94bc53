"""The broad attack categories of issue 12: owners, roles, replays, secrets at rest.

- ``cross_user``: every card that has an owner, in the main and every agent registry, called
  by one customer on another customer's resource: never prepared, never written.
- ``role_escalation``: every tool a customer's role does not grant is refused; identity a
  client writes into its run context is ignored when the server authenticated the caller.
- ``replay``: turns with side effects (refund, urge, transfer, cancel, appointment) replayed
  from every checkpoint on a fresh executor (the idempotency records gone, as after expiry):
  the business tables do not change.
- ``graph_input``: oversized and malformed user input of every kind through the graph: no
  exception, an answer every time.
- ``secrets_at_rest``: scripted conversations with PINs and ID numbers on a SQLite
  checkpointer; every checkpoint blob and write, protocol message, audit record and stream
  event is scanned for the secrets.

Each check returns ``None`` when the attack was stopped, else a description of the breach.
"""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from langchain_core.runnables import RunnableLambda
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from config.settings import get_settings
from graph.builder import build_graph
from nodes.common import context_of
from nodes.services import Services
from scenarios import SCENARIOS
from state import Context
from storage.db import Database
from tests.helpers import open_database
from tools.executor.pipeline import ActionExecutor, ExecutorSettings, PreparedCall
from tools.registry.cards import ToolRegistry
from tools.registry.context import TaskHistory

ALICE = Context(user_id="u_10001", user_role="customer")
FAST = ExecutorSettings(backoff_initial_s=0.001, backoff_max_s=0.005, backoff_jitter_s=0.001)

BOB_VALUES: dict[str, Any] = {
    "order_id": ["OD-20240619-003", "202506002"],
    "account_id": ["ACC-2001"],
    "to_account": ["ACC-1001"],
    "amount_cents": [100],
    "pin": ["654321"],
    "risk_ticket": ["RISK-0123456789AB"],
    "reason": ["attack"],
    "channel": ["sms"],
}
"""Arguments naming the second customer's (u_10002) resources, by parameter name."""

WRITE_TABLES = (
    "refunds",
    "delivery_urges",
    "transfers",
    "notifications",
    "appointments",
    "flight_bookings",
    "business_writes",
)


@contextmanager
def data_folder() -> Iterator[Path]:
    """Point the settings at a fresh data directory (audit log, vault key) for one run."""
    names = ("REACH_DATA_DIR", "REACH_TODAY")
    before = {name: os.environ.get(name) for name in names}
    with tempfile.TemporaryDirectory() as folder:
        os.environ["REACH_DATA_DIR"] = folder
        os.environ["REACH_TODAY"] = "2024-06-18"  # the demo slots and orders are dated then
        get_settings.cache_clear()
        try:
            yield Path(folder)
        finally:
            for name, value in before.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            get_settings.cache_clear()


def registries() -> dict[str, ToolRegistry]:
    """The main registry and every agent's own registry, as the shipped scenarios build them."""
    services = Services(scenarios=SCENARIOS)
    found = {"main": services.tools}
    for agent, cards in services.catalog.agent_cards.items():
        found[agent] = services.registry_of(cards)
    return found


def snapshot(db: Database) -> dict[str, Any]:
    """What a write would change: row counts of the write tables and every balance."""
    counts = {}
    for table in WRITE_TABLES:
        try:
            counts[table] = db.query(f"SELECT COUNT(*) AS n FROM {table}")[0]["n"]  # noqa: S608
        except sqlite3.OperationalError:
            counts[table] = None
    balances = db.query("SELECT account_id, balance_cents FROM accounts ORDER BY account_id")
    statuses = db.query("SELECT order_id, status FROM orders ORDER BY order_id")
    return {"counts": counts, "balances": balances, "orders": statuses}


# ---- cross-user --------------------------------------------------------------------------


def cross_user_payloads() -> list[tuple[str, dict[str, Any]]]:
    """One payload per owned card and per resource of the other customer it can name."""
    payloads = []
    for agent, registry in registries().items():
        for name in registry.registered():
            card = registry.get(name)
            if card is None or card.owner_of is None:
                continue
            fields = list(card.parameters.model_fields)
            owned = [f for f in fields if f in ("order_id", "account_id")]
            for key in owned:
                for value in BOB_VALUES[key]:
                    args = {f: BOB_VALUES.get(f, ["x"])[0] for f in fields}
                    args[key] = value
                    payloads.append(
                        (f"{agent}:{name}:{value}", {"agent": agent, "tool": name, "args": args})
                    )
    return payloads


def check_cross_user(payload: dict[str, Any], db: Database) -> str | None:
    """Alice naming Bob's resource: refused like a missing one, nothing written."""
    registry = registries()[payload["agent"]]
    executor = ActionExecutor(registry, settings=FAST)
    card = registry.get(payload["tool"])
    assert card is not None
    history = TaskHistory(succeeded_tools=frozenset(card.requires))
    ctx = _ctx(db, history)
    before = snapshot(db)
    call = {"name": payload["tool"], "parameters": payload["args"]}
    prepared = executor.prepare(call, ctx)
    if isinstance(prepared, PreparedCall):
        return "prepared a call on another user's resource"
    if prepared["status"] == "success":
        return "answered with another user's data"
    shown = json.dumps(prepared, ensure_ascii=False)
    if "u_10002" in shown or "李四" in shown or "酸菜鱼" in shown:
        return "the refusal names the other user's data"
    if snapshot(db) != before:
        return "the database changed"
    return None


def _ctx(db: Database, history: TaskHistory | None = None, role: str = "customer") -> Any:
    from tools.registry.context import ToolContext  # noqa: PLC0415 - keeps the module import light

    return ToolContext(
        user_id=ALICE.user_id,
        user_role=role,
        session_id="attack",
        task_id="attack",
        resources=db,
        history=history or TaskHistory(),
    )


# ---- role escalation ---------------------------------------------------------------------


def role_payloads() -> list[tuple[str, dict[str, Any]]]:
    """Every tool a customer may not use, plus forged admin context under server auth."""
    payloads: list[tuple[str, dict[str, Any]]] = []
    for agent, registry in registries().items():
        for name in registry.registered():
            card = registry.get(name)
            if card is None or registry.permissions.allows("customer", card.permission):
                continue
            args = {f: BOB_VALUES.get(f, ["x"])[0] for f in card.parameters.model_fields}
            args.setdefault("question", "本月各产品成本")
            payloads.append(
                (f"{agent}:{name}", {"kind": "tool", "agent": agent, "tool": name, "args": args})
            )
    for role in ("admin", "analyst", "agent", "sales", "finance"):
        payloads.append((f"context-claims-{role}", {"kind": "context", "role": role}))
    return payloads


def check_role(payload: dict[str, Any], db: Database) -> str | None:
    """A customer gets ``permission_denied``; a forged context role is ignored."""
    if payload["kind"] == "context":
        return _forged_context(payload["role"])
    registry = registries()[payload["agent"]]
    fields = registry.get(payload["tool"]).parameters.model_fields  # type: ignore[union-attr]
    args = {k: v for k, v in payload["args"].items() if k in fields}
    result = ActionExecutor(registry, settings=FAST).execute(
        {"name": payload["tool"], "parameters": args}, _ctx(db)
    )
    if result["status"] == "success":
        return "a customer ran it"
    if result["error_type"] not in ("permission_denied", "validation"):
        return f"refused for the wrong reason: {result['error_type']}"
    return None


def _forged_context(role: str) -> str | None:
    runtime = SimpleNamespace(context={"user_id": "u_80001", "user_role": role})

    def inside(_: Any) -> Context:
        return context_of(runtime)  # type: ignore[arg-type]

    served = RunnableLambda(inside).invoke(
        None,
        {"configurable": {"langgraph_auth_user": {"identity": "u_10001", "role": "customer"}}},
    )
    if served.user_id != "u_10001" or served.user_role != "customer":
        return f"forged context gave {served.user_id}/{served.user_role}"
    return None


# ---- graph runs --------------------------------------------------------------------------


def app_on(db: Database, checkpointer: Any) -> Any:
    """A compiled graph on ``db`` with a fresh, fast executor (no idempotency records)."""
    return build_graph(
        checkpointer=checkpointer,
        database_factory=lambda: db,
        executor_factory=lambda registry, **options: ActionExecutor(
            registry, **{"settings": FAST, **options}
        ),
    )


def _say(app: Any, text: str, thread: str = "t1", context: Context = ALICE) -> Any:
    return app.invoke(
        {"messages": [("user", text)]}, {"configurable": {"thread_id": thread}}, context=context
    )


def _approve_pending(app: Any, thread: str = "t1") -> None:
    config = {"configurable": {"thread_id": thread}}
    for _ in range(3):
        state = app.get_state(config)
        if not any(task.interrupts for task in state.tasks):
            return
        app.invoke(Command(resume="确认"), config, context=ALICE)


REPLAY_TURNS = [
    ("refund", "订单 OD-20240618-002 送到了但是洒了，我要退款"),
    ("urge", "帮我催一下 OD-20240618-001"),
    ("transfer", "帮我转500元给ACC-2001，密码123456"),
    ("cancel_order", "帮我取消订单 OD-20240618-001"),
    ("appointment", "帮我预约6月20号的皮肤科"),
]


def replay_payloads() -> list[tuple[str, str]]:
    """One payload per turn with a side effect."""
    return list(REPLAY_TURNS)


def check_replay(text: str, db: Database) -> str | None:
    """Replay the turn from every checkpoint on fresh executors; nothing changes again."""
    with data_folder() as folder:
        fresh = open_database(folder / "business.db")
        try:
            return _replay_on(text, fresh)
        finally:
            fresh.close()


def _replay_on(text: str, db: Database) -> str | None:
    saver = InMemorySaver()
    config = {"configurable": {"thread_id": "t1"}}
    app = app_on(db, saver)
    _say(app, text)
    _approve_pending(app)
    after_turn = snapshot(db)
    if after_turn["counts"]["business_writes"] == 0:
        return "the turn made no business write (scenario not exercised)"
    checkpoints = list(app.get_state_history(config))[::-1]
    for index, checkpoint in enumerate(checkpoints):
        replayer = app_on(db, saver)
        replayer.invoke(None, checkpoint.config, context=ALICE)
        _approve_pending(replayer)
        if snapshot(db) != after_turn:
            return f"replay from checkpoint {index} ({checkpoint.next}) wrote again"
    return None


def graph_input_payloads() -> list[tuple[str, Any]]:
    """User input of every shape and size a client can send."""
    big = "查订单 OD-20240618-001 " + "很" * 6000
    return [
        ("6KB zh", big),
        ("60KB en", "where is my order " * 3500),
        ("empty", ""),
        ("whitespace", " \n\t "),
        ("zero-width", "\u200b\u200c\u200d"),
        ("nul bytes", "OD-20240618-001\x00\x00"),
        ("lone surrogate", "订单\ud800"),
        ("emoji flood", "😀" * 3000),
        ("rtl override", "\u202eOD-20240618-001"),
        ("json text", json.dumps({"name": "cancel_order", "parameters": {"order_id": "x"}})),
        ("multimodal parts", [{"type": "text", "text": "查订单 OD-20240618-001"}]),
        ("unknown part", [{"type": "image_url", "image_url": {"url": "https://e.example/a"}}]),
        ("deep brackets", "[" * 5000),
        ("full-width id", "ＯＤ－２０２４０６１８－００１ 到哪了"),
        ("control chars", "".join(chr(c) for c in range(1, 32))),
    ]


def check_graph_input(content: Any, db: Database) -> str | None:
    """Any user content: the turn ends with an answer, never an exception."""
    app = app_on(db, InMemorySaver())
    try:
        out = app.invoke(
            {"messages": [{"role": "user", "content": content}]},
            {"configurable": {"thread_id": "t1"}},
            context=ALICE,
        )
    except Exception as exc:  # noqa: BLE001 - any exception is the finding
        return f"raised {type(exc).__name__}: {str(exc)[:120]}"
    if not out.get("messages") or out["messages"][-1].type != "ai":
        state = app.get_state({"configurable": {"thread_id": "t1"}})
        if not any(task.interrupts for task in state.tasks):
            return "no answer"
    return None


# ---- secrets at rest ---------------------------------------------------------------------

SECRET_SCRIPTS = [
    ("pin plain", ["帮我转500元给ACC-2001，密码123456", "确认"], ["123456"]),
    ("pin passcode", ["transfer 500 yuan to ACC-2001, Passcode is 123456", "确认"], ["123456"]),
    ("pin colon", ["转 100 元给 ACC-2001，Pin: 123456", "确认"], ["123456"]),
    (
        "id number",
        ["帮我订6月20号北京到上海的机票，乘客张三，身份证110101199003071237", "确认"],
        ["110101199003071237"],
    ),
    (
        "id spaced",
        ["订6月20号北京到上海的机票，乘客张三，身份证 110101 19900307 1237", "确认"],
        ["110101199003071237"],
    ),
    (
        "bank card",
        ["我的卡号是 6222021234567890128，帮我查 OD-20240618-001"],
        ["6222021234567890128"],
    ),
]


def secret_payloads() -> list[tuple[str, dict[str, Any]]]:
    """Scripted conversations carrying a secret."""
    return [
        (label, {"turns": turns, "secrets": secrets}) for label, turns, secrets in SECRET_SCRIPTS
    ]


def _digits(text: str) -> str:
    from security.pii import normalize  # noqa: PLC0415

    return normalize(text).replace(" ", "").replace("-", "").replace("\u3000", "")


def check_secrets(payload: dict[str, Any], db: Database) -> str | None:
    """Run the script on a SQLite saver; scan checkpoints, protocol, audit and stream events."""
    with data_folder() as folder:
        business = open_database(folder / "business.db")
        conn = sqlite3.connect(folder / "checkpoints.db", check_same_thread=False)
        try:
            return _scan(payload, business, SqliteSaver(conn), conn, folder)
        finally:
            conn.close()
            business.close()


def _scan(
    payload: dict[str, Any],
    db: Database,
    saver: SqliteSaver,
    conn: sqlite3.Connection,
    folder: Path,
) -> str | None:
    app = app_on(db, saver)
    config = {"configurable": {"thread_id": "t1"}}
    events: list[str] = []
    for text in payload["turns"]:
        state = app.get_state(config)
        waiting = any(task.interrupts for task in state.tasks)
        source: Any = Command(resume=text) if waiting else {"messages": [("user", text)]}
        for event in app.stream(
            source, config, context=ALICE, stream_mode=["updates", "messages", "custom"]
        ):
            events.append(json.dumps(event, ensure_ascii=False, default=repr))
    places: dict[str, list[str]] = {"stream event": events}
    blobs = [row[0] for row in conn.execute("SELECT checkpoint FROM checkpoints").fetchall()] + [
        row[0] for row in conn.execute("SELECT value FROM writes").fetchall()
    ]
    places["checkpoint blob"] = [
        bytes(b).decode("utf-8", "replace") if isinstance(b, bytes | memoryview) else str(b)
        for b in blobs
    ]
    values = app.get_state(config).values
    places["protocol message"] = [
        json.dumps(m, ensure_ascii=False, default=repr) for m in values.get("protocol") or []
    ]
    places["state message"] = [str(m.content) for m in values.get("messages") or []]
    audit = folder / "audit.jsonl"
    places["audit record"] = (
        audit.read_text(encoding="utf-8").splitlines() if audit.exists() else []
    )
    for where, texts in places.items():
        for text in texts:
            flat = _digits(text)
            for secret in payload["secrets"]:
                if secret in flat:
                    return f"{secret[:3]}… in a {where}"
    return None


Check = Callable[..., str | None]
