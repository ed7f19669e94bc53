"""Auth against a real ``langgraph dev``: identity from the token, threads owned by users."""

from __future__ import annotations

from typing import Any

import httpx
import jwt
import pytest
from langgraph_sdk import get_client, get_sync_client

from config.settings import Settings
from security.tokens import issue_token
from tests.services.langgraph_server import TEST_AUTH_SECRET, langgraph_dev

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SETTINGS = Settings(REACH_AUTH_SECRET=TEST_AUTH_SECRET)
ALICE, BOB, STAFF = "u_10001", "u_10002", "u_90001"
ALICES_ORDER = "OD-20240618-001"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with langgraph_dev(tmp_path_factory.mktemp("auth-dev")) as url:
        yield url


def token(user_id: str, role: str = "customer", ttl: float = 600, **kw: Any) -> str:
    return issue_token(user_id, role, ttl, settings=SETTINGS, **kw)


def as_user(url: str, user_id: str, role: str = "customer", *, bearer: bool = False):
    """An SDK client for ``user_id``: x-api-key (agent-chat-ui) or Authorization: Bearer."""
    if bearer:
        return get_client(url=url, headers={"Authorization": f"Bearer {token(user_id, role)}"})
    return get_client(url=url, api_key=token(user_id, role))


def ask(text: str) -> dict[str, Any]:
    """An input message as agent-chat-ui sends it: content blocks."""
    return {"messages": [{"type": "human", "content": [{"type": "text", "text": text}]}]}


async def refused(call) -> int:
    with pytest.raises(httpx.HTTPStatusError) as raised:
        await call
    return raised.value.response.status_code


@pytest.fixture(scope="module")
def alices_thread(server) -> str:
    alice = get_sync_client(url=server, api_key=token(ALICE))
    thread = alice.threads.create()
    out = alice.runs.wait(thread["thread_id"], "agent", input=ask(f"{ALICES_ORDER} 到哪了？"))
    assert "配送中" in out["messages"][-1]["content"]
    return thread["thread_id"]


def test_no_token_is_401(server):
    assert httpx.get(f"{server}/ok").status_code == 200
    assert httpx.post(f"{server}/threads/search", json={}).status_code == 401
    assert httpx.post(f"{server}/threads", json={}).status_code == 401
    # Studio's header must not bypass custom auth (disable_studio_auth in langgraph.json).
    studio = httpx.post(f"{server}/threads/search", json={}, headers={"x-auth-scheme": "langsmith"})
    assert studio.status_code == 401


def test_expired_or_tampered_tokens_are_401(server):
    expired = token(BOB, ttl=60, clock=lambda: 1_000_000.0)
    claims = jwt.decode(
        token(BOB), TEST_AUTH_SECRET, algorithms=["HS256"], options={"verify_iat": False}
    )
    header, _, signature = token(BOB).split(".")
    body = jwt.encode({**claims, "sub": ALICE}, "k" * 48, algorithm="HS256").split(".")[1]
    tampered = f"{header}.{body}.{signature}"
    wrong_key = jwt.encode({**claims, "role": "admin"}, "k" * 48, algorithm="HS256")
    for bad in (expired, tampered, wrong_key, "garbage"):
        for headers in ({"x-api-key": bad}, {"Authorization": f"Bearer {bad}"}):
            response = httpx.post(f"{server}/threads/search", json={}, headers=headers)
            assert response.status_code == 401, (bad, headers)
    good = httpx.post(f"{server}/threads/search", json={}, headers={"x-api-key": token(BOB)})
    assert good.status_code == 200


async def test_x_api_key_and_bearer_both_work(server):
    for bearer in (False, True):
        client = as_user(server, BOB, bearer=bearer)
        thread = await client.threads.create()
        assert thread["metadata"]["owner"] == BOB
        assert (await client.threads.get(thread["thread_id"]))["thread_id"] == thread["thread_id"]


async def test_another_user_cannot_read_list_or_run_a_thread(server, alices_thread):
    bob = as_user(server, BOB)
    assert await refused(bob.threads.get(alices_thread)) == 404
    assert await refused(bob.threads.get_state(alices_thread)) == 404
    assert await refused(bob.threads.get_history(alices_thread)) == 404
    assert await refused(bob.runs.list(alices_thread)) == 404
    assert await refused(bob.runs.wait(alices_thread, "agent", input=ask("确认"))) == 404
    assert await refused(bob.threads.update(alices_thread, metadata={"owner": BOB})) == 404
    assert await refused(bob.threads.delete(alices_thread)) == 404
    listed = {t["thread_id"] for t in await bob.threads.search(limit=100)}
    assert alices_thread not in listed
    assert all(t["metadata"]["owner"] == BOB for t in await bob.threads.search(limit=100))
    alice = as_user(server, ALICE)
    assert alices_thread in {t["thread_id"] for t in await alice.threads.search(limit=100)}
    assert (await alice.threads.get(alices_thread))["metadata"]["owner"] == ALICE


async def test_identity_comes_from_the_token_not_the_context(server):
    bob = as_user(server, BOB)
    thread = await bob.threads.create()
    out = await bob.runs.wait(
        thread["thread_id"],
        "agent",
        input=ask(f"{ALICES_ORDER} 到哪了？"),
        context={"user_id": ALICE, "user_role": "admin"},
    )
    assert "没有找到" in out["messages"][-1]["content"]
    assert "配送中" not in str(out["messages"])
    assert {m["user_role"] for m in out["protocol"]} == {"customer"}


async def test_support_staff_read_customer_threads_but_do_not_run_them(server, alices_thread):
    staff = as_user(server, STAFF, "agent")
    assert (await staff.threads.get(alices_thread))["metadata"]["owner"] == ALICE
    assert alices_thread in {t["thread_id"] for t in await staff.threads.search(limit=100)}
    assert await refused(staff.runs.wait(alices_thread, "agent", input=ask("确认"))) == 404
    analyst = as_user(server, "u_80001", "analyst")
    assert await refused(analyst.threads.get(alices_thread)) == 404
