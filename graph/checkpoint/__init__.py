"""Choose where thread checkpoints live.

- ``REDIS_URL`` set: Redis. ``PlainRedisSaver`` works on any Redis (standalone or Cluster);
  ``REACH_REDIS_SAVER=langgraph`` asks for ``langgraph-checkpoint-redis`` instead, which is
  used only when the server reports the search and JSON modules it needs.
- otherwise: the embedded SQLite default in the data directory, so a conversation survives
  a restart with no service to run.
- ``REACH_CHECKPOINTER=memory``: in memory, for tests.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path
from typing import Any, Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from redis import Redis

from graph.checkpoint.redis import PlainRedisSaver
from tools.db import data_dir

CheckpointKind = Literal["sqlite", "memory", "redis"]
CHECKPOINTER_ENV = "REACH_CHECKPOINTER"
REDIS_URL_ENV = "REDIS_URL"
REDIS_SAVER_ENV = "REACH_REDIS_SAVER"
REDIS_CLUSTER_ENV = "REACH_REDIS_CLUSTER"
TTL_ENV = "REACH_CHECKPOINT_TTL_S"
REQUIRED_MODULES = frozenset({"search", "rejson"})

_log = logging.getLogger(__name__)


def sqlite_checkpointer(path: str | Path | None = None) -> SqliteSaver:
    """Open a SQLite saver at ``path`` (default: ``checkpoints.db`` in the data directory)."""
    target = Path(path) if path is not None else data_dir() / "checkpoints.db"
    target.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(target), check_same_thread=False)
    conn.execute("PRAGMA journal_mode = WAL")
    saver = SqliteSaver(conn)
    saver.setup()
    return saver


def redis_modules(url: str) -> set[str]:
    """Return the lower-cased names of the modules a Redis server has loaded."""
    client = Redis.from_url(url)
    try:
        modules = client.module_list()
    except Exception:  # servers that refuse MODULE LIST have no modules we can use
        return set()
    finally:
        client.close()
    names = set()
    for module in modules:
        name = module.get(b"name") or module.get("name") or b""
        names.add((name.decode() if isinstance(name, bytes) else str(name)).lower())
    return names


def redis_checkpointer(
    url: str, *, prefer: str | None = None, ttl_s: float | None = None, cluster: bool = False
) -> BaseCheckpointSaver[Any]:
    """Return a Redis saver for ``url``.

    ``prefer="langgraph"`` selects ``langgraph-checkpoint-redis`` when the server has
    RediSearch and RedisJSON; without them it falls back to ``PlainRedisSaver`` and says so.
    """
    if prefer == "langgraph":
        missing = REQUIRED_MODULES - redis_modules(url)
        if not missing:
            from langgraph.checkpoint.redis import RedisSaver

            ttl = {"default_ttl": ttl_s / 60, "refresh_on_read": True} if ttl_s else None
            saver = RedisSaver(redis_url=url, ttl=ttl)
            saver.setup()
            return saver
        _log.warning(
            "langgraph-checkpoint-redis needs Redis modules %s; using PlainRedisSaver",
            sorted(missing),
        )
    return PlainRedisSaver.from_url(url, cluster=cluster, ttl_s=ttl_s)


def make_checkpointer(
    kind: CheckpointKind | None = None, **options: Any
) -> BaseCheckpointSaver[Any]:
    """Return the configured saver: ``kind``, else the environment, else SQLite."""
    url = options.get("url") or os.environ.get(REDIS_URL_ENV)
    chosen = kind or os.environ.get(CHECKPOINTER_ENV) or ("redis" if url else "sqlite")
    if chosen == "memory":
        return InMemorySaver()
    if chosen == "sqlite":
        return sqlite_checkpointer(options.get("path"))
    if chosen == "redis":
        if not url:
            msg = f"the redis checkpointer needs a URL: set {REDIS_URL_ENV}"
            raise ValueError(msg)
        ttl = options.get("ttl_s") or os.environ.get(TTL_ENV)
        return redis_checkpointer(
            url,
            prefer=options.get("prefer") or os.environ.get(REDIS_SAVER_ENV),
            ttl_s=float(ttl) if ttl else None,
            cluster=bool(options.get("cluster") or os.environ.get(REDIS_CLUSTER_ENV)),
        )
    msg = f"unknown checkpointer {chosen!r}; choose sqlite, redis or memory"
    raise ValueError(msg)
