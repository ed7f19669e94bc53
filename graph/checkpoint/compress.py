"""Compress checkpoint blobs, after masking, so long-lived threads cost less disk and wire.

SQLite and Redis savers store every checkpoint's full channel values; even with bounded state
(``nodes.compact``) a turn writes about seven of them. zlib at level 1 shrinks them about
four times for a fraction of the serialization cost. Blobs are tagged (``msgpack+zlib``), so
checkpoints written before compression was on still load, and small pending writes are left
as they are.

Masking must see the plain bytes: this serializer wraps the masking one, never the other way
round (``protect`` builds the chain and repairs a chain built the wrong way).
"""

from __future__ import annotations

import zlib
from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol

from graph.checkpoint.masking import MaskingSerializer

SUFFIX = "+zlib"
MIN_BYTES = 512
"""Blobs smaller than this are stored as they are: compression would not pay."""


class CompressingSerializer(SerializerProtocol):
    """Wrap a serializer so that large blobs are stored zlib-compressed."""

    def __init__(self, inner: SerializerProtocol, *, level: int = 1) -> None:
        """Compress what ``inner`` produces at ``level`` (1: fastest)."""
        self.inner = inner
        self.level = level

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """Serialize with the inner serializer, then compress if large enough."""
        kind, data = self.inner.dumps_typed(obj)
        if len(data) < MIN_BYTES:
            return kind, data
        return kind + SUFFIX, zlib.compress(data, self.level)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """Decompress a tagged blob, then deserialize with the inner serializer."""
        kind, blob = data
        if kind.endswith(SUFFIX):
            return self.inner.loads_typed((kind[: -len(SUFFIX)], zlib.decompress(blob)))
        return self.inner.loads_typed(data)

    def __getattr__(self, name: str) -> Any:
        """Pass everything else (allowlists, typed methods) to the inner serializer."""
        return getattr(self.inner, name)


def protect(serde: SerializerProtocol, *, compress: bool) -> SerializerProtocol:
    """Return ``serde`` with masking applied to plain bytes, and compression outside it."""
    inner = serde.inner if isinstance(serde, CompressingSerializer) else serde
    masked = inner if isinstance(inner, MaskingSerializer) else MaskingSerializer(inner)
    return CompressingSerializer(masked) if compress else masked
