"""Served on Aegra: two replicas on one PostgreSQL and one Redis serve our graph and auth.

A conversation hops between replicas; a transfer interrupted on A is approved through B and
made once; and both replicas resuming one confirmation at once (Aegra does not serialize
runs on a thread) move the money once and both tell the truth. No ID number or PIN reaches
Aegra's PostgreSQL tables (runs, checkpoints, writes), though Aegra's own checkpointer stores
them: ``graph/http_app.py``'s middleware masks them at intake. Aegra serves ``langgraph.json``
unchanged. Skipped with the reason when PostgreSQL or Aegra cannot be had.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_sync_client

from config.settings import Settings
from security.tokens import issue_token
from storage.db import Database
from tests.helpers import open_database
from tests.services.aegra_servers import Postgres, Unavailable, aegra_replicas
from tests.services.intake_probe import Secrets, converse, served_record
from tests.services.redis_servers import RedisServer

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SECRET = "aegra-test-secret-0123456789abcdef-XYZ"
VAULT = "aegra-vault-secret-0123456789abcdef-XYZ"
DONE = "已向李四（ACC-2001）转账 500.00 元"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("aegra")
    try:
        postgres = Postgres(root / "pg").start()
    except Unavailable as exc:
        pytest.skip(str(exc))
    redis = RedisServer(root / "redis").start()
    data = root / "data"
    open_database(data / "business.db").close()
    env = {
        "DATABASE_URL": postgres.url,
        "REDIS_URL": redis.url,
        "REACH_DATA_DIR": str(data),
        "REACH_AUTH_SECRET": SECRET,
        "REACH_VAULT_SECRET": VAULT,
        "REACH_TODAY": "2024-06-18",  # the seeded flights' week
    }
    try:
        with aegra_replicas(root, env) as urls:
            yield {
                "urls": urls,
                "db": Database(data / "business.db"),
                "postgres": postgres,
                "root": root,
            }
    except Unavailable as exc:
        pytest.skip(str(exc))
    finally:
        redis.stop()
        postgres.stop()


def clients(served: dict[str, Any], user: str = "u_10001") -> tuple[Any, Any]:
    token = issue_token(user, "customer", 600, settings=Settings(REACH_AUTH_SECRET=SECRET))
    a, b = served["urls"]
    return get_sync_client(url=a, api_key=token), get_sync_client(url=b, api_key=token)


def say(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


def reply(out: dict[str, Any]) -> str:
    messages = [m for m in out.get("messages") or [] if m.get("type") == "ai"]
    return str(messages[-1]["content"]) if messages else ""


def moved(db: Database) -> int:
    return db.query("SELECT COUNT(*) AS n FROM transfers WHERE to_account = 'ACC-2001'")[0]["n"]


def balance(db: Database, account: str) -> int:
    row = db.query_one("SELECT balance_cents FROM accounts WHERE account_id = ?", (account,))
    assert row is not None
    return int(row["balance_cents"])


def test_a_conversation_hops_between_replicas_and_a_transfer_is_made_once(served):
    a, b = clients(served)
    db = served["db"]
    thread = a.threads.create()["thread_id"]
    first = a.runs.wait(thread, "agent", input=say("OD-20240618-001 到哪了"))
    assert "正在配送中" in reply(first)
    before, count = balance(db, "ACC-1001"), moved(db)
    asked = b.runs.wait(thread, "agent", input=say("帮我转500元给ACC-2001，密码123456"))
    assert asked.get("__interrupt__"), asked  # the confirmation, asked on B
    done = a.runs.wait(thread, "agent", command={"resume": "确认"})  # approved through A
    assert DONE in reply(done)
    assert moved(db) == count + 1 and balance(db, "ACC-1001") == before - 50_000
    again = b.runs.wait(thread, "agent", input=say("OD-20240618-001 到哪了"))
    assert "正在配送中" in reply(again)  # the thread goes on, on B


def test_a_refund_interrupted_on_a_and_approved_through_b_is_made_once(served):
    a, b = clients(served)
    db = served["db"]
    thread = a.threads.create()["thread_id"]
    asked = a.runs.wait(thread, "agent", input=say("订单 OD-20240618-002 送到了但是洒了，我要退款"))
    assert asked.get("__interrupt__"), asked
    assert db.query("SELECT COUNT(*) AS n FROM refunds")[0]["n"] == 0  # not before approval
    b.runs.wait(thread, "agent", command={"resume": "确认退款"})
    rows = db.query("SELECT order_id, user_id FROM refunds")
    assert rows == [{"order_id": "OD-20240618-002", "user_id": "u_10001"}]


def resume(client: Any, thread: str) -> dict[str, Any] | str:
    """Resume the thread's confirmation; Aegra's refusal (an HTTP error) comes back as text."""
    try:
        out: dict[str, Any] = client.runs.wait(thread, "agent", command={"resume": "确认"})
    except httpx.HTTPStatusError as error:
        return f"{error.response.status_code} {error.response.text}"
    return out


def test_both_replicas_resume_one_confirmation_at_once_and_both_tell_the_truth(served):
    """Both resumes are sent at once. Aegra 0.11 refuses a resume once the thread is no longer
    interrupted (400, 'Cannot resume'; 0.6.0 ran both), so the second may be refused, or
    both get in when each read the status before either run began: either way the money
    moves once and no answer says that nothing was taken."""
    a, b = clients(served)
    db = served["db"]
    thread = a.threads.create()["thread_id"]
    asked = a.runs.wait(thread, "agent", input=say("帮我转500元给ACC-2001，密码123456"))
    assert asked.get("__interrupt__"), asked
    before, count = balance(db, "ACC-1001"), moved(db)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        outcomes = list(pool.map(lambda client: resume(client, thread), (a, b)))
    assert moved(db) == count + 1 and balance(db, "ACC-1001") == before - 50_000
    answers = [out for out in outcomes if not isinstance(out, str)]
    refused = [out for out in outcomes if isinstance(out, str)]
    print("concurrent answers:", [reply(out) for out in answers], "refused:", refused)
    assert answers, refused  # at least one resume ran
    for text in refused:
        assert text.startswith("400") and "Cannot resume" in text, text
    for out in answers:
        text = reply(out)
        assert "没有扣款" not in text, text  # never "nothing was taken" while money moved
        assert DONE in text or "正在处理中" in text, text


def test_identity_comes_from_the_token_even_through_runs_wait(served):
    """Aegra 0.11 runs the create_run handler on runs.wait too (0.6.0 skipped it), and
    merges the context it returns; either way the graph ignores a client-written identity
    because the server put the token's user in the config."""
    a, _ = clients(served, user="u_10001")
    thread = a.threads.create()["thread_id"]
    out = a.runs.wait(
        thread,
        "agent",
        input=say("帮我查 OD-20240619-003"),  # Bob's order
        context={"user_id": "u_10002", "user_role": "customer"},  # a claim to be Bob
    )
    assert "没有找到" in reply(out), reply(out)


def test_no_id_number_or_pin_reaches_aegras_tables(served):
    """Aegra's own PostgreSQL checkpointer and run table bypass our masking serializer, and
    its ``create_run`` handler gets a copy of the request (a changed ``input`` is dropped):
    the ``http.app`` middleware is what keeps a typed ID number and PIN out of every table."""
    a, b = clients(served)
    secrets = Secrets.fresh()
    threads = converse(a, b, secrets)
    record = served_record(b, threads)
    assert "pii:" in record  # the tokens are what Aegra kept
    assert secrets.found_in_text(record) == []
    dump = served["postgres"].dump()
    assert b"checkpoint" in dump  # the dump holds Aegra's tables
    assert secrets.found_in_bytes(dump) == []
    typed = "密码123456".encode()  # the seed PIN as typed: this database is fresh
    assert typed not in dump and typed.hex().encode() not in dump
    logs = b"".join(path.read_bytes() for path in served["root"].glob("aegra-*.log"))
    assert logs and secrets.found_in_bytes(logs) == [] and typed not in logs


def test_the_project_http_app_is_served_too(served):
    """``langgraph.json``'s ``http.app`` loads on Aegra (a FastAPI app): its metrics answer."""
    for url in served["urls"]:
        response = httpx.get(f"{url}/reach/metrics", timeout=10)
        assert response.status_code == 200
        assert "text/plain" in response.headers["content-type"]


def test_turns_per_second_through_one_and_two_replicas(served, record_property):
    """The same workload through replica A alone, then spread over A and B (a figure, not a
    target: the report goes to ``REACH_AEGRA_BENCH_OUT`` and ``docs/deployment.md``)."""
    a, b = clients(served)
    # the figure in docs/deployment.md: REACH_THROUGHPUT=full (`make aegra`); the suite
    # checks every answer of a shorter run through one replica and through both
    full = os.environ.get("REACH_THROUGHPUT") == "full"
    clients_n, turns, rounds = (8, 8, 2) if full else (4, 3, 1)

    def conversation(client: Any) -> int:
        thread = client.threads.create()["thread_id"]
        for _ in range(turns):
            out = client.runs.wait(thread, "agent", input=say("OD-20240618-001 到哪了"))
            assert "正在配送中" in reply(out)
        return turns

    conversation(a), conversation(b)  # warm both replicas
    figures: dict[str, list[float]] = {}
    for _round in range(rounds):
        for name, pool_clients in (("one", [a] * clients_n), ("two", [a, b] * (clients_n // 2))):
            started = time.perf_counter()
            with concurrent.futures.ThreadPoolExecutor(clients_n) as pool:
                done = sum(pool.map(conversation, pool_clients))
            figures.setdefault(name, []).append(done / (time.perf_counter() - started))
    report: dict[str, Any] = {k: [round(v, 1) for v in values] for k, values in figures.items()}
    report["cpus"] = os.cpu_count()
    report["load_avg"] = [round(x, 2) for x in os.getloadavg()]
    record_property("turns_per_s", json.dumps(report))
    out = os.environ.get("REACH_AEGRA_BENCH_OUT", "/tmp/reach-aegra-bench.json")
    Path(out).write_text(json.dumps(report))
    print("turns/s", report)
    assert all(v > 0 for values in figures.values() for v in values)
