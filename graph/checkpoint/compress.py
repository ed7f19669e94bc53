"""Compress checkpoint blobs, after masking, so long-lived threads cost less disk and wire.

SQLite and Redis savers store every checkpoint's full channel values; even with bounded state
(``nodes.compact``) a turn writes about seven of them. Zstandard at level 1 shrinks them about
four times. Blobs are tagged (``msgpack+zstd``), so checkpoints written before compression
was on, or with zlib before Zstandard (``msgpack+zlib``), still load; small pending writes
are left as they are.

Why Zstandard: a turn on Redis compresses about eleven blobs and SQLite six whole
checkpoints. zlib sets up a fresh 256 KB state for each (70 µs of CPU for a 3 KB blob in a
live process); a Zstandard context is made once per thread and reused (8 µs). The
``zstandard`` package comes with ``langchain-core`` (through ``langsmith``).

Masking must see the plain bytes: this serializer wraps the masking one, never the other way
round (``protect`` builds the chain and repairs a chain built the wrong way).
"""

from __future__ import annotations

import threading
import zlib
from typing import Any

import zstandard
from langgraph.checkpoint.serde.base import SerializerProtocol

from graph.checkpoint.masking import MaskingSerializer

SUFFIX = "+zstd"
"""Tag of a blob this serializer compressed."""
ZLIB_SUFFIX = "+zlib"
"""Tag of a blob compressed with zlib, as this serializer did before; still read."""
MIN_BYTES = 512
"""Blobs smaller than this are stored as they are: compression would not pay."""


class _Contexts(threading.local):
    """One Zstandard compressor and decompressor per thread: they are not thread-safe."""

    def __init__(self, level: int) -> None:
        self.compressor = zstandard.ZstdCompressor(level=level)
        self.decompressor = zstandard.ZstdDecompressor()


class CompressingSerializer(SerializerProtocol):
    """Wrap a serializer so that large blobs are stored Zstandard-compressed."""

    def __init__(self, inner: SerializerProtocol, *, level: int = 1) -> None:
        """Compress what ``inner`` produces at ``level`` (1: fastest)."""
        self.inner = inner
        self.level = level
        self._contexts = _Contexts(level)

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """Serialize with the inner serializer, then compress if large enough."""
        kind, data = self.inner.dumps_typed(obj)
        if len(data) < MIN_BYTES:
            return kind, data
        return kind + SUFFIX, self._contexts.compressor.compress(data)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """Decompress a tagged blob, then deserialize with the inner serializer."""
        kind, blob = data
        if kind.endswith(SUFFIX):
            plain = self._contexts.decompressor.decompress(blob)
            return self.inner.loads_typed((kind[: -len(SUFFIX)], plain))
        if kind.endswith(ZLIB_SUFFIX):
            return self.inner.loads_typed((kind[: -len(ZLIB_SUFFIX)], zlib.decompress(blob)))
        return self.inner.loads_typed(data)

    def __getattr__(self, name: str) -> Any:
        """Pass everything else (allowlists, typed methods) to the inner serializer."""
        return getattr(self.inner, name)


def protect(serde: SerializerProtocol, *, compress: bool) -> SerializerProtocol:
    """Return ``serde`` with masking applied to plain bytes, and compression outside it."""
    inner = serde.inner if isinstance(serde, CompressingSerializer) else serde
    masked = inner if isinstance(inner, MaskingSerializer) else MaskingSerializer(inner)
    return CompressingSerializer(masked) if compress else masked
