"""Choose where thread checkpoints live, from the settings.

- ``redis_url`` set: Redis. ``PlainRedisSaver`` works on any Redis (standalone or Cluster);
  ``redis_saver="langgraph"`` asks for ``langgraph-checkpoint-redis`` instead, which is
  used only when the server reports the search and JSON modules it needs.
- otherwise: the embedded SQLite default in the data directory, so a conversation survives
  a restart with no service to run.
- ``checkpointer="memory"``: in memory, for tests.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from redis import Redis

from config.settings import Settings, get_settings
from graph.checkpoint.plain_redis import PlainRedisSaver
from storage.sqlite_files import connect_wal

CheckpointKind = Literal["sqlite", "memory", "redis"]
REQUIRED_MODULES = frozenset({"search", "rejson"})

_log = logging.getLogger(__name__)


def sqlite_checkpointer(
    path: str | Path | None = None, *, settings: Settings | None = None
) -> SqliteSaver:
    """Open a SQLite saver at ``path`` (default: ``checkpoints.db`` in the data directory)."""
    target = (
        Path(path) if path is not None else (settings or get_settings()).data_dir / "checkpoints.db"
    )
    # synchronous=NORMAL survives a process crash; a power loss may drop the last
    # checkpoints, never a side effect (those are in the business database's ledger, which
    # keeps synchronous=FULL)
    conn = connect_wal(target, synchronous="NORMAL", autocommit=False)
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
            # Imported here: it costs about half a second (redisvl) and only this choice uses it.
            from langgraph.checkpoint.redis import RedisSaver  # noqa: PLC0415

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
    kind: CheckpointKind | None = None, *, settings: Settings | None = None, **options: Any
) -> BaseCheckpointSaver[Any]:
    """Return the configured saver: ``kind``, else ``settings.checkpointer``, else by URL.

    ``settings`` defaults to ``get_settings()``. ``options`` override single settings for
    this call: ``url``, ``path`` (SQLite file), ``prefer``, ``ttl_s``, ``cluster``.
    """
    settings = settings or get_settings()
    url = options.get("url") or settings.redis_url
    chosen = kind or settings.checkpointer or ("redis" if url else "sqlite")
    if chosen == "memory":
        return InMemorySaver()
    if chosen == "sqlite":
        return sqlite_checkpointer(options.get("path"), settings=settings)
    if chosen == "redis":
        if not url:
            msg = "the redis checkpointer needs a URL: set REDIS_URL"
            raise ValueError(msg)
        ttl = options.get("ttl_s") or settings.checkpoint_ttl_s
        return redis_checkpointer(
            url,
            prefer=options.get("prefer") or settings.redis_saver,
            ttl_s=float(ttl) if ttl else None,
            cluster=bool(options.get("cluster") or settings.redis_cluster),
        )
    msg = f"unknown checkpointer {chosen!r}; choose sqlite, redis or memory"
    raise ValueError(msg)
