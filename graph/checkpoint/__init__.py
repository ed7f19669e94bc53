"""Thread checkpoints: the saver factory and the Redis saver.

``factory`` chooses the saver from the settings (SQLite by default, Redis when a URL is
set, memory for tests); ``plain_redis`` is the saver for any Redis; ``masking`` keeps
sensitive values out of what any saver stores.
"""

from graph.checkpoint.factory import (
    REQUIRED_MODULES,
    CheckpointKind,
    make_checkpointer,
    redis_checkpointer,
    redis_modules,
    sqlite_checkpointer,
)
from graph.checkpoint.plain_redis import PlainRedisSaver

__all__ = [
    "REQUIRED_MODULES",
    "CheckpointKind",
    "PlainRedisSaver",
    "make_checkpointer",
    "redis_checkpointer",
    "redis_modules",
    "sqlite_checkpointer",
]
