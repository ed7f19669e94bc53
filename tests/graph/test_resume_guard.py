"""A resume the graph cannot read is a typed, clear error: nothing runs, the question waits."""

from __future__ import annotations

import asyncio
import json

import pytest
from langgraph.types import Command
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from graph.resume import CODE, ResumeCheckMiddleware, UnreadableResume
from tests.conftest import ALICE, say

CONFIG = {"configurable": {"thread_id": "t1"}}
UNREADABLE = [None, [], [{"type": "approve"}], b"yes", 5, 1.5, True, ("确认",)]


def refunds(db) -> int:
    return db.query("SELECT COUNT(*) AS n FROM refunds")[0]["n"]


@pytest.mark.parametrize("value", UNREADABLE, ids=repr)
def test_an_unreadable_resume_is_refused_and_the_confirmation_still_waits(make_app, db, value):
    app = make_app()
    say(app, "我要退款 OD-20240618-002")
    before = app.get_state(CONFIG)
    with pytest.raises(UnreadableResume) as raised:
        app.invoke(Command(resume=value), CONFIG, context=ALICE)
    assert raised.value.code == CODE and "仍在等待" in str(raised.value)
    after = app.get_state(CONFIG)
    assert after.next == ("tool",) and after.config == before.config  # no step was taken
    assert [i.value for i in after.interrupts] == [i.value for i in before.interrupts]
    assert refunds(db) == 0
    done = app.invoke(Command(resume="确认"), CONFIG, context=ALICE)  # the question still works
    assert "提交退款申请" in done["messages"][-1].content and refunds(db) == 1


def test_the_error_speaks_the_threads_language_and_async_callers_get_it_too(make_app, db):
    app = make_app()
    say(app, "I want a refund for order OD-20240618-002")
    with pytest.raises(UnreadableResume) as raised:
        asyncio.run(app.ainvoke(Command(resume=None), CONFIG, context=ALICE))
    assert raised.value.language == "en" and "still waiting" in raised.value.user_message

    async def stream() -> None:
        async for _ in app.astream(Command(resume=b"yes"), CONFIG, context=ALICE):
            pass

    with pytest.raises(UnreadableResume):
        asyncio.run(stream())
    assert app.get_state(CONFIG).next == ("tool",) and refunds(db) == 0


def test_a_command_that_is_not_a_resume_and_a_resume_map_still_pass(make_app, db):
    app = make_app()
    say(app, "我要退款 OD-20240618-002")
    interrupt = app.get_state(CONFIG).interrupts[0]
    done = app.invoke(Command(resume={interrupt.id: "确认"}), CONFIG, context=ALICE)
    assert "提交退款申请" in done["messages"][-1].content
    say(app, "我要退款 OD-20240618-001", thread="t2")
    app.invoke(Command(goto="__end__"), {"configurable": {"thread_id": "t2"}}, context=ALICE)


def _served() -> TestClient:
    async def run(request: Request) -> JSONResponse:
        return JSONResponse({"ran": json.loads(await request.body())})

    app = Starlette(
        middleware=[Middleware(ResumeCheckMiddleware)],
        routes=[Route("/threads/{thread}/runs/wait", run, methods=["POST"])],
    )
    return TestClient(app)


@pytest.mark.parametrize(
    "command", [{"resume": None}, {"resume": []}, {"resume": 5}, {"resume": [{"type": "x"}]}]
)
def test_over_http_an_unreadable_resume_is_a_422_before_any_run(command):
    answer = _served().post(
        "/threads/t/runs/wait", json={"command": command}, headers={"accept-language": "en"}
    )
    assert answer.status_code == 422
    assert answer.json()["error"] == CODE and "Nothing was run" in answer.json()["detail"]


@pytest.mark.parametrize(
    "body",
    [
        {"command": {"resume": {"decisions": [{"type": "approve"}]}}},
        {"command": {"resume": "确认"}},
        {"command": {"goto": "__end__"}},
        {"input": {"messages": []}},
    ],
)
def test_over_http_an_answer_goes_through_unchanged(body):
    answer = _served().post("/threads/t/runs/wait", json=body)
    assert answer.status_code == 200 and answer.json() == {"ran": body}
