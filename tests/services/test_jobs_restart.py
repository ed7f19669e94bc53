"""A bulk notification killed mid-send (SIGKILL) and resumed by a new runner sends once each."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from jobs.runner import JobRunner
from jobs.store import ManualClock, SQLiteJobStore
from scenarios.delivery.jobs import bulk_notification_job
from tests.helpers import open_database

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


def test_killed_mid_job_then_resumed_sends_no_message_twice(tmp_path: Path) -> None:
    business = tmp_path / "business.db"
    jobs = tmp_path / "jobs.db"
    db = open_database(business)
    users = [f"u_2{i:04d}" for i in range(120)]
    with db.transaction() as conn:
        conn.executemany(
            "INSERT INTO users (user_id, display_name, role) VALUES (?, ?, 'customer')",
            [(u, f"客户{u}") for u in users],
        )
    job_id = "job-00000000000000ff"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.services.bulk_job_worker",
            str(business),
            str(jobs),
            job_id,
            "50",
            *users,
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        lines = []
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.strip())
            if line.startswith("IN_TXN"):
                break
        assert lines[-1] == f"IN_TXN {users[49]}", lines
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    # The dead process left the job running, 49 sends committed, the 50th rolled back.
    store = SQLiteJobStore(jobs)
    left = store.get(job_id)
    assert left is not None and left.state == "running" and left.attempts == 1
    assert left.done == 49
    sent = db.query("SELECT user_id FROM notifications WHERE content = '配送延误通知'")
    assert sorted(r["user_id"] for r in sent) == users[:49]

    # A new runner starts; once the dead runner's lease has run out it takes the job over.
    clock = ManualClock(t=left.lease_until - 1)
    runner = JobRunner(store, resources=db, clock=clock, lease_s=60)
    runner.register("send_bulk_notification", bulk_notification_job())
    assert runner.resume() == []  # the lease still holds: maybe that runner is alive
    clock.advance(2)
    assert runner.resume() == [job_id]
    final = runner.wait(job_id, 30)
    runner.close()

    assert final.state == "succeeded" and final.attempts == 2
    assert final.result["sent"] == 120
    assert final.result["sent_this_attempt"] == 71
    assert final.result["already_done"] == 49
    per_user = db.query(
        "SELECT user_id, COUNT(*) AS n FROM notifications WHERE content = '配送延误通知'"
        " GROUP BY user_id"
    )
    assert {r["user_id"] for r in per_user} == set(users)
    assert {r["n"] for r in per_user} == {1}
    store.close()
    db.close()
