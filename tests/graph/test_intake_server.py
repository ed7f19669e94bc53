"""The two server-side intake points, in process: the ``http.app`` middleware rewrites run
bodies before a route reads them, and the ``create_run`` handler rewrites the kwargs a
LangGraph server stores. Both vault under the authenticated user."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langgraph_sdk import Auth
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from graph import auth as served
from graph.intake import IntakeMiddleware, business_vault
from security.intake import TOKEN
from security.tokens import issue_token
from tests.helpers import set_env

pytestmark = pytest.mark.integration

VALID_ID = "110101199001011237"
RUN = {
    "assistant_id": "agent",
    "input": {"messages": [{"role": "user", "content": f"身份证号 {VALID_ID}，密码 123456"}]},
    "metadata": {"source": "test"},
}


@pytest.fixture(autouse=True)
def server_env(monkeypatch, tmp_path):
    set_env(monkeypatch, "REACH_AUTH_SECRET", "s" * 48)
    set_env(monkeypatch, "REACH_VAULT_SECRET", "v" * 48)
    set_env(monkeypatch, "REACH_DATA_DIR", str(tmp_path / "data"))


async def echo(request: Request) -> JSONResponse:
    """A stand-in for the server's route: answers with the body it was given and its length."""
    body = await request.body()
    raw = body.decode()
    return JSONResponse(
        {
            "raw": raw,
            "body": json.loads(raw) if raw.startswith("{") else None,
            "length": request.headers.get("content-length"),
            "n": len(body),
        }
    )


def client() -> TestClient:
    routes = [
        Route(path, echo, methods=["POST", "PATCH"])
        for path in ("/threads/{t}/runs/wait", "/runs/stream", "/store/items", "/threads/{t}/state")
    ]
    return TestClient(Starlette(routes=routes, middleware=[Middleware(IntakeMiddleware)]))


def token(user: str = "u_10001") -> dict[str, str]:
    return {"x-api-key": issue_token(user, "customer", 60)}


def test_a_run_body_reaches_the_route_tokenized_for_the_caller():
    out = client().post("/threads/t1/runs/wait", json=RUN, headers=token()).json()
    content = out["body"]["input"]["messages"][0]["content"]
    assert VALID_ID not in content and "123456" not in content
    assert len(TOKEN.findall(content)) == 2
    assert out["length"] == str(out["n"])  # the header matches the new body
    assert out["body"]["metadata"] == {"source": "test"}
    vault = business_vault()
    assert vault.reveal("u_10001", TOKEN.findall(content)[0]) == VALID_ID
    assert vault.reveal("u_10002", TOKEN.findall(content)[0]) is None


def test_state_updates_and_stateless_runs_are_tokenized_too():
    update = {"values": {"messages": [{"role": "user", "content": "密码 123456"}]}}
    out = client().post("/threads/t1/state", json=update, headers=token()).json()
    assert "123456" not in json.dumps(out["body"])
    out = client().post("/runs/stream", json=RUN, headers=token()).json()
    assert VALID_ID not in json.dumps(out["body"])


@pytest.mark.parametrize(
    ("path", "headers", "body"),
    [
        ("/threads/t1/runs/wait", {}, json.dumps(RUN)),  # no token: the server refuses it
        ("/threads/t1/runs/wait", {"x-api-key": "forged"}, json.dumps(RUN)),
        ("/store/items", None, json.dumps(RUN)),  # not a run or state path
        ("/threads/t1/runs/wait", None, f"not json {VALID_ID}"),
    ],
)
def test_other_requests_pass_untouched(path, headers, body):
    sent = headers if headers is not None else token()
    response = client().post(path, content=body.encode(), headers=sent)
    assert response.json()["raw"] == body


async def test_the_create_run_handler_tokenizes_the_kwargs_the_server_stores():
    kwargs: dict[str, Any] = {"input": RUN["input"], "command": None}
    value: dict[str, Any] = {"kwargs": kwargs, "metadata": {}}
    user = type("U", (), {"identity": "u_10001", "get": lambda self, k, d=None: "customer"})()
    ctx = Auth.types.AuthContext(user=user, permissions=[], resource="threads", action="create_run")
    await served.on_run_create(ctx, value)
    content = value["kwargs"]["input"]["messages"][0]["content"]
    assert value["kwargs"] is kwargs  # the server's own dict, changed in place
    assert VALID_ID not in content and "123456" not in content
    assert business_vault().reveal("u_10001", TOKEN.findall(content)[0]) == VALID_ID
