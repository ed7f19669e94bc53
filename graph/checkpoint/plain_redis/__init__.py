r"""A LangGraph checkpoint saver for any Redis: core data types only, sync and async.

``langgraph-checkpoint-redis`` needs RedisJSON and RediSearch. Plain Redis 6/7/8, Valkey
and most managed services have neither, so this saver uses hashes, sorted sets and Lua.

- ``layout``: key names (one hash tag per thread, so a thread is one Cluster slot), the
  record encoding, and the pure plans that prune or drop history;
- ``lua``: the scripts that write a checkpoint or its writes, and read one, atomically;
- ``saver``: ``PlainRedisSaver``, the sync and async halves of the saver API.
"""

from graph.checkpoint.plain_redis.layout import PAGE, SEP, ThreadKeys, raw_cp_get
from graph.checkpoint.plain_redis.saver import PlainRedisSaver

__all__ = ["PAGE", "SEP", "PlainRedisSaver", "ThreadKeys", "raw_cp_get"]
