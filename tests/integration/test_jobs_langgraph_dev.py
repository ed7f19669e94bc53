"""Under ``langgraph dev``, a finished job starts a run on its thread (server API, no typing)."""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph_sdk import get_sync_client

from scenarios.sales.jobs import sales_job_tools
from tests.helpers import open_database
from tests.integration.test_langgraph_dev import dev_server  # noqa: F401  (the server fixture)
from tools.jobs import JobRunner, LangGraphRunNotifier, SQLiteJobStore

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_a_finished_job_starts_a_run_on_its_thread(dev_server: str, tmp_path: Path) -> None:  # noqa: F811
    client = get_sync_client(url=dev_server)
    context = {"user_id": "u_80001", "user_role": "analyst"}
    thread = client.threads.create()
    thread_id = thread["thread_id"]
    db = open_database(tmp_path / "business.db")
    runner = JobRunner(
        SQLiteJobStore(tmp_path / "jobs.db"),
        resources=db,
        notifiers=(LangGraphRunNotifier(url=dev_server, assistant_id="agent"),),
    )
    sales_job_tools(runner, tmp_path)
    created: list = []
    runner.notifiers.append(lambda job: created.append(job))
    job = runner.submit("export_sales", {"month": "2024-06"}, thread_id=thread_id, context=context)
    final = runner.wait(job.job_id, 30)
    runner.close()
    assert final.state == "succeeded" and created
    runs = client.runs.list(thread_id)
    assert len(runs) == 1, runs  # nobody typed: the job's completion started it
    run = runs[0]
    assert run["metadata"]["job_id"] == job.job_id
    client.runs.join(thread_id, run["run_id"])
    finished = client.runs.get(thread_id, run["run_id"])
    assert finished["status"] == "success", finished

    values = client.threads.get_state(thread_id)["values"]
    typed = [m for m in values.get("messages", []) if m.get("type") == "human"]
    assert typed == []  # the follow-up put no words in the user's mouth
    db.close()
