"""Keep full ID-card numbers, card numbers and secrets out of every checkpoint, whatever the saver.

A user's message enters the checkpoint as the turn's input before any node runs, so masking
in nodes comes too late. This serializer masks what the inner serializer wrote with the
project's one detector (``security.pii.find_pii``), so every spelling the transfer extractor
understands ("Passcode is 123456", "Pin: 123456", full-width digits, an ID with spaces) is
masked here too.

A msgpack blob is masked string by string (``mask_msgpack``): each string is checked on its
own, so framing bytes can never join two strings, or a length byte and a string, into one
match, and a string seen clean before costs one look-up (``security.pii`` remembers clean texts).
Other blobs (raw bytes) are masked in place, keeping their length. Phone numbers are left
alone here (a contact number may be a slot a tool needs); protocol messages mask them. Slot
filling has already moved ID numbers and PINs into the identity vault, so nothing a node
needs is lost.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from typing import Any

import ormsgpack
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.jsonplus import EXT_CONSTRUCTOR_KW_ARGS, JsonPlusSerializer
from langgraph.types import Overwrite

from config.limits import pairs_before
from security.intake import mask_user_codes
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


class ValueBytes(BoundedBytes):
    """A channel's value, serialized and masked, by channel and version.

    LangGraph gives a channel a new version whenever its value changes, and its blob-storing
    savers (Postgres, ours on Redis) keep one blob per version on the same ground. SQLite's
    saver writes the whole checkpoint at every step, and most of its channels have not
    changed since the step before: their bytes are taken from here instead of serialized and
    masked again. Only versions with the random suffix every saver here makes are kept
    (``00…07.0.1234…``): a plain counter could be the same in two threads.
    """

    def __init__(self, entries: int = 1024, largest: int = 65536, total: int = 16_000_000):
        """Keep up to ``entries`` values of at most ``largest`` bytes, ``total`` bytes in all."""
        super().__init__(entries, largest, total)

    @staticmethod
    def key(channel: str, version: Any) -> tuple[str, str] | None:
        """Return the cache key of a channel at ``version``, or ``None`` if not unique."""
        if type(version) is str and _RANDOM_VERSION.fullmatch(version):
            return channel, version
        return None


_RANDOM_VERSION = re.compile(r"\d{32}\.0\.\d{8,}")
"""A channel version with a random suffix (``f"{n:032}.{random.random():016}"``); the rare
suffix with fewer digits, or an exponent, is not kept (a miss, never a wrong hit)."""

_NIL = ormsgpack.packb(None)


def _map_header(size: int) -> bytes:
    if size < 16:
        return bytes((0x80 | size,))
    if size < 1 << 16:
        return b"\xde" + size.to_bytes(2, "big")
    return b"\xdf" + size.to_bytes(4, "big")


_OVERWRITE_FIELDS = tuple(field.name for field in dataclasses.fields(Overwrite))


def _overwrite_packed(inner: SerializerProtocol, overwrite: Overwrite) -> tuple[str, bytes]:
    """Pack ``Overwrite(...)`` as ``JsonPlusSerializer`` does, without its slow way there.

    JsonPlus reaches a dataclass after a dozen ``hasattr`` probes and an ``isinstance``
    against a runtime-checkable protocol (10–18 µs each time, a turn writes four); the bytes
    are an extension wrapping the packed ``(module, name, fields)``, made here directly.
    """
    fields = {name: getattr(overwrite, name) for name in _OVERWRITE_FIELDS}
    kind, packed = inner.dumps_typed((type(overwrite).__module__, "Overwrite", fields))
    return kind, ormsgpack.packb(ormsgpack.Ext(EXT_CONSTRUCTOR_KW_ARGS, packed))


class MaskingSerializer(SerializerProtocol):
    """Wrap a serializer so that what it writes carries no full ID-card number or secret."""

    def __init__(self, inner: SerializerProtocol) -> None:
        """Mask what ``inner`` produces."""
        self.inner = inner
        self._values = ValueBytes()
        # the short way to an Overwrite's bytes is JsonPlus's own format, nobody else's
        self._fast_overwrite = type(inner) is JsonPlusSerializer and _OVERWRITE_FIELDS == (
            "value",
            "type",
        )

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """Serialize with the inner serializer, then mask its strings (msgpack) or bytes."""
        if type(obj) in _PLAIN:  # a third of a turn's values: a count, a score, a flag
            return self.inner.dumps_typed(obj)
        if is_checkpoint_record(obj, values=True):
            whole = self._dumps_checkpoint(obj)
            if whole is not None:
                return "msgpack", whole
        if type(obj) is Overwrite:
            value = mask_user_codes(obj.value)
            if value is not obj.value:
                obj = dataclasses.replace(obj, value=value)
        if type(obj) is Overwrite and self._fast_overwrite:
            kind, data = _overwrite_packed(self.inner, obj)
        else:
            kind, data = self.inner.dumps_typed(mask_user_codes(obj))
        if not data or is_checkpoint_record(obj):
            return kind, data
        if kind == "msgpack":
            return kind, mask_msgpack(data)
        return kind, mask_id_bytes(data)

    def _dumps_checkpoint(self, checkpoint: dict[str, Any]) -> bytes | None:
        """Pack a whole checkpoint from its parts; ``None`` when a part needs the general way.

        A msgpack map is its header and then each key and value packed on its own, so this
        writes the bytes the inner serializer writes for the whole, with each channel's value
        masked (``mask_msgpack``) and taken from ``ValueBytes`` when its version has not
        changed. The rest holds no text of a user's (``is_checkpoint_record``).
        """
        rest = {key: value for key, value in checkpoint.items() if key != "channel_values"}
        try:
            head = ormsgpack.packb(rest)
        except TypeError:  # ormsgpack's encode error is one
            return None
        if not 0x80 <= head[0] <= 0x8F:  # a fixmap: the record has at most six keys
            return None
        values: dict[str, Any] = checkpoint["channel_values"]
        versions = checkpoint["channel_versions"]
        parts = [_map_header(len(rest) + 1), head[1:], ormsgpack.packb("channel_values")]
        parts.append(_map_header(len(values)))
        for channel, value in values.items():
            if type(channel) is not str:
                return None
            key = ValueBytes.key(channel, versions.get(channel))
            packed = self._values.get(key) if key is not None else None
            if packed is None:
                if value is None:
                    packed = _NIL
                else:
                    kind, data = self.inner.dumps_typed(mask_user_codes(value))
                    if kind != "msgpack":
                        return None
                    packed = mask_msgpack(data)
                if key is not None:
                    self._values.put(key, packed)
            parts += [ormsgpack.packb(channel), packed]
        return b"".join(parts)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """Deserialize with the inner serializer."""
        return self.inner.loads_typed(data)

    def __getattr__(self, name: str) -> Any:
        """Pass everything else (allowlists, typed methods) to the inner serializer."""
        return getattr(self.inner, name)
