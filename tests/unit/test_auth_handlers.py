"""The served API's auth: tokens in, users out; threads stamped and filtered by owner."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph_sdk import Auth

from config.settings import get_settings
from graph import auth as served
from security.tokens import issue_token

SECRET = "x" * 48


@pytest.fixture(autouse=True)
def secret(monkeypatch, tmp_path):
    monkeypatch.setenv("REACH_AUTH_SECRET", SECRET)
    monkeypatch.setenv("REACH_DATA_DIR", str(tmp_path))
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


class User:
    """What the server hands handlers: an identity plus the fields we returned."""

    def __init__(self, identity: str, role: str) -> None:
        self.identity = identity
        self.fields = {"identity": identity, "role": role}

    def get(self, key: str, default: Any = None) -> Any:
        return self.fields.get(key, default)


def ctx(identity: str, role: str, resource: str = "threads", action: str = "read"):
    return Auth.types.AuthContext(
        user=User(identity, role), permissions=[], resource=resource, action=action
    )


async def test_bearer_and_api_key_both_authenticate():
    token = issue_token("u_10002", "customer", 60)
    for headers in ({b"authorization": f"Bearer {token}".encode()}, {b"x-api-key": token.encode()}):
        user = await served.authenticate(headers=headers)
        assert user["identity"] == "u_10002"
        assert user["role"] == "customer"  # type: ignore[typeddict-item]
        assert "order:refund" in user["permissions"]


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {b"authorization": b"Bearer "},
        {b"authorization": b"Basic dXNlcjpwYXNz"},
        {b"x-api-key": b"not-a-token"},
        {b"x-auth-scheme": b"langsmith"},
    ],
)
async def test_no_valid_token_is_401(headers):
    with pytest.raises(Auth.exceptions.HTTPException) as raised:
        await served.authenticate(headers=headers)
    assert raised.value.status_code == 401


async def test_an_expired_token_is_401_and_says_so():
    token = issue_token("u_10002", "customer", 60, clock=lambda: 1_000_000.0)
    with pytest.raises(Auth.exceptions.HTTPException) as raised:
        await served.authenticate(headers={b"x-api-key": token.encode()})
    assert raised.value.status_code == 401 and "expired" in str(raised.value.detail)


async def test_a_new_thread_belongs_to_its_creator_whatever_the_client_says():
    value: dict[str, Any] = {"metadata": {"owner": "u_10001", "topic": "refund"}}
    result = await served.on_thread_create(ctx=ctx("u_10002", "customer"), value=value)
    assert value["metadata"]["owner"] == "u_10002"
    assert value["metadata"]["topic"] == "refund"
    assert result == {"owner": "u_10002"}


async def test_customers_read_and_run_only_their_threads():
    me = ctx("u_10002", "customer")
    assert await served.on_thread_read(ctx=me, value={}) == {"owner": "u_10002"}
    assert await served.on_thread_search(ctx=me, value={}) == {"owner": "u_10002"}
    assert await served.on_run_create(ctx=me, value={}) == {"owner": "u_10002"}
    assert await served.on_thread_delete(ctx=me, value={}) == {"owner": "u_10002"}


async def test_an_update_cannot_give_a_thread_away():
    value: dict[str, Any] = {"metadata": {"owner": "u_10001", "readers": []}}
    await served.on_thread_update(ctx=ctx("u_10002", "customer"), value=value)
    assert value["metadata"]["owner"] == "u_10002"
    assert "u_10002" in value["metadata"]["readers"]


async def test_support_staff_read_customer_threads_but_run_only_their_own():
    staff = ctx("u_90001", "agent")
    read = await served.on_thread_read(ctx=staff, value={})
    assert read == {"readers": {"$contains": served.AGENT_READABLE}}
    customer_thread: dict[str, Any] = {}
    await served.on_thread_create(ctx=ctx("u_10001", "customer"), value=customer_thread)
    assert served.AGENT_READABLE in customer_thread["metadata"]["readers"]
    analyst_thread: dict[str, Any] = {}
    await served.on_thread_create(ctx=ctx("u_80001", "analyst"), value=analyst_thread)
    assert served.AGENT_READABLE not in analyst_thread["metadata"]["readers"]
    assert await served.on_run_create(ctx=staff, value={}) == {"owner": "u_90001"}


async def test_admins_see_and_run_everything():
    admin = ctx("u_00001", "admin")
    assert await served.on_thread_read(ctx=admin, value={}) is None
    assert await served.on_run_create(ctx=admin, value={}) is None
    assert await served.deny_by_default(ctx=admin, value={}) is True


async def test_anything_without_a_rule_is_refused_to_non_admins():
    assert await served.deny_by_default(ctx=ctx("u_10002", "customer"), value={}) is False
    reads = ctx("u_10002", "customer", "assistants", "search")
    assert await served.on_assistant_read(ctx=reads, value={}) is True


async def test_the_store_is_namespaced_by_user():
    me = ctx("u_10002", "customer", "store", "get")
    assert await served.on_store(ctx=me, value={"namespace": ("u_10002", "notes")}) is True
    assert await served.on_store(ctx=me, value={"namespace": ("u_10001", "notes")}) is False
    assert await served.on_store(ctx=me, value={"namespace": ()}) is False


def test_a_user_without_a_known_role_gets_the_least_privilege():
    assert served.user_role(User("u_1", "root")) == "customer"
    assert served.user_role({"identity": "u_1", "role": "admin"}) == "admin"


async def test_ownership_is_stamped_into_the_servers_own_metadata_dict():
    metadata: dict[str, Any] = {"topic": "refund"}
    await served.on_thread_create(ctx=ctx("u_10002", "customer"), value={"metadata": metadata})
    assert metadata["owner"] == "u_10002", "the server keeps a reference to this dict"
