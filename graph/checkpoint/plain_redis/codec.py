"""What ``PlainRedisSaver`` does without talking to Redis: keys, records, scripts' arguments.

``RecordCodec`` holds the saver's settings and turns checkpoints, writes and pages into the
arguments of the Lua scripts (``lua.py``) and script replies back into ``CheckpointTuple``s,
with the key layout and record format of ``layout.py``. The sync and async methods that send
them are ``saver.PlainRedisSaver``'s.
"""

from __future__ import annotations

import builtins
import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

import ormsgpack
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_checkpoint_metadata,
    writes_sort_key,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from redis import Redis
from redis.asyncio import Redis as AsyncRedis
from redis.asyncio.cluster import RedisCluster as AsyncRedisCluster
from redis.cluster import RedisCluster

from graph.checkpoint.msgpack_masking import is_checkpoint_record
from graph.checkpoint.plain_redis import layout, lua


class RecordCodec(BaseCheckpointSaver[str]):
    """The saver's settings, and the encoding of what it sends and reads (no I/O here)."""

    def __init__(
        self,
        client: Redis | RedisCluster | None = None,
        aclient: AsyncRedis | AsyncRedisCluster | None = None,
        *,
        prefix: str = "reach:cp",
        ttl_s: float | None = None,
        refresh_on_read: bool = True,
        serde: SerializerProtocol | None = None,
    ) -> None:
        """Use ``client`` for the sync API and ``aclient`` for the async API.

        Either may be omitted if only that half is used. ``ttl_s`` expires idle threads.
        """
        super().__init__(serde=serde)
        if client is None and aclient is None:
            msg = "give a sync client, an async client, or both"
            raise ValueError(msg)
        self.client = client
        self.aclient = aclient
        self.prefix = prefix
        self.ttl_ms = int(ttl_s * 1000) if ttl_s else 0
        self.refresh_on_read = refresh_on_read
        self.cluster = isinstance(client, RedisCluster) or isinstance(aclient, AsyncRedisCluster)
        self._scripts = lua.register(client) if client is not None else None
        self._ascripts = lua.register(aclient) if aclient is not None else None

    def keys_for(self, thread_id: str) -> layout.ThreadKeys:
        """Return the keys of ``thread_id``; all share the thread's hash tag."""
        return layout.thread_keys(self.prefix, thread_id)

    def _run_key(self, run_id: str) -> str:
        return layout.run_key(self.prefix, run_id)

    def get_next_version(self, current: str | None, channel: None) -> str:
        """Return a version unique to this branch: the counter plus a random suffix."""
        if current is None:
            current_v = 0
        elif isinstance(current, int):
            current_v = current
        else:
            current_v = int(str(current).split(".")[0])
        return f"{current_v + 1:032}.{random.random():016}"

    def _put_args(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> tuple[builtins.list[str], builtins.list[Any], RunnableConfig, tuple[str, str] | None]:
        """Return the ``PUT`` call's keys and arguments, the next config, and the run entry.

        The run index entry is written apart on a Cluster (another slot); elsewhere it is
        part of the call, and ``None`` is returned for it.
        """
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        checkpoint_ns = configurable.get("checkpoint_ns", "")
        keys = self.keys_for(thread_id)
        values = checkpoint.get("channel_values", {})
        stored = {key: value for key, value in checkpoint.items() if key != "channel_values"}
        full_metadata = get_checkpoint_metadata(config, metadata)
        refs = [[ch, str(ver)] for ch, ver in checkpoint["channel_versions"].items()]
        record = layout.pack_record(
            [
                *_dumps_record(stored, self.serde),
                *self.serde.dumps_typed(full_metadata),
                configurable.get("checkpoint_id"),
            ],
            refs,
        )
        member = layout.member(checkpoint_ns, checkpoint["id"])
        blob_args: builtins.list[Any] = []
        for channel, version in new_versions.items():
            typed = self.serde.dumps_typed(values[channel]) if channel in values else ("empty", b"")
            blob_args += [
                layout.blob_field(checkpoint_ns, channel, version),
                ormsgpack.packb(list(typed)),
            ]
        args: builtins.list[Any] = [self.ttl_ms, member, record, len(new_versions), *blob_args]
        key_list = keys.all()
        run_id = full_metadata.get("run_id")
        run_entry = None
        if run_id and not self.cluster:
            key_list.append(self._run_key(str(run_id)))
            args.append(f"{thread_id}{layout.SEP}{member}")
        elif run_id:
            run_entry = self._run_key(str(run_id)), f"{thread_id}{layout.SEP}{member}"
        next_config: RunnableConfig = {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": checkpoint_ns,
                "checkpoint_id": checkpoint["id"],
            }
        }
        return key_list, args, next_config, run_entry

    def _writes_args(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str,
    ) -> tuple[builtins.list[str], builtins.list[Any]]:
        configurable = config["configurable"]
        checkpoint_ns = configurable.get("checkpoint_ns", "")
        member = layout.member(checkpoint_ns, configurable["checkpoint_id"])
        triples: builtins.list[Any] = []
        for idx, (channel, value) in enumerate(writes):
            slot = WRITES_IDX_MAP.get(channel, idx)
            field = f"{member}{layout.SEP}{task_id}{layout.SEP}{slot}"
            typed = self.serde.dumps_typed(value)
            record = ormsgpack.packb([task_id, channel, typed[0], typed[1], task_path, slot])
            triples += [field, record, "1" if slot < 0 else "0"]
        keys = self.keys_for(str(configurable["thread_id"])).all()
        return keys, [self.ttl_ms, member, len(writes), *triples]

    def _get_args(self, config: RunnableConfig) -> tuple[builtins.list[str], builtins.list[Any]]:
        configurable = config["configurable"]
        checkpoint_ns = configurable.get("checkpoint_ns", "")
        checkpoint_id = get_checkpoint_id(config)
        member = layout.member(checkpoint_ns, checkpoint_id) if checkpoint_id else ""
        ttl = self.ttl_ms if self.refresh_on_read else 0
        low = f"[{checkpoint_ns}{layout.SEP}"
        high = f"[{checkpoint_ns}{layout.SEP}\xff"
        return self.keys_for(str(configurable["thread_id"])).all(), [ttl, low, high, member]

    def _tuple_from_script(self, config: RunnableConfig, found: Any) -> CheckpointTuple:
        """Build the tuple from the read script's reply: member, record, writes, values."""
        record = layout.parse_record(layout.text(found[0]), found[1], found[2])
        blobs = dict(zip(record.blob_fields(), found[3] or [], strict=False))
        writes = dict(zip(record.write_fields, found[4] or [], strict=False))
        return self._build_tuple(str(config["configurable"]["thread_id"]), record, blobs, writes)

    def _build_tuple(
        self,
        thread_id: str,
        record: layout.Record,
        blobs: dict[str, bytes | None],
        writes: dict[str, bytes | None],
    ) -> CheckpointTuple:
        checkpoint = cast(Checkpoint, self.serde.loads_typed(record.checkpoint))
        values: dict[str, object] = {}  # channel → its value, as the serializer loads it
        for channel, version in record.refs:
            raw = blobs.get(layout.blob_field(record.checkpoint_ns, channel, version))
            if raw is None:
                continue
            value_type, value_bytes = ormsgpack.unpackb(raw)
            if value_type != "empty":
                values[channel] = self.serde.loads_typed((value_type, value_bytes))
        checkpoint["channel_values"] = values
        pending = []
        for field in record.write_fields:
            raw = writes.get(field)
            if raw is None:
                continue
            task_id, channel, value_type, value_bytes, task_path, slot = ormsgpack.unpackb(raw)
            pending.append((task_path, task_id, slot, channel, (value_type, value_bytes)))
        pending.sort(key=lambda item: writes_sort_key(item[0], item[1], item[2]))
        base = {"thread_id": thread_id, "checkpoint_ns": record.checkpoint_ns}
        return CheckpointTuple(
            config={"configurable": {**base, "checkpoint_id": record.checkpoint_id}},
            checkpoint=checkpoint,
            metadata=cast(CheckpointMetadata, self.serde.loads_typed(record.metadata)),
            parent_config=(
                {"configurable": {**base, "checkpoint_id": record.parent_id}}
                if record.parent_id
                else None
            ),
            pending_writes=[
                (task_id, channel, self.serde.loads_typed(typed))
                for _, task_id, _, channel, typed in pending
            ],
        )

    @staticmethod
    def _list_range(
        config: RunnableConfig | None, before: RunnableConfig | None
    ) -> tuple[str, str]:
        checkpoint_ns = (config or {}).get("configurable", {}).get("checkpoint_ns")
        before_id = get_checkpoint_id(before) if before else None
        if checkpoint_ns is None:
            return "+", "-"
        high = (
            f"({layout.member(checkpoint_ns, before_id)}"
            if before_id
            else f"[{checkpoint_ns}{layout.SEP}\xff"
        )
        return high, f"[{checkpoint_ns}{layout.SEP}"

    def _accept(
        self,
        record: layout.Record,
        metadata: CheckpointMetadata,
        config: RunnableConfig | None,
        before: RunnableConfig | None,
        filter: Mapping[str, Any] | None,
    ) -> bool:
        wanted_id = get_checkpoint_id(config) if config else None
        if wanted_id and record.checkpoint_id != wanted_id:
            return False
        before_id = get_checkpoint_id(before) if before else None
        if before_id and record.checkpoint_id >= before_id:
            return False
        return not filter or all(metadata.get(k) == v for k, v in filter.items())

    def _select(
        self,
        members: builtins.list[str],
        raw_records: builtins.list[bytes | None],
        raw_windex: builtins.list[bytes | None],
        config: RunnableConfig | None,
        before: RunnableConfig | None,
        filter: Mapping[str, Any] | None,
    ) -> builtins.list[tuple[layout.Record, CheckpointMetadata]]:
        chosen = []
        for member, raw, windex in zip(members, raw_records, raw_windex, strict=True):
            if raw is None:  # expired or deleted between the two reads
                continue
            record = layout.parse_record(member, raw, windex)
            metadata = self.serde.loads_typed(record.metadata)
            if self._accept(record, metadata, config, before, filter):
                chosen.append((record, metadata))
        return chosen

    def _queue_page(self, pipe: Any, keys: layout.ThreadKeys, members: builtins.list[str]) -> None:
        """Queue the records and write indexes of one page of members (and a TTL refresh)."""
        pipe.hmget(keys.cp, members)
        pipe.hmget(keys.windex, members)
        if self.ttl_ms and self.refresh_on_read:
            for key in keys.all():
                pipe.pexpire(key, self.ttl_ms)

    @staticmethod
    def _queue_loads(
        pipe: Any, keys: layout.ThreadKeys, records: builtins.list[layout.Record]
    ) -> None:
        blob_fields = sorted({f for r in records for f in r.blob_fields()})
        write_fields = [f for r in records for f in r.write_fields]
        pipe.hmget(keys.blobs, blob_fields) if blob_fields else pipe.exists(keys.blobs)
        pipe.hmget(keys.writes, write_fields) if write_fields else pipe.exists(keys.writes)

    @staticmethod
    def _collect_loads(
        results: builtins.list[Any], records: builtins.list[layout.Record]
    ) -> tuple[dict[str, bytes | None], dict[str, bytes | None]]:
        blob_fields = sorted({f for r in records for f in r.blob_fields()})
        write_fields = [f for r in records for f in r.write_fields]
        blobs = dict(zip(blob_fields, results[0], strict=True)) if blob_fields else {}
        writes = dict(zip(write_fields, results[1], strict=True)) if write_fields else {}
        return blobs, writes

    @staticmethod
    def _group_run_entries(entries: Iterable[bytes | str]) -> dict[str, set[str]]:
        grouped: dict[str, set[str]] = {}
        for entry in entries:
            thread_id, _, member = layout.text(entry).partition(layout.SEP)
            grouped.setdefault(thread_id, set()).add(member)
        return grouped

    def _plan_rewrite(
        self,
        raw_cp: dict[Any, Any],
        raw_windex: dict[Any, Any],
        blob_fields: builtins.list[Any],
        plan: Any,
    ) -> (
        tuple[
            builtins.list[str],
            dict[str, bytes],
            builtins.list[str],
            builtins.list[str],
            builtins.list[str],
        ]
        | None
    ):
        """Apply ``plan`` to the thread's records; return what to delete and rewrite."""
        records = {
            layout.text(m): layout.parse_record(layout.text(m), raw, raw_windex.get(m))
            for m, raw in raw_cp.items()
        }
        drop, reparent = plan(records)
        if not drop:
            return None
        rewritten: dict[str, bytes] = {}
        for member, new_parent in reparent.items():
            cp_type, cp_bytes, md_type, md_bytes, _, refs = layout.unpack_record(
                layout.raw_cp_get(raw_cp, member)
            )
            rewritten[member] = layout.pack_record(
                [cp_type, cp_bytes, md_type, md_bytes, new_parent], refs
            )
        kept = [r for m, r in records.items() if m not in drop]
        live_blobs = {f for r in kept for f in r.blob_fields()}
        dead_blobs = [layout.text(f) for f in blob_fields if layout.text(f) not in live_blobs]
        dead_writes = [f for m in drop for f in records[m].write_fields]
        return sorted(drop), rewritten, dead_blobs, dead_writes, sorted(drop)


def _dumps_record(stored: Mapping[str, object], serde: SerializerProtocol) -> tuple[str, bytes]:
    """Pack a checkpoint without its values straight to msgpack, unmasked and uncompressed.

    It holds no text of a user's (``is_checkpoint_record``). Through the serializer,
    compressing it was a sixth of the saver's CPU per turn (six records of about 2 KB, each a
    zlib stream of its own). The bytes are what the inner serializer writes for plain data,
    so records load the same either way; anything else (a newer checkpoint format with more
    keys, a value plain msgpack cannot hold) goes through the serializer.
    """
    if is_checkpoint_record(stored):
        try:
            return "msgpack", ormsgpack.packb(stored)
        except TypeError:  # ormsgpack's encode error is one
            pass
    return serde.dumps_typed(stored)


def queue_thread_read(pipe: Any, source: layout.ThreadKeys) -> None:
    """Queue reads of a whole thread: index members, then the four hashes."""
    pipe.zrange(source.idx, 0, -1)
    for key in (source.cp, source.blobs, source.writes, source.windex):
        pipe.hgetall(key)


def queue_thread_write(
    out: Any, target: layout.ThreadKeys, members: list[Any], hashes: list[Any], ttl_ms: int
) -> None:
    """Queue writes replacing ``target`` with a thread read by ``_queue_thread_read``."""
    for key in target.all():
        out.delete(key)
    out.zadd(target.idx, dict.fromkeys(members, 0))
    for key, mapping in zip(
        (target.cp, target.blobs, target.writes, target.windex), hashes, strict=True
    ):
        if mapping:
            out.hset(key, mapping=mapping)
    if ttl_ms:
        for key in target.all():
            out.pexpire(key, ttl_ms)


def queue_rewrite(pipe: Any, keys: layout.ThreadKeys, change: Any, ttl_ms: int) -> None:
    """Queue on ``pipe`` the rewrite of one thread ``_plan_rewrite`` planned (prune, delete)."""
    drop, rewritten, dead_blobs, dead_writes, dead_windex = change
    pipe.zrem(keys.idx, *drop)
    pipe.hdel(keys.cp, *drop)
    if rewritten:
        pipe.hset(keys.cp, mapping=rewritten)
    if dead_blobs:
        pipe.hdel(keys.blobs, *dead_blobs)
    if dead_writes:
        pipe.hdel(keys.writes, *dead_writes)
    pipe.hdel(keys.windex, *dead_windex)
    if ttl_ms:
        for key in keys.all():
            pipe.pexpire(key, ttl_ms)
