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
from typing import Any

import ormsgpack
from langgraph.checkpoint.base import Checkpoint
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.jsonplus import EXT_CONSTRUCTOR_KW_ARGS, JsonPlusSerializer
from langgraph.types import Overwrite

from graph.checkpoint.msgpack_masking import (
    _PLAIN,
    BoundedBytes,
    is_checkpoint_record,
    mask_id_bytes,
    mask_msgpack,
)
from security.intake import mask_user_codes


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

    def _dumps_checkpoint(self, checkpoint: Checkpoint) -> bytes | None:
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
        values = checkpoint["channel_values"]
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
