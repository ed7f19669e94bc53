"""Services-tier tests (real processes) and the helpers that start those processes.

``tests/services.py`` became this package; its Redis helpers live in ``redis_servers`` and
are re-exported so ``from tests.services import RedisServer`` keeps working.
"""

from tests.services.redis_servers import RedisClusterSet, RedisServer, free_port, redis_binary

__all__ = ["RedisClusterSet", "RedisServer", "free_port", "redis_binary"]
