"""Mask a msgpack blob string by string, without decoding what cannot hold a secret.

``mask_msgpack`` walks a packed value and masks each string on its own with the project's one
detector, so framing bytes never join two strings into one match; blobs and prefixes found
clean are remembered (bounded), so a long thread's unchanged values cost one look-up.
``mask_id_bytes`` masks raw bytes in place, keeping their length. The serializer that uses
them is ``graph.checkpoint.masking.MaskingSerializer``.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import ormsgpack

from config.limits import pairs_before
from security.pii import Kind, could_hold, find_pii, kept_positions, mask_pii, mask_text, note_clean
from security.pii_bytes import could_hold_utf8

CHECKPOINT_KINDS: frozenset[Kind] = frozenset(("id_card", "bank_card", "secret"))
"""What is masked in checkpoints."""


def _digit_like(char: str) -> bool:
    folded = unicodedata.normalize("NFKC", char) if not char.isascii() else char
    return len(folded) == 1 and (folded.isdigit() and folded.isascii() or folded in "Xx")


_CHANNEL_VERSION = re.compile(
    r"\d{32}\.\d+\.\d+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
)
"""LangGraph's channel versions (``00…01.0.2129…``) and checkpoint ids (UUIDs): in every
checkpoint, never a number of anyone's. Their digits can never be part of a finding (an ID
or card needs no digit, letter or dash-joined word right before or after it), so the
pre-check ignores them."""


_SHORTEST_SECRET = len("pin1234")
"""Half the blobs of a turn are shorter (a flag, a number, an empty list): nothing to find."""


def mask_id_bytes(data: bytes) -> bytes:
    """Mask ID-card numbers, card numbers and keyword-marked secrets, keeping the length."""
    if len(data) < _SHORTEST_SECRET:
        return data
    text = data.decode("utf-8", errors="surrogateescape")
    if not could_hold(text, CHECKPOINT_KINDS) or not could_hold(
        _CHANNEL_VERSION.sub("v", text), CHECKPOINT_KINDS
    ):
        return data
    findings = find_pii(text, CHECKPOINT_KINDS)
    if not findings:
        return data
    chars = list(text)
    for finding in findings:
        lead, trail = kept_positions(finding)
        positions = [
            index
            for index in range(finding.start, finding.end)
            if _digit_like(chars[index]) and (chars[index] not in "Xx" or finding.kind != "secret")
        ]
        count = len(positions)
        for order, index in enumerate(positions):
            if order < lead or order >= count - trail:
                continue
            chars[index] = "*" * len(chars[index].encode("utf-8", errors="surrogateescape"))
    return "".join(chars).encode("utf-8", errors="surrogateescape")


class BoundedBytes:
    """Bytes by key, bounded in count and in bytes, cleared when full (no bookkeeping per hit)."""

    def __init__(self, entries: int, largest: int, total: int) -> None:
        """Keep up to ``entries`` values of at most ``largest`` bytes, ``total`` bytes in all."""
        self.entries, self.largest, self.total = entries, largest, total
        self._kept: dict[Any, bytes] = {}
        self._size = 0

    def __contains__(self, key: Any) -> bool:
        """Tell whether something is kept for ``key``."""
        return key in self._kept

    def get(self, key: Any) -> bytes | None:
        """Return the bytes kept for ``key``."""
        return self._kept.get(key)

    def put(self, key: Any, data: bytes) -> None:
        """Keep ``data`` for ``key`` (too large: not kept)."""
        if len(data) > self.largest:
            return
        if len(self._kept) >= self.entries or self._size + len(data) > self.total:
            self._kept.clear()
            self._size = 0
        self._kept[key] = data
        self._size += len(data)


class CleanBlobs(BoundedBytes):
    """Blobs and extension payloads (a message, a model) found clean, by their bytes.

    A node's write and the channel's new value are often the same bytes, and the messages
    channel is written again at every step that adds to it, each message in it packing to
    the same bytes every time: one look-up instead of a walk. Only clean ones are kept.
    """

    def __init__(self, entries: int = 2048, largest: int = 8192, total: int = 4_000_000) -> None:
        """Keep up to ``entries`` blobs of at most ``largest`` bytes, ``total`` bytes in all."""
        super().__init__(entries, largest, total)

    def add(self, data: bytes) -> None:
        """Remember ``data`` as clean (callers have checked it)."""
        self.put(data, data)


_CLEAN_BLOBS = CleanBlobs()


def _array_header(data: bytes) -> tuple[int, int] | None:
    """Return ``(item count, header length)`` of a msgpack array, or ``None`` for another type."""
    first = data[0]
    if 0x90 <= first <= 0x9F:
        return first & 0x0F, 1
    if first == 0xDC and len(data) >= 3:
        return int.from_bytes(data[1:3], "big"), 3
    if first == 0xDD and len(data) >= 5:
        return int.from_bytes(data[1:5], "big"), 5
    return None


def _array_of(count: int, body: bytes) -> bytes:
    """Frame ``body``, the packed bytes of ``count`` items, as a msgpack array."""
    if count < 16:
        return bytes((0x90 | count,)) + body
    if count < 1 << 16:
        return b"\xdc" + count.to_bytes(2, "big") + body
    return b"\xdd" + count.to_bytes(4, "big") + body


class CleanPrefixes:
    """Clean arrays by the first bytes of their items, to prove a longer array clean.

    The messages and protocol channels grow by appending: each new value is the last one's
    items and a few more, and serializing the list at every step re-packed and looked up
    every item again (a third of what masking cost a turn). msgpack packs an array as a
    header and its items one after another, each item decoding on its own, so when a new
    array's items start with the bytes of a clean array's items, those first items are the
    same clean values, and only the items after them need masking.
    """

    KEY = 256
    """Bytes of the items that find a clean array: enough to pass a message's class path."""
    PER_KEY = 4
    """Clean arrays kept under one key (one thread's lists before and after a step)."""

    def __init__(self, entries: int = 1024, total: int = 8_000_000) -> None:
        """Keep up to ``entries`` keys, ``total`` bytes of items in all."""
        self.entries, self.total = entries, total
        self._kept: dict[bytes, list[tuple[bytes, int]]] = {}
        self._size = 0

    def tail(self, data: bytes) -> bytes | None:
        """Return an array of the items after the longest kept clean prefix, if any."""
        header = _array_header(data)
        if header is None or len(data) - header[1] <= self.KEY:
            return None
        count, start = header
        best: tuple[bytes, int] | None = None
        for items, known in self._kept.get(data[start : start + self.KEY], ()):
            if known < count and data.startswith(items, start):
                if best is None or known > best[1]:
                    best = items, known
        if best is None:
            return None
        items, known = best
        return _array_of(count - known, data[start + len(items) :])

    def add(self, data: bytes) -> None:
        """Remember the items of ``data``, an array found clean."""
        header = _array_header(data)
        if header is None or len(data) - header[1] <= self.KEY:
            return
        count, start = header
        items = data[start:]
        if len(self._kept) >= self.entries or self._size + len(items) > self.total:
            self._kept.clear()
            self._size = 0
        kept = self._kept.setdefault(items[: self.KEY], [])
        kept.insert(0, (items, count))
        self._size += len(items)
        if len(kept) > self.PER_KEY:
            self._size -= len(kept.pop()[0])


_CLEAN_PREFIXES = CleanPrefixes()


_WHOLE_CHECK_BYTES = 512
"""A blob up to this size is first looked at as bytes (``could_hold_utf8``), unpacked only if
that cannot prove it clean; a longer one is mostly items the memos know."""


def mask_msgpack(data: bytes) -> bytes:
    """Mask every string of a msgpack blob (nested extension payloads too); re-pack if needed.

    The blob is unpacked (in C), each string is masked on its own, and the blob is packed
    again only when a string changed, so a clean blob comes back as the same bytes. Scanning
    the bytes instead let framing join a string to what precedes it: a ``str8`` length byte
    can be an ASCII digit, and a 48-byte message starting with an ID number then read as a
    19-digit run, which no detector takes for an ID.
    """
    if data in _CLEAN_BLOBS:
        return data
    if len(data) <= _WHOLE_CHECK_BYTES and not could_hold_utf8(data, CHECKPOINT_KINDS):
        _CLEAN_BLOBS.add(data)
        return data
    grown = _CLEAN_PREFIXES.tail(data)
    if grown is not None and mask_msgpack(grown) is grown:
        _CLEAN_BLOBS.add(data)
        _CLEAN_PREFIXES.add(data)
        return data
    changed = False

    def ext(code: int, payload: bytes) -> ormsgpack.Ext:
        nonlocal changed
        masked = mask_msgpack(payload) if payload else payload
        changed = changed or masked is not payload
        return ormsgpack.Ext(code, masked)

    try:
        obj = ormsgpack.unpackb(data, ext_hook=ext, option=ormsgpack.OPT_NON_STR_KEYS)
    except (ormsgpack.MsgpackDecodeError, ValueError):  # not msgpack after all: scan the bytes
        return mask_id_bytes(data)
    if is_checkpoint_record(obj, values=True):  # SQLite's: the whole checkpoint in one blob
        values = obj["channel_values"]
        masked_values = {key: _mask_value(value) for key, value in values.items()}
        same = all(masked_values[key] is values[key] for key in values)
        masked: Any = obj if same else {**obj, "channel_values": masked_values}
    else:
        masked = _mask_value(obj)
    if masked is not obj or changed:
        return ormsgpack.packb(masked, option=ormsgpack.OPT_NON_STR_KEYS)
    _CLEAN_BLOBS.add(data)
    _CLEAN_PREFIXES.add(data)
    return data


def _mask_value(value: Any) -> Any:
    """Mask one unpacked value; lists, at any depth a map leads to, item by item."""
    kind = type(value)
    if kind is list:
        return _mask_items(value)
    if kind is dict and any(type(item) is list for item in value.values()):
        return _mask_fields(value)
    return _mask_walk(value)


def _mask_walk(value: Any) -> Any:
    return mask_pii(value, CHECKPOINT_KINDS, on_miss=_checkpoint_text, on_bytes=mask_id_bytes)


def _mask_fields(fields: dict[Any, Any]) -> dict[Any, Any]:
    """Mask a map that holds lists: a constructor's arguments (``Overwrite(value=[...])``)."""
    out: dict[Any, Any] | None = None
    for key, item in fields.items():
        new_key = _mask_walk(key)
        new = _mask_value(item)
        if out is None and (new_key is not key or new is not item):
            out = pairs_before(fields, key)  # the clean pairs before this one
        if out is not None:
            out[new_key] = new
    return fields if out is None else out


def _mask_items(items: list[Any]) -> list[Any]:
    """Mask a list's items one by one, passing over those whose bytes were found clean.

    A log channel (the protocol messages) is written again whenever a step appends to it:
    the same dozen entries, one new. Walking every string of every entry each time was most
    of its masking (15 µs an entry); packing an entry to look it up costs about 4 µs. A
    node's write is a list too, of the entries it adds: remembering them there means the
    channel's next value, and the list compaction leaves, find them already known. An
    extension (a message) was masked by the unpacking that made it.
    """
    out: list[Any] | None = None
    for index, item in enumerate(items):
        kind = type(item)
        if kind in _PASSED:
            continue
        if kind is str:
            masked = _mask_walk(item)
        else:
            key = ormsgpack.packb(item, option=ormsgpack.OPT_NON_STR_KEYS)
            if key in _CLEAN_BLOBS:
                continue
            if not could_hold_utf8(key, CHECKPOINT_KINDS):
                _CLEAN_BLOBS.add(key)
                continue
            masked = _mask_value(item)
            if masked is item:
                _CLEAN_BLOBS.add(key)
                continue
        if masked is item:
            continue
        if out is None:
            out = list(items)
        out[index] = masked
    return items if out is None else out


_PLAIN = frozenset((int, float, bool, type(None)))


_PASSED = _PLAIN | {ormsgpack.Ext}


_LANGGRAPH_VERSION = re.compile(r"\d{32}\.\d+\.\d+")
"""A channel version (``00…05.0.7213…``): most strings of a checkpoint, and a turn makes dozens
of new ones. Its 32-digit run has digits on both sides of any 13–19 of them, and its last part
follows ``0.``, so no detector can find anything in it (``_LEFT``): passed over unchecked."""


def _checkpoint_text(text: str) -> str:
    """Mask one string the clean-text memo does not know."""
    if len(text) > 33 and text[32] == "." and _LANGGRAPH_VERSION.fullmatch(text):
        note_clean(text, CHECKPOINT_KINDS)  # seen again in every later checkpoint
        return text
    return mask_text(text, CHECKPOINT_KINDS)


_RECORD_NEEDS = frozenset(("v", "id", "ts", "channel_versions", "versions_seen"))


RECORD_KEYS = _RECORD_NEEDS | {"updated_channels"}
"""What a checkpoint holds besides its channel values (LangGraph's ``Checkpoint``, v4)."""


def is_checkpoint_record(obj: Any, *, values: bool = False) -> bool:
    """Tell whether ``obj`` is a checkpoint without its channel values (``values``: with them).

    Savers that store values apart (``InMemorySaver``, ours on Redis) serialize this part on
    its own; SQLite's saver writes the whole checkpoint, values included. Outside the values
    it holds channel and node names from the graph's code, channel versions the saver made,
    the checkpoint's id and its time: no text of a user's, so only the values are masked
    (walking the rest was a sixth of the masking a turn paid). A node's write is never this
    shape: all five keys must be there, the two version maps as maps, and nothing else but
    ``updated_channels`` (and, with ``values``, ``channel_values`` as a map).
    """
    if type(obj) is not dict:
        return False
    keys = obj.keys() - {"channel_values"} if values else obj.keys()
    return (
        (not values or type(obj.get("channel_values")) is dict)
        and _RECORD_NEEDS <= keys <= RECORD_KEYS
        and type(obj.get("channel_versions")) is dict
        and type(obj.get("versions_seen")) is dict
    )
