"""The checkpoint factory picks ``langgraph-checkpoint-redis`` only where it can work."""

from __future__ import annotations

from typing import Any

import langgraph.checkpoint.redis as lg_redis
import pytest

from graph.checkpoint import factory


class FakeRedisSaver:
    """Stand in for ``langgraph.checkpoint.redis.RedisSaver``, which needs RediSearch."""

    def __init__(self, *, redis_url: str, ttl: dict[str, Any] | None) -> None:
        self.redis_url = redis_url
        self.ttl = ttl
        self.set_up = False

    def setup(self) -> None:
        self.set_up = True


def test_langgraph_saver_is_chosen_when_the_server_has_the_modules(monkeypatch):
    monkeypatch.setattr(factory, "redis_modules", lambda url: {"search", "rejson", "bf"})
    monkeypatch.setattr(lg_redis, "RedisSaver", FakeRedisSaver)
    saver = factory.redis_checkpointer("redis://example:6379/0", prefer="langgraph", ttl_s=120)
    assert isinstance(saver, FakeRedisSaver)
    assert saver.redis_url == "redis://example:6379/0"
    assert saver.ttl == {"default_ttl": 2.0, "refresh_on_read": True}
    assert saver.set_up


@pytest.mark.parametrize("modules", [set(), {"search"}, {"rejson"}])
def test_plain_saver_is_chosen_when_a_module_is_missing(monkeypatch, modules, caplog):
    monkeypatch.setattr(factory, "redis_modules", lambda url: modules)
    monkeypatch.setattr(lg_redis, "RedisSaver", FakeRedisSaver)
    saver = factory.redis_checkpointer("redis://example:6379/0", prefer="langgraph")
    assert isinstance(saver, factory.PlainRedisSaver)
    assert "needs Redis modules" in caplog.text
