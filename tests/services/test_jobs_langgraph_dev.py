"""Under ``langgraph dev``, a finished job starts a run on its thread (server API, no typing)."""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph_sdk import get_sync_client

from jobs.notify import LangGraphRunNotifier
from jobs.runner import JobRunner
from jobs.store import Job, SQLiteJobStore
from scenarios.sales.jobs import sales_job_tools
from tests.helpers import open_database
from tests.services.langgraph_server import langgraph_dev
from tests.services.test_langgraph_dev import token_for

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_a_finished_job_starts_a_run_on_its_thread(tmp_path: Path) -> None:
    dev_dir = tmp_path / "dev"
    dev_dir.mkdir()
    with langgraph_dev(dev_dir) as url:
        token = token_for("u_80001", "analyst")
        client = get_sync_client(url=url, api_key=token)
        thread_id = client.threads.create()["thread_id"]
        db = open_database(tmp_path / "business.db")

        def as_owner(job: Job) -> dict[str, str]:
            return {"x-api-key": token_for(job.owner, job.context["user_role"])}

        runner = JobRunner(
            SQLiteJobStore(tmp_path / "jobs.db"),
            resources=db,
            notifiers=(LangGraphRunNotifier(url=url, assistant_id="agent", headers_for=as_owner),),
        )
        sales_job_tools(runner, tmp_path)
        job = runner.submit(
            "export_sales",
            {"month": "2024-06"},
            owner="u_80001",
            thread_id=thread_id,
            context={"user_id": "u_80001", "user_role": "analyst"},
        )
        final = runner.wait(job.job_id, 30)
        runner.close()
        assert final.state == "succeeded"
        runs = client.runs.list(thread_id)
        assert len(runs) == 1, runs  # nobody typed: the job's completion started it
        run = runs[0]
        assert run["metadata"]["job_id"] == job.job_id
        client.runs.join(thread_id, run["run_id"])
        assert client.runs.get(thread_id, run["run_id"])["status"] == "success"
        values = client.threads.get_state(thread_id)["values"]
        typed = [m for m in values.get("messages", []) if m.get("type") == "human"]
        assert typed == []  # the follow-up put no words in the user's mouth
        db.close()
