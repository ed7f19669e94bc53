"""Fixtures of the graph tier: a scripted model over the fake OpenAI server, and talk threads."""

from collections.abc import Callable

import pytest

from jobs.bodies import JOBS
from scenarios.weather.demo_server import start_demo_weather_server
from state import Context
from tests.conftest import ALICE
from tests.fakes.openai_server import openai_server  # noqa: F401
from tests.graph.model_script import Script, recording
from tests.graph.talk import Talk, build
from tests.helpers import default_registry, set_env


@pytest.fixture
def model_env(monkeypatch, openai_server):  # noqa: F811 - the fixture imported above
    set_env(monkeypatch, "REACH_MODEL", "fake-model")
    set_env(monkeypatch, "REACH_BASE_URL", openai_server.base_url)
    set_env(monkeypatch, "REACH_MODEL_MAX_RETRIES", "0")
    set_env(monkeypatch, "REACH_MODEL_TIMEOUT_S", "5")
    set_env(monkeypatch, "REACH_TODAY", "2024-06-18")
    return Script(openai_server)


@pytest.fixture
def handled():
    """Every (tool, arguments) that reached a handler."""
    return []


@pytest.fixture
def model_app(make_app, model_env, handled):
    def factory(*tools: str):
        registry = default_registry()
        for name in tools or ("request_refund",):
            recording(registry, name, handled)
        return make_app(registry=registry)

    return factory


@pytest.fixture
def world(monkeypatch, db):
    server, url = start_demo_weather_server()
    set_env(monkeypatch, "REACH_WEATHER_URL", url)
    set_env(monkeypatch, "REACH_TODAY", "2024-06-18")
    yield
    server.shutdown()
    runner = JOBS.forget(db)  # a job the test started finishes before its database closes
    if runner is not None:
        runner.close(wait=True)


@pytest.fixture
def talk(db) -> Callable[..., Talk]:
    def start(context: Context = ALICE, thread: str = "t1") -> Talk:
        app = build(db)
        return Talk(app, db, context, thread)

    return start
