"""Choose where thread checkpoints live.

The embedded default is SQLite in the data directory, so a conversation survives a restart
with no service to run. Tests use memory. Redis comes from ``REDIS_URL`` (see the Redis
saver's own module once present).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any, Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from tools.db import data_dir

CheckpointKind = Literal["sqlite", "memory"]
CHECKPOINTER_ENV = "REACH_CHECKPOINTER"


def sqlite_checkpointer(path: str | Path | None = None) -> SqliteSaver:
    """Open a SQLite saver at ``path`` (default: ``checkpoints.db`` in the data directory)."""
    target = Path(path) if path is not None else data_dir() / "checkpoints.db"
    target.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(target), check_same_thread=False)
    conn.execute("PRAGMA journal_mode = WAL")
    saver = SqliteSaver(conn)
    saver.setup()
    return saver


def make_checkpointer(
    kind: CheckpointKind | None = None, **options: Any
) -> BaseCheckpointSaver[Any]:
    """Return the configured saver: ``kind``, else ``REACH_CHECKPOINTER``, else SQLite."""
    chosen = kind or os.environ.get(CHECKPOINTER_ENV) or "sqlite"
    if chosen == "memory":
        return InMemorySaver()
    if chosen == "sqlite":
        return sqlite_checkpointer(options.get("path"))
    msg = f"unknown checkpointer {chosen!r}; choose sqlite or memory"
    raise ValueError(msg)
