"""``PlainRedisSaver``: a LangGraph checkpoint saver for any Redis, sync and async.

The key layout and record format are in ``layout.py``, the Lua scripts in ``lua.py``.

Fork safety. Channel versions carry a random suffix (as ``InMemorySaver`` does), so a fork
from an old checkpoint writes new blob fields and never overwrites the original branch.

Atomicity and round trips. ``put`` and ``put_writes`` are one Lua call each: the
checkpoint, its blobs, its index entry and the TTL refresh land together or not at all.
``get_tuple`` is one round trip (one Lua call); ``list`` is three per page of up to 100
checkpoints.

Replies read later. On a standalone client ``put`` and ``put_writes`` (and ``aput``,
``aput_writes``) return once their call is sent (``storage.redis_direct``); the reply is read
by the next call on that connection (async: by a task of the loop). Every read and every
long-path write (``get_tuple``, ``list``, ``delete_thread``, ``copy_thread``, ``prune``, ...)
first reads all owed replies (``flush`` / ``aflush``), so this process reads its own
writes; a write the server refused is sent again through redis-py, and what that raises is
raised by the next call. Call ``flush`` before another process is told to continue the
thread (``graph.run_lock`` does).

TTL. With ``ttl_s`` set, every write (and every read, unless ``refresh_on_read=False``)
resets the TTL of all five thread keys together, so an active thread never loses a value a
live checkpoint refers to, and an idle thread expires whole, leaving no orphans.
"""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from redis import Redis
from redis.asyncio import BlockingConnectionPool as AsyncBlockingConnectionPool
from redis.asyncio import Redis as AsyncRedis
from redis.asyncio.cluster import RedisCluster as AsyncRedisCluster
from redis.cluster import RedisCluster
from redis.exceptions import WatchError

from graph.checkpoint.plain_redis import layout, lua
from graph.checkpoint.plain_redis.codec import (
    RecordCodec,
    queue_rewrite,
    queue_thread_read,
    queue_thread_write,
)


class PlainRedisSaver(RecordCodec):
    """Checkpoint saver for any Redis (standalone, Sentinel-managed or Cluster)."""


    @classmethod
    def from_url(
        cls, url: str, *, cluster: bool = False, max_connections: int = 64, **options: Any
    ) -> PlainRedisSaver:
        """Connect sync and async clients to ``url`` (``cluster=True`` for Redis Cluster).

        The async client waits for a free connection instead of failing when
        ``max_connections`` are busy, so a burst of concurrent runs queues rather than errors.
        """
        if cluster:
            return cls(RedisCluster.from_url(url), AsyncRedisCluster.from_url(url), **options)
        pool = AsyncBlockingConnectionPool.from_url(
            url, max_connections=max_connections, timeout=30
        )
        return cls(Redis.from_url(url), AsyncRedis(connection_pool=pool), **options)


    # ---- sync API ---------------------------------------------------------------------

    def _sync(self) -> Redis | RedisCluster:
        if self.client is None:
            msg = "this saver has no sync client; use the async API or pass client="
            raise RuntimeError(msg)
        return self.client

    def _sync_scripts(self) -> lua.Scripts:
        self._sync()
        assert self._scripts is not None  # registered whenever there is a sync client
        return self._scripts

    @property
    def replies_read_later(self) -> int:
        """Count the writes sent without waiting for their reply (benchmarks count waits)."""
        return sum(
            scripts.direct.sent_later
            for scripts in (self._scripts, self._ascripts)
            if scripts is not None and scripts.direct is not None
        )

    def flush(self) -> None:
        """Wait for the replies of the writes that returned before it; raise a failed one's."""
        if self._scripts is not None:
            self._scripts.flush()

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint, its new blobs and its index entry in one Lua call."""
        scripts = self._sync_scripts()
        keys, args, next_config, run_entry = self._put_args(
            config, checkpoint, metadata, new_versions
        )
        scripts.put(keys, args)
        if run_entry is not None:
            self._index_run_sync(*run_entry)
        return next_config

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's pending writes atomically; a replayed write does not duplicate."""
        scripts = self._sync_scripts()
        if not writes:
            return
        keys, args = self._writes_args(config, writes, task_id, task_path)
        scripts.put_writes(keys, args)

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Fetch a checkpoint (the latest when no id is given) in one round trip (one Lua call)."""
        self.flush()
        scripts = self._sync_scripts()
        keys, args = self._get_args(config)
        found = scripts.get(keys, args)
        if not found:
            return None
        return self._tuple_from_script(config, found)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: Mapping[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """List checkpoints newest first, reading them a page at a time."""
        self.flush()
        client = self._sync()
        remaining = limit
        for thread_id in self._thread_ids_sync(config):
            keys = self.keys_for(thread_id)
            high, low = self._list_range(config, before)
            offset = 0
            while remaining is None or remaining > 0:
                members = [
                    layout.text(m)
                    for m in client.zrevrangebylex(keys.idx, high, low, offset, layout.PAGE)
                ]
                if not members:
                    break
                offset += len(members)
                pipe = client.pipeline(transaction=False)
                self._queue_page(pipe, keys, members)
                raw_records, raw_windex, *_ = pipe.execute()
                records = self._select(members, raw_records, raw_windex, config, before, filter)
                if remaining is not None:
                    records = records[:remaining]
                    remaining -= len(records)
                if not records:
                    continue
                pipe = client.pipeline(transaction=False)
                self._queue_loads(pipe, keys, [r for r, _ in records])
                blobs, writes = self._collect_loads(pipe.execute(), [r for r, _ in records])
                for record, _ in records:
                    yield self._build_tuple(thread_id, record, blobs, writes)
                if len(members) < layout.PAGE:
                    break

    def delete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint, blob and write of the thread."""
        self.flush()
        self._sync().delete(*self.keys_for(thread_id).all())

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy a thread whole (every checkpoint, blob and write) under a new id."""
        self.flush()
        client = self._sync()
        source, target = self.keys_for(source_thread_id), self.keys_for(target_thread_id)
        pipe = client.pipeline(transaction=False)
        queue_thread_read(pipe, source)
        members, *hashes = pipe.execute()
        if not members:
            return
        out = client.pipeline(transaction=self.cluster is False)
        queue_thread_write(out, target, members, hashes, self.ttl_ms)
        out.execute()
        for run_key, entry in self._run_entries(target_thread_id, hashes[0]):
            client.sadd(run_key, entry)

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes) that the given runs created."""
        self.flush()
        client = self._sync()
        for run_id in run_ids:
            run_key = self._run_key(run_id)
            by_thread = self._group_run_entries(client.smembers(run_key))
            for thread_id, members in by_thread.items():
                self._rewrite_sync(
                    thread_id, lambda records, m=members: layout.drop_plan(records, m)
                )
            client.delete(run_key)

    def prune(
        self, thread_ids: Sequence[str], *, strategy: str = "keep_latest", keep_last: int = 1
    ) -> None:
        """Keep the latest ``keep_last`` checkpoints per namespace, or delete everything.

        Kept checkpoints are the head's own ancestors, so history stays a single unbroken
        chain; the oldest kept one becomes the root. Unreferenced blobs are removed.
        """
        self.flush()
        for thread_id in thread_ids:
            if strategy == "delete":
                self.delete_thread(thread_id)
            elif strategy == "keep_latest":
                self._rewrite_sync(
                    thread_id, lambda records: layout.keep_latest_plan(records, keep_last)
                )
            else:
                msg = f"unknown prune strategy {strategy!r}; use keep_latest or delete"
                raise ValueError(msg)

    # ---- async API --------------------------------------------------------------------

    async def aflush(self) -> None:
        """Wait for the replies of the writes that returned before it; raise a failed one's."""
        self.flush()  # a sync write of the same saver, if it has both clients
        if self._ascripts is not None:
            await self._ascripts.aflush()

    def _async(self) -> AsyncRedis | AsyncRedisCluster:
        if self.aclient is None:
            msg = "this saver has no async client; use the sync API or pass aclient="
            raise RuntimeError(msg)
        return self.aclient

    def _async_scripts(self) -> lua.Scripts:
        self._async()
        assert self._ascripts is not None  # registered whenever there is an async client
        return self._ascripts

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint, its new blobs and its index entry in one Lua call."""
        client = self._async()
        keys, args, next_config, run_entry = self._put_args(
            config, checkpoint, metadata, new_versions
        )
        await self._async_scripts().put(keys=keys, args=args)
        if run_entry is not None:
            await client.sadd(run_entry[0], run_entry[1])
            if self.ttl_ms:
                await client.pexpire(run_entry[0], self.ttl_ms)
        return next_config

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's pending writes atomically; a replayed write does not duplicate."""
        scripts = self._async_scripts()
        if not writes:
            return
        keys, args = self._writes_args(config, writes, task_id, task_path)
        await scripts.put_writes(keys=keys, args=args)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Fetch a checkpoint (the latest when no id is given) in one round trip (one Lua call)."""
        await self.aflush()
        scripts = self._async_scripts()
        keys, args = self._get_args(config)
        found = await scripts.get(keys=keys, args=args)
        if not found:
            return None
        return self._tuple_from_script(config, found)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: Mapping[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """List checkpoints newest first, reading them a page at a time."""
        await self.aflush()
        client = self._async()
        remaining = limit
        async for thread_id in self._thread_ids_async(config):
            keys = self.keys_for(thread_id)
            high, low = self._list_range(config, before)
            offset = 0
            while remaining is None or remaining > 0:
                raw_members = await client.zrevrangebylex(keys.idx, high, low, offset, layout.PAGE)
                members = [layout.text(m) for m in raw_members]
                if not members:
                    break
                offset += len(members)
                pipe = client.pipeline(transaction=False)
                self._queue_page(pipe, keys, members)
                raw_records, raw_windex, *_ = await pipe.execute()
                records = self._select(members, raw_records, raw_windex, config, before, filter)
                if remaining is not None:
                    records = records[:remaining]
                    remaining -= len(records)
                if not records:
                    continue
                pipe = client.pipeline(transaction=False)
                self._queue_loads(pipe, keys, [r for r, _ in records])
                blobs, writes = self._collect_loads(await pipe.execute(), [r for r, _ in records])
                for record, _ in records:
                    yield self._build_tuple(thread_id, record, blobs, writes)
                if len(members) < layout.PAGE:
                    break

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint, blob and write of the thread."""
        await self.aflush()
        await self._async().delete(*self.keys_for(thread_id).all())

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy a thread whole (every checkpoint, blob and write) under a new id."""
        await self.aflush()
        client = self._async()
        source, target = self.keys_for(source_thread_id), self.keys_for(target_thread_id)
        pipe = client.pipeline(transaction=False)
        queue_thread_read(pipe, source)
        members, *hashes = await pipe.execute()
        if not members:
            return
        out = client.pipeline(transaction=self.cluster is False)
        queue_thread_write(out, target, members, hashes, self.ttl_ms)
        await out.execute()
        for run_key, entry in self._run_entries(target_thread_id, hashes[0]):
            await client.sadd(run_key, entry)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes) that the given runs created."""
        await self.aflush()
        client = self._async()
        for run_id in run_ids:
            run_key = self._run_key(run_id)
            by_thread = self._group_run_entries(await client.smembers(run_key))
            for thread_id, members in by_thread.items():
                await self._rewrite_async(
                    thread_id, lambda records, m=members: layout.drop_plan(records, m)
                )
            await client.delete(run_key)

    async def aprune(
        self, thread_ids: Sequence[str], *, strategy: str = "keep_latest", keep_last: int = 1
    ) -> None:
        """Keep the latest ``keep_last`` checkpoints per namespace, or delete everything."""
        await self.aflush()
        for thread_id in thread_ids:
            if strategy == "delete":
                await self.adelete_thread(thread_id)
            elif strategy == "keep_latest":
                await self._rewrite_async(
                    thread_id, lambda records: layout.keep_latest_plan(records, keep_last)
                )
            else:
                msg = f"unknown prune strategy {strategy!r}; use keep_latest or delete"
                raise ValueError(msg)

    # ---- shared helpers ---------------------------------------------------------------


    def _thread_ids_sync(self, config: RunnableConfig | None) -> Iterable[str]:
        if config is not None:
            return [str(config["configurable"]["thread_id"])]
        client = self._sync()
        pattern = layout.index_pattern(self.prefix)
        return sorted(
            {layout.thread_of(self.prefix, layout.text(k)) for k in client.scan_iter(match=pattern)}
        )

    async def _thread_ids_async(self, config: RunnableConfig | None) -> AsyncIterator[str]:
        if config is not None:
            yield str(config["configurable"]["thread_id"])
            return
        client = self._async()
        pattern = layout.index_pattern(self.prefix)
        found = {
            layout.thread_of(self.prefix, layout.text(k))
            async for k in client.scan_iter(match=pattern)
        }
        for thread_id in sorted(found):
            yield thread_id

    def _run_entries(
        self, thread_id: str, cp_hash: dict[Any, Any]
    ) -> builtins.list[tuple[str, str]]:
        entries = []
        for member, raw in cp_hash.items():
            metadata = self.serde.loads_typed(tuple(layout.unpack_record(raw)[2:4]))
            if run_id := metadata.get("run_id"):
                entries.append(
                    (self._run_key(str(run_id)), f"{thread_id}{layout.SEP}{layout.text(member)}")
                )
        return entries


    def _index_run_sync(self, run_key: str, entry: str) -> None:
        client = self._sync()
        client.sadd(run_key, entry)
        if self.ttl_ms:
            client.pexpire(run_key, self.ttl_ms)


    def _rewrite_sync(self, thread_id: str, plan: Any) -> None:
        client = self._sync()
        keys = self.keys_for(thread_id)
        while True:
            with client.pipeline(transaction=True) as pipe:
                try:
                    pipe.watch(*keys.all())
                    raw_cp = pipe.hgetall(keys.cp)
                    raw_windex = pipe.hgetall(keys.windex)
                    blob_fields = pipe.hkeys(keys.blobs)
                    change = self._plan_rewrite(raw_cp, raw_windex, blob_fields, plan)
                    if change is None:
                        pipe.unwatch()
                        return
                    pipe.multi()
                    queue_rewrite(pipe, keys, change, self.ttl_ms)
                    pipe.execute()
                    return
                except WatchError:
                    continue

    async def _rewrite_async(self, thread_id: str, plan: Any) -> None:
        client = self._async()
        keys = self.keys_for(thread_id)
        while True:
            async with client.pipeline(transaction=True) as pipe:
                try:
                    await pipe.watch(*keys.all())
                    raw_cp = await pipe.hgetall(keys.cp)
                    raw_windex = await pipe.hgetall(keys.windex)
                    blob_fields = await pipe.hkeys(keys.blobs)
                    change = self._plan_rewrite(raw_cp, raw_windex, blob_fields, plan)
                    if change is None:
                        await pipe.unwatch()
                        return
                    pipe.multi()
                    queue_rewrite(pipe, keys, change, self.ttl_ms)
                    await pipe.execute()
                    return
                except WatchError:
                    continue
