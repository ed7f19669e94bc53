"""Compress checkpoint blobs, after masking, so long-lived threads cost less disk and wire.

SQLite and Redis savers store every checkpoint's full channel values; even with bounded state
(``nodes.compact``) a turn writes about seven of them. Zstandard at level -1 (``LEVEL``)
shrinks them about three times. Blobs are tagged (``msgpack+zstd``), so checkpoints written
before compression was on, or with zlib before Zstandard (``msgpack+zlib``), still load;
small pending writes are left as they are.

Why Zstandard: a turn on Redis compresses about eleven blobs and SQLite six whole
checkpoints. zlib sets up a fresh 256 KB state for each (70 µs of CPU for a 3 KB blob in a
live process); a Zstandard context is reused (8 µs). Contexts are kept in a shared free list,
not one per thread: LangGraph starts fresh worker threads for every run, so per-thread
contexts were made anew about six times a turn (70 µs each) and cost 7 % of a Redis turn.
The ``zstandard`` package comes with ``langchain-core`` (through ``langsmith``).

Masking must see the plain bytes: this serializer wraps the masking one, never the other way
round (``protect`` builds the chain and repairs a chain built the wrong way).
"""

from __future__ import annotations

import zlib
from typing import Any

import zstandard
from langgraph.checkpoint.serde.base import SerializerProtocol

from graph.checkpoint.masking import MaskingSerializer

SUFFIX = "+zstd"
"""Tag of a blob this serializer compressed."""
ZLIB_SUFFIX = "+zlib"
"""Tag of a blob compressed with zlib, as this serializer did before; still read."""
LEVEL = -1
"""Zstandard's first "fast" level: on a turn's blobs it compresses twice as fast as level 1
and decompresses 2.5 times as fast, for blobs 12 % larger (3.05 times smaller than plain
against 3.45)."""
MIN_BYTES = 512
"""Blobs smaller than this are stored as they are: compression would not pay."""


class _Contexts:
    """Zstandard contexts lent to one caller at a time: a context is not thread-safe.

    A caller takes a context from the free list (or makes one when all are lent) and gives
    it back after use; the list never holds more than the most callers ever at once.
    """

    def __init__(self, level: int) -> None:
        self.level = level
        self._compressors: list[zstandard.ZstdCompressor] = []
        self._decompressors: list[zstandard.ZstdDecompressor] = []

    def compress(self, data: bytes) -> bytes:
        try:
            compressor = self._compressors.pop()  # list.pop and append are atomic
        except IndexError:
            compressor = zstandard.ZstdCompressor(level=self.level)
        try:
            return compressor.compress(data)
        finally:
            self._compressors.append(compressor)

    def decompress(self, data: bytes) -> bytes:
        try:
            decompressor = self._decompressors.pop()
        except IndexError:
            decompressor = zstandard.ZstdDecompressor()
        try:
            return decompressor.decompress(data)
        finally:
            self._decompressors.append(decompressor)


class CompressingSerializer(SerializerProtocol):
    """Wrap a serializer so that large blobs are stored Zstandard-compressed."""

    def __init__(self, inner: SerializerProtocol, *, level: int = LEVEL) -> None:
        """Compress what ``inner`` produces at Zstandard ``level`` (``LEVEL``)."""
        self.inner = inner
        self.level = level
        self._contexts = _Contexts(level)

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """Serialize with the inner serializer, then compress if large enough."""
        kind, data = self.inner.dumps_typed(obj)
        if len(data) < MIN_BYTES:
            return kind, data
        return kind + SUFFIX, self._contexts.compress(data)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """Decompress a tagged blob, then deserialize with the inner serializer."""
        kind, blob = data
        if kind.endswith(SUFFIX):
            plain = self._contexts.decompress(blob)
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
