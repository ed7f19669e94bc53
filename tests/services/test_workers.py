"""More than one embedded worker on one Redis: any worker continues any thread, one run per
thread at a time, a confirmation acted on once with a true answer on both sides, a killed
worker's thread continued by the other, and turns/s with one and two workers.

The two workers are real processes (``graph_worker.py``) sharing one redis-server and one
business database; they start once per module because a start costs tens of seconds here.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import time
from pathlib import Path

import pytest
from redis import Redis

from config.settings import Settings
from graph.run_lock import BUSY_TEXT, LockedGraph
from storage.db import Database
from tests.helpers import open_database
from tests.services.graph_worker import HANG_MARKER
from tests.services.redis_servers import RedisServer
from tests.services.workers import Worker

pytestmark = pytest.mark.integration

TRANSFER = "帮我转500元给ACC-2001，密码123456"
DONE = "已向李四（ACC-2001）转账 500.00 元"
NOTHING_TAKEN = "没有扣款"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("workers")
    server = RedisServer(root / "redis").start()
    open_database(root / "data" / "business.db").close()  # seeded once, before any worker
    env = {
        "REDIS_URL": server.url,
        "REACH_DATA_DIR": str(root / "data"),
        "REACH_AUTH_SECRET": "workers-test-secret-0123456789abcdef",
        "REACH_RUN_LOCK_WAIT_S": "15",
        "REACH_RUN_LOCK_TTL_S": "3",
    }
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        a, b = pool.map(lambda name: Worker(name, env), ["A", "B"])
    db = Database(root / "data" / "business.db")
    yield {"a": a, "b": b, "db": db, "redis": Redis.from_url(server.url), "env": env}
    for worker in (a, b):
        worker.stop()
    db.close()
    server.stop()


def balances(db: Database) -> dict[str, int]:
    rows = db.query("SELECT account_id, balance_cents FROM accounts")
    return {r["account_id"]: r["balance_cents"] for r in rows}


def transfers_to(db: Database, account: str) -> int:
    return db.query("SELECT COUNT(*) AS n FROM transfers WHERE to_account = ?", (account,))[0]["n"]


def both(first, second):
    """Run two calls at the same moment; return both answers."""
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        one, two = pool.submit(first), pool.submit(second)
        return one.result(timeout=120), two.result(timeout=120)


def test_turns_alternate_between_two_workers(stack):
    a, b, db = stack["a"], stack["b"], stack["db"]
    before = balances(db)
    first = a.say("alt", "我要转账")
    assert "还需要" in first["reply"] and not first["interrupted"]
    second = b.say("alt", "收款账户是ACC-2001，转500元")  # B knows what A asked
    assert "6 位支付密码" in second["reply"] and "收款账户" not in second["reply"]
    third = a.say("alt", "密码123456")
    assert third["interrupted"]  # the confirmation question, asked by A
    done = b.resume("alt", "确认")  # approved through B
    assert DONE in done["reply"]
    assert [tool for tool, _ in done["tools"]][-1] == "execute_transfer"
    after = balances(db)
    assert after["ACC-1001"] == before["ACC-1001"] - 50_000
    assert after["ACC-2001"] == before["ACC-2001"] + 50_000
    later = a.say("alt", "OD-20240618-001 到哪了")  # and the thread goes on on A
    assert "正在配送中" in later["reply"]


def test_two_locked_workers_resume_one_confirmation_at_once(stack):
    a, b, db = stack["a"], stack["b"], stack["db"]
    assert a.say("both-locked", TRANSFER)["interrupted"]
    before = balances(db)
    count = transfers_to(db, "ACC-2001")
    # The clearing step holds the winner inside the transfer for a second: the other run
    # arrives while it is in flight and must wait for the thread's lock.
    one, two = both(
        lambda: a.ask(
            {"op": "resume", "thread": "both-locked", "value": "确认", "clearing_delay": 1.0}
        ),
        lambda: b.ask(
            {"op": "resume", "thread": "both-locked", "value": "确认", "clearing_delay": 1.0}
        ),
    )
    assert transfers_to(db, "ACC-2001") == count + 1  # exactly one executed
    assert balances(db)["ACC-1001"] == before["ACC-1001"] - 50_000
    for answer in (one, two):  # both answers are true: done, or the done turn's own reply
        assert not answer["busy"]
        assert DONE in answer["reply"] and NOTHING_TAKEN not in answer["reply"]


def test_two_unlocked_runs_resume_one_confirmation_and_both_tell_the_truth(stack):
    """As on a server that does not serialize runs: only idempotency stands between them."""
    a, b, db = stack["a"], stack["b"], stack["db"]
    assert a.say("both-free", TRANSFER)["interrupted"]
    before = balances(db)
    count = transfers_to(db, "ACC-2001")
    one, two = both(
        lambda: a.ask(
            {
                "op": "resume",
                "thread": "both-free",
                "value": "确认",
                "lock": False,
                "clearing_delay": 1.5,
            }
        ),
        lambda: b.ask(
            {
                "op": "resume",
                "thread": "both-free",
                "value": "确认",
                "lock": False,
                "clearing_delay": 1.5,
            }
        ),
    )
    assert transfers_to(db, "ACC-2001") == count + 1  # the money moved once
    assert balances(db)["ACC-1001"] == before["ACC-1001"] - 50_000
    for answer in (one, two):  # the loser waited for the winner and answered with its outcome
        assert DONE in answer["reply"], answer
        assert NOTHING_TAKEN not in answer["reply"]


class NeverRun:
    """A graph that must not run; its state says the thread speaks English."""

    class Snapshot:
        values = {"language": "en"}

    def invoke(self, *_args, **_kwargs):
        raise AssertionError("the graph ran while another run held the thread")

    def get_state(self, _config):
        return self.Snapshot()


def test_a_busy_thread_answers_still_working_not_an_error(stack):
    """A run that cannot have the thread in time gets a structured busy answer."""
    redis = stack["redis"]
    redis.set("reach:runlock:{busy}", "someone-else", px=60_000)  # a long turn elsewhere
    locked = LockedGraph(NeverRun(), redis, settings=Settings(), wait_s=0.3)
    out = locked.invoke({"messages": []}, {"configurable": {"thread_id": "busy"}})
    assert out["busy"]["status"] == "busy" and out["busy"]["retry_after_s"] > 50
    assert out["messages"][-1].content == BUSY_TEXT["en"]
    assert redis.get("reach:runlock:{busy}") == b"someone-else"  # not ours: left alone


def test_turns_per_second_with_one_and_two_workers(stack, record_property):
    a, b = stack["a"], stack["b"]
    # the figure in docs/deployment.md: REACH_THROUGHPUT=full; the suite runs a shorter load
    full = os.environ.get("REACH_THROUGHPUT") == "full"
    threads, turns, rounds = (4, 10, 2) if full else (2, 4, 1)
    a.ask({"op": "bench", "prefix": "warm", "threads": 1, "turns": 3}, timeout=300)
    b.ask({"op": "bench", "prefix": "warm2", "threads": 1, "turns": 3}, timeout=300)
    figures = {}
    for round_ in range(rounds):
        started = time.perf_counter()
        one = a.ask(
            {"op": "bench", "prefix": f"one{round_}", "threads": 2 * threads, "turns": turns},
            timeout=600,
        )
        figures.setdefault("one", []).append(one["turns"] / (time.perf_counter() - started))
        started = time.perf_counter()
        a.send({"op": "bench", "prefix": f"twoA{round_}", "threads": threads, "turns": turns})
        b.send({"op": "bench", "prefix": f"twoB{round_}", "threads": threads, "turns": turns})
        done = a.next_line(600)["turns"] + b.next_line(600)["turns"]
        figures.setdefault("two", []).append(done / (time.perf_counter() - started))
    report = {k: [round(v, 1) for v in values] for k, values in figures.items()}
    report["cpus"] = os.cpu_count()
    record_property("turns_per_s", json.dumps(report))
    Path(os.environ.get("REACH_WORKERS_BENCH_OUT", "/tmp/reach-workers-bench.json")).write_text(
        json.dumps(report)
    )
    print("turns/s", report)
    assert all(v > 0 for values in figures.values() for v in values)


def test_a_worker_killed_mid_turn_leaves_the_thread_to_the_other(stack):
    a, b, db = stack["a"], stack["b"], stack["db"]
    assert "正在配送中" in a.say("kill", "OD-20240618-001 到哪了")["reply"]
    a.send({"op": "say", "thread": "kill", "text": f"{HANG_MARKER} OD-20240618-002 到哪了"})
    assert a.next_line(60) == {"event": "in_turn"}  # A holds the thread's lock, mid-turn
    a.kill()
    # B waits for the dead worker's lease to lapse (TTL 3 s, no one renews it), then runs.
    started = time.monotonic()
    out = b.say("kill", "OD-20240618-001 到哪了")
    assert not out["busy"] and "正在配送中" in out["reply"]
    assert time.monotonic() - started < 15
    again = b.say("kill", "我要转账")  # the thread carries on normally on B
    assert "还需要" in again["reply"]
    assert db.query_one("SELECT 1 AS ok")["ok"] == 1
