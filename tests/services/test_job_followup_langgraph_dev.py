"""Under ``langgraph dev``: a job started in a conversation reports back on its own.

The server process builds its job runner on the first job call; with ``REACH_LANGGRAPH_URL``
pointing at the server itself, the runner's ``LangGraphRunNotifier`` starts a run on the
thread (as the job's owner, ``multitask_strategy="enqueue"``) whose only input is
``job_event``. The graph answers it without touching the topic the user moved on to.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from langgraph_sdk import get_sync_client

from config.settings import Settings
from security.tokens import issue_token
from tests.services import langgraph_server
from tests.services.langgraph_server import TEST_AUTH_SECRET, langgraph_dev
from tests.services.redis_servers import free_port

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_the_jobs_end_reaches_the_thread_as_a_run_and_keeps_the_topic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = free_port()
    monkeypatch.setattr(langgraph_server, "free_port", lambda: port)
    env = {"REACH_LANGGRAPH_URL": f"http://127.0.0.1:{port}", "REACH_TODAY": "2024-07-15"}
    with langgraph_dev(tmp_path / "dev", **env) as url:
        token = issue_token(
            "u_80001", "analyst", 600, settings=Settings(REACH_AUTH_SECRET=TEST_AUTH_SECRET)
        )
        client = get_sync_client(url=url, api_key=token)
        thread = client.threads.create()["thread_id"]

        def say(text: str) -> dict:
            return client.runs.wait(
                thread, "agent", input={"messages": [{"role": "user", "content": text}]}
            )

        started = say("导出上个月的销售报表")
        assert "已开始，完成后通知您" in started["messages"][-1]["content"]
        job_id = started["tool_results"][-1]["data"]["job_id"]
        weather = say("明天天气怎么样")
        assert weather["missing_slots"] == ["city"]

        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # polling a real server, not timing the test
            runs = client.runs.list(thread)
            from_job = [r for r in runs if (r.get("metadata") or {}).get("job_id") == job_id]
            if from_job and from_job[0]["status"] in ("success", "error"):
                break
            time.sleep(0.1)
        assert len(from_job) == 1 and from_job[0]["status"] == "success", runs

        values = client.threads.get_state(thread)["values"]
        assert values["intent"] == "QUERY_WEATHER" and values["missing_slots"] == ["city"]
        typed = [m["content"] for m in values["messages"] if m["type"] == "human"]
        assert typed == ["导出上个月的销售报表", "明天天气怎么样"]  # nobody typed for the job
        told = [m["content"] for m in values["messages"] if job_id in str(m["content"])]
        assert any("后台任务" in t and ".csv" in t for t in told), told
