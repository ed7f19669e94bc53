from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from redis import Redis

from config.settings import get_settings
from graph.builder import build_graph
from graph.checkpoint.plain_redis import PlainRedisSaver
from state import Context
from storage.db import Database
from tests.helpers import default_registry, open_database
from tests.properties import QUICK  # loads the ``check`` profile before any test module
from tests.services import RedisServer
from tools.executor.pipeline import ActionExecutor, ExecutorSettings
from tools.registry.cards import ToolRegistry

ALICE = Context(user_id="u_10001", user_role="customer")
BOB = Context(user_id="u_10002", user_role="customer")


def pytest_report_header() -> str:
    """Say how many examples the property tests draw in this run."""
    if QUICK:
        return "properties: a tenth of each test's examples (HYPOTHESIS_PROFILE=check)"
    return "properties: every example each test asks for"


@pytest.fixture(autouse=True)
def fresh_settings():
    """Settings are read once per process; each test reads its own environment."""
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "reach-data"
    monkeypatch.setenv("REACH_DATA_DIR", str(path))
    get_settings.cache_clear()
    return path


@pytest.fixture
def db(data_dir: Path) -> Database:
    database = open_database(data_dir / "business.db")
    yield database
    database.close()


def registry_with(name: str, **changes: Any) -> ToolRegistry:
    """Return the default registry with one card's fields replaced."""
    registry = default_registry()
    card = registry.get(name)
    assert card is not None
    registry.register(dataclasses.replace(card, **changes), replace_existing=True)
    return registry


FAST = ExecutorSettings(backoff_initial_s=0.001, backoff_max_s=0.005, backoff_jitter_s=0.001)


def fast_executor(registry: ToolRegistry, **options: Any) -> ActionExecutor:
    """An executor with in-process stores and millisecond backoff, for tests."""
    options.setdefault("settings", FAST)
    return ActionExecutor(registry, **options)


@pytest.fixture
def make_app(db: Database) -> Callable[..., Any]:
    def factory(**options: Any) -> Any:
        options.setdefault("database_factory", lambda: db)
        options.setdefault("executor_factory", fast_executor)
        return build_graph(checkpointer=options.pop("checkpointer", InMemorySaver()), **options)

    return factory


@pytest.fixture
def app(make_app: Callable[..., Any]) -> Any:
    return make_app()


def say(app: Any, text: str, thread: str = "t1", context: Context = ALICE) -> dict[str, Any]:
    return app.invoke(
        {"messages": [("user", text)]},
        {"configurable": {"thread_id": thread}},
        context=context,
    )


def nodes_visited(app: Any, text: str, thread: str = "t1", context: Context = ALICE) -> list[str]:
    visited = []
    for chunk in app.stream(
        {"messages": [("user", text)]},
        {"configurable": {"thread_id": thread}},
        context=context,
        stream_mode="updates",
    ):
        visited.extend(chunk)
    return visited


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory):
    server = RedisServer(tmp_path_factory.mktemp("redis")).start()
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server) -> str:
    client = Redis.from_url(redis_server.url)
    client.flushall()
    client.close()
    return redis_server.url


@pytest.fixture
def redis_saver(redis_url: str):
    saver = PlainRedisSaver.from_url(redis_url)
    yield saver
    saver.client.close()
