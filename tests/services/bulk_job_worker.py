"""A process that runs one bulk notification and stops dead inside a send (for SIGKILL tests).

Usage: python -m tests.services.bulk_job_worker BUSINESS_DB JOBS_DB JOB_ID STOP_AT USERS...
It prints ``IN_TXN <user>`` when it is inside the transaction of the STOP_AT-th send and
then blocks, so the test can kill it at exactly that point.
"""

from __future__ import annotations

import sys
import threading

from jobs.runner import JobRunner
from jobs.store import SQLiteJobStore
from scenarios.delivery.jobs import bulk_notification_job
from storage.db import Database


def main() -> None:
    business, jobs, job_id, stop_at, *users = sys.argv[1:]
    seen: list[str] = []

    def hang_inside(user_id: str) -> None:
        seen.append(user_id)
        if len(seen) == int(stop_at):
            print(f"IN_TXN {user_id}", flush=True)
            threading.Event().wait()

    runner = JobRunner(SQLiteJobStore(jobs), resources=Database(business), lease_s=60)
    runner.register("send_bulk_notification", bulk_notification_job(before_commit=hang_inside))
    runner.submit(
        "send_bulk_notification",
        {"user_ids": users, "content": "配送延误通知", "channel": "sms"},
        job_id=job_id,
    )
    print("STARTED", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
