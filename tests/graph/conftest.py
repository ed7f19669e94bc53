"""Fixtures of the graph tier: the fake OpenAI-compatible server and a scripted model."""

import pytest

from tests.fakes.openai_server import openai_server  # noqa: F401
from tests.graph.model_script import Script, recording
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
