r"""Where a thread lives in Redis and how its records are encoded.

Every key of a thread carries the thread in a hash tag, so the whole thread lives in one
Redis Cluster slot and no key is shared between threads::

    {p}:{thread}:idx     ZSET   "ns\\0checkpoint_id" (score 0: ordered by id, lexically)
    {p}:{thread}:cp      HASH   "ns\\0checkpoint_id" -> record (checkpoint, metadata, parent)
    {p}:{thread}:blobs   HASH   "ns\\0channel\\0version" -> channel value
    {p}:{thread}:writes  HASH   "ns\\0checkpoint_id\\0task_id\\0idx" -> pending write
    {p}:{thread}:windex  HASH   "ns\\0checkpoint_id" -> the write fields of that checkpoint
    {p}:run:{run_id}     SET    "thread\\0ns\\0checkpoint_id", for ``delete_for_runs``

Nothing here talks to Redis: these are the names, the byte formats and the pure plans over
decoded records that the saver and the Lua scripts (``lua.py``) agree on.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, cast

import ormsgpack

SEP = "\x00"
PAGE = 100
"""Checkpoints read per page when listing history."""


@dataclass(frozen=True)
class ThreadKeys:
    """The five keys that hold one thread."""

    idx: str
    cp: str
    blobs: str
    writes: str
    windex: str

    def all(self) -> list[str]:
        """Return every key, in the order the Lua scripts expect."""
        return [self.idx, self.cp, self.blobs, self.writes, self.windex]


def thread_keys(prefix: str, thread_id: str) -> ThreadKeys:
    """Return the keys of ``thread_id``; all share the thread's hash tag."""
    base = f"{prefix}:{{{thread_id}}}"
    return ThreadKeys(
        f"{base}:idx", f"{base}:cp", f"{base}:blobs", f"{base}:writes", f"{base}:windex"
    )


def run_key(prefix: str, run_id: str) -> str:
    """Return the key of the set that indexes the checkpoints a run created."""
    return f"{prefix}:run:{{{run_id}}}"


def index_pattern(prefix: str) -> str:
    """Return the SCAN pattern that matches every thread's index key."""
    return f"{prefix}:{{*}}:idx"


def thread_of(prefix: str, index_key: str) -> str:
    """Return the thread id inside an index key found by ``index_pattern``."""
    inner = index_key[len(prefix) + 2 :]
    return inner[: -len("}:idx")]


@dataclass
class Record:
    """One checkpoint record, decoded as far as the saver needs without the serializer."""

    member: str
    checkpoint_ns: str
    checkpoint_id: str
    checkpoint: tuple[str, bytes]
    metadata: tuple[str, bytes]
    parent_id: str | None
    refs: list[tuple[str, str]]
    write_fields: list[str]

    def blob_fields(self) -> list[str]:
        """Return the blob hash fields holding this checkpoint's channel values."""
        return [blob_field(self.checkpoint_ns, ch, ver) for ch, ver in self.refs]


def member(checkpoint_ns: str, checkpoint_id: str) -> str:
    """Return the index member (and record field) of a checkpoint."""
    return f"{checkpoint_ns}{SEP}{checkpoint_id}"


def split_member(value: str) -> tuple[str, str]:
    """Return ``(checkpoint_ns, checkpoint_id)`` of an index member."""
    checkpoint_ns, _, checkpoint_id = value.rpartition(SEP)
    return checkpoint_ns, checkpoint_id


def blob_field(checkpoint_ns: str, channel: str, version: Any) -> str:
    """Return the blob hash field of one channel version."""
    return f"{checkpoint_ns}{SEP}{channel}{SEP}{version}"


def netstrings(items: Iterable[str]) -> str:
    """Encode ``items`` as netstrings (``<len>:<item>,``), which Lua can split unambiguously."""
    return "".join(f"{len(item.encode())}:{item}," for item in items)


def decode_netstrings(raw: bytes | str) -> list[str]:
    """Split a netstring sequence written by ``netstrings`` (or the write script)."""
    text_value = text(raw)
    out, pos = [], 0
    while pos < len(text_value):
        colon = text_value.index(":", pos)
        length = int(text_value[pos:colon])
        start = colon + 1
        out.append(text_value[start : start + length])
        pos = start + length + 1
    return out


def pack_record(fields: list[Any], refs: list[list[str]]) -> bytes:
    r"""Encode a checkpoint record as ``<n>:<refs>`` then msgpack.

    The blob references come first, as netstrings of ``channel\0version``, so the read
    script can fetch a checkpoint's channel values without decoding msgpack (Redis Lua's
    cmsgpack cannot read binary fields).
    """
    ref_text = netstrings(f"{ch}{SEP}{ver}" for ch, ver in refs).encode()
    return f"{len(ref_text)}:".encode() + ref_text + ormsgpack.packb([*fields, refs])


def unpack_record(raw: bytes) -> list[Any]:
    """Return ``[cp_type, cp_bytes, md_type, md_bytes, parent, refs]`` of a record."""
    colon = raw.index(b":")
    start = colon + 1 + int(raw[:colon])
    return list(ormsgpack.unpackb(raw[start:]))


def parse_record(value: str, raw: bytes, windex: bytes | str | None) -> Record:
    """Decode the record stored under member ``value`` with its write index entry."""
    cp_type, cp_bytes, md_type, md_bytes, parent, refs = unpack_record(raw)
    checkpoint_ns, checkpoint_id = split_member(value)
    return Record(
        member=value,
        checkpoint_ns=checkpoint_ns,
        checkpoint_id=checkpoint_id,
        checkpoint=(cp_type, cp_bytes),
        metadata=(md_type, md_bytes),
        parent_id=parent,
        refs=[(ch, ver) for ch, ver in refs],
        write_fields=decode_netstrings(windex) if windex else [],
    )


def text(value: bytes | str) -> str:
    """Return ``value`` as text; replies are bytes unless the client decodes them."""
    return value.decode() if isinstance(value, bytes) else value


def raw_cp_get(raw_cp: dict[Any, Any], member: str) -> bytes:
    """Look a member up in an HGETALL result whose keys may be bytes or str."""
    if member in raw_cp:
        return cast(bytes, raw_cp[member])
    return cast(bytes, raw_cp[member.encode()])


Plan = tuple[set[str], dict[str, str | None]]
"""What a history rewrite does: the members to drop, and survivors' new parent ids."""


def drop_plan(records: dict[str, Record], members: set[str]) -> Plan:
    """Drop ``members``; re-link survivors to their nearest surviving ancestor."""
    drop = {m for m in members if m in records}
    reparent: dict[str, str | None] = {}
    for key, record in records.items():
        if key in drop or record.parent_id is None:
            continue
        parent: str | None = record.parent_id
        moved = False
        while parent is not None and member(record.checkpoint_ns, parent) in drop:
            parent = records[member(record.checkpoint_ns, parent)].parent_id
            moved = True
        if moved:
            reparent[key] = parent
    return drop, reparent


def keep_latest_plan(records: dict[str, Record], keep_last: int) -> Plan:
    """Keep the newest checkpoint of each namespace and its ``keep_last - 1`` ancestors."""
    keep: set[str] = set()
    reparent: dict[str, str | None] = {}
    by_ns: dict[str, list[Record]] = {}
    for record in records.values():
        by_ns.setdefault(record.checkpoint_ns, []).append(record)
    for checkpoint_ns, group in by_ns.items():
        head: Record | None = max(group, key=lambda r: r.checkpoint_id)
        chain: list[Record] = []
        while head is not None and len(chain) < max(keep_last, 1):
            chain.append(head)
            parent = head.parent_id
            head = records.get(member(checkpoint_ns, parent)) if parent else None
        keep.update(r.member for r in chain)
        oldest = chain[-1]
        if oldest.parent_id is not None:
            reparent[oldest.member] = None
    return set(records) - keep, reparent
