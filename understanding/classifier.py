"""A classifier trained on example requests: sentence embeddings plus character n-grams.

Rasa's NLU stack is the anchor (DIET reads dense and sparse features of each message): a
message is a dense vector from a sentence-embedding model (``understanding.embeddings``) and a
sparse bag of hashed character n-grams (typos and exact words count without a word list),
and a multinomial logistic regression, trained on the examples when the graph is built,
gives each label a probability.

The probabilities are calibrated: the model is also trained k times on k-1 folds of the
examples, and one temperature is fitted to the held-out folds' predictions, so that "0.6"
means what the graph's ``confidence < 0.6`` edge assumes. The trained weights are cached by a
hash of the examples, so a build with the same data loads them instead of training again.
"""

from __future__ import annotations

import hashlib
import io
import threading
import unicodedata
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.sparse import csr_matrix

from understanding.embeddings import CachedEmbeddings

HASH_DIM = 1 << 13
"""Buckets of the hashed character n-grams."""
DENSE_WEIGHT = 1.0
SPARSE_WEIGHT = 0.6
L2 = 3e-5
STEPS = 150
LEARNING_RATE = 0.1
FOLDS = 5
VERSION = "2"
"""Changes with the features or the training: cached weights of another version are ignored."""


@dataclass(frozen=True, slots=True)
class Ranked:
    """Labels of one text, best first, with calibrated probabilities."""

    labels: tuple[str, ...]
    probs: tuple[float, ...]

    @property
    def best(self) -> str:
        """The likeliest label."""
        return self.labels[0]

    @property
    def confidence(self) -> float:
        """The likeliest label's probability."""
        return self.probs[0]

    @property
    def margin(self) -> float:
        """How far the best is ahead of the runner-up."""
        return self.probs[0] - (self.probs[1] if len(self.probs) > 1 else 0.0)

    def prob(self, label: str) -> float:
        """The probability of ``label`` (0 for an unknown one)."""
        for name, p in zip(self.labels, self.probs, strict=True):
            if name == label:
                return p
        return 0.0

    def among(self, keep: Callable[[str], bool]) -> Ranked:
        """The labels ``keep`` accepts, renormalized."""
        pairs = [
            (label, p) for label, p in zip(self.labels, self.probs, strict=True) if keep(label)
        ]
        total = sum(p for _, p in pairs) or 1.0
        return Ranked(tuple(a for a, _ in pairs), tuple(p / total for _, p in pairs))


def ngrams(text: str) -> list[str]:
    """Character n-grams of a normalized text: 1–3 across Chinese, 3-grams and words in Latin."""
    grams: list[str] = []
    run: list[str] = []
    word: list[str] = []

    def flush_run() -> None:
        chars = "".join(run)
        for n in (1, 2, 3):
            grams.extend(f"c{n}:{chars[i : i + n]}" for i in range(len(chars) - n + 1))
        run.clear()

    def flush_word() -> None:
        token = "".join(word)
        if token:
            grams.append(f"w:{token}")
            padded = f"<{token}>"
            grams.extend(f"l3:{padded[i : i + 3]}" for i in range(len(padded) - 2))
            grams.extend(f"l2:{padded[i : i + 2]}" for i in range(len(padded) - 1))
        word.clear()

    for char in text:
        if "\u4e00" <= char <= "\u9fff":
            flush_word()
            run.append(char)
        elif char.isalpha():
            flush_run()
            word.append(char)
        else:
            flush_run()
            flush_word()
    flush_run()
    flush_word()
    return grams


def _bucket(gram: str) -> int:
    return zlib.crc32(gram.encode()) % HASH_DIM


def sparse_features(texts: Sequence[str], view: Callable[[str], str] | None = None) -> csr_matrix:
    """Binary hashed n-grams of each text (as ``view`` shows it), L2-normalized per row."""
    rows: list[int] = []
    columns: list[int] = []
    values: list[float] = []
    for row, text in enumerate(texts):
        folded = unicodedata.normalize("NFKC", text).lower()
        if view is not None:
            folded = view(folded)
        buckets = {_bucket(gram) for gram in ngrams(folded)}
        if not buckets:
            continue
        scale = 1.0 / np.sqrt(len(buckets))
        rows.extend([row] * len(buckets))
        columns.extend(buckets)
        values.extend([scale] * len(buckets))
    return csr_matrix(
        (np.array(values, dtype=np.float32), (rows, columns)),
        shape=(len(texts), HASH_DIM),
        dtype=np.float32,
    )


@dataclass(frozen=True)
class Features:
    """One text per row: its sentence embedding and its hashed n-grams."""

    dense: np.ndarray
    sparse: csr_matrix

    def __len__(self) -> int:
        return self.dense.shape[0]

    def rows(self, index: np.ndarray) -> Features:
        """The features of the rows ``index``."""
        return Features(self.dense[index], self.sparse[index])


@dataclass(frozen=True)
class _Weights:
    labels: tuple[str, ...]
    dense: np.ndarray
    sparse: np.ndarray
    b: np.ndarray
    temperature: float

    def logits(self, x: Features) -> np.ndarray:
        return np.asarray(x.dense @ self.dense + x.sparse @ self.sparse + self.b)


def _softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=1, keepdims=True)


def _fit(x: Features, y: np.ndarray, classes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Multinomial logistic regression, L2, Adam, balanced class weights."""
    n = len(x)
    counts = np.bincount(y, minlength=classes).astype(np.float32)
    weight = (n / (classes * np.maximum(counts, 1)))[y][:, None]
    onehot = np.eye(classes, dtype=np.float32)[y]
    params = [
        np.zeros((x.dense.shape[1], classes), dtype=np.float32),
        np.zeros((HASH_DIM, classes), dtype=np.float32),
        np.zeros(classes, dtype=np.float32),
    ]
    moments = [np.zeros_like(p) for p in params]
    squares = [np.zeros_like(p) for p in params]
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    sparse_t = x.sparse.T.tocsr()
    dense_t = np.ascontiguousarray(x.dense.T)
    for step in range(1, STEPS + 1):
        w_dense, w_sparse, b = params
        probs = _softmax(np.asarray(x.dense @ w_dense + x.sparse @ w_sparse + b))
        grad = ((probs - onehot) * weight / n).astype(np.float32)
        grads = [
            dense_t @ grad + L2 * w_dense,
            np.asarray(sparse_t @ grad) + L2 * w_sparse,
            grad.sum(axis=0),
        ]
        correction1, correction2 = 1 - beta1**step, 1 - beta2**step
        for p, g, m, v in zip(params, grads, moments, squares, strict=True):
            m *= beta1
            m += (1 - beta1) * g
            v *= beta2
            v += (1 - beta2) * g * g
            p -= LEARNING_RATE * (m / correction1) / (np.sqrt(v / correction2) + eps)
    return params[0], params[1], params[2]


def _temperature(logits: np.ndarray, y: np.ndarray) -> float:
    """The temperature that minimizes the held-out negative log-likelihood."""
    best, best_nll = 1.0, float("inf")
    for t in np.exp(np.linspace(np.log(0.2), np.log(5.0), 60)):
        probs = _softmax(logits / t)
        nll = -float(np.mean(np.log(probs[np.arange(len(y)), y] + 1e-12)))
        if nll < best_nll:
            best, best_nll = float(t), nll
    return best


def _folds(y: np.ndarray, k: int) -> list[np.ndarray]:
    """Stratified fold index of every example (deterministic)."""
    fold = np.zeros(len(y), dtype=np.int64)
    for label in np.unique(y):
        where = np.flatnonzero(y == label)
        fold[where] = np.arange(len(where)) % k
    return [np.flatnonzero(fold == i) for i in range(k)]


class ExampleClassifier:
    """Labels a text from examples; ``rank`` gives every label's calibrated probability."""

    def __init__(
        self, weights: _Weights, embeddings: CachedEmbeddings, view: Callable[[str], str] | None
    ) -> None:
        """Use trained ``weights`` with the ``embeddings`` and n-gram ``view`` they had."""
        self._weights = weights
        self.embeddings = embeddings
        self.view = view

    @property
    def labels(self) -> tuple[str, ...]:
        """Every label it knows."""
        return self._weights.labels

    @property
    def temperature(self) -> float:
        """The fitted calibration temperature."""
        return self._weights.temperature

    def features(self, texts: Sequence[str]) -> Features:
        """The dense and sparse features of ``texts``."""
        return _features(self.embeddings.matrix(texts, persist=False), texts, self.view)

    def rank(self, texts: Sequence[str]) -> list[Ranked]:
        """Every label of each text, best first."""
        if not texts:
            return []
        weights = self._weights
        probs = _softmax(weights.logits(self.features(texts)) / weights.temperature)
        out = []
        for row in probs:
            order = np.argsort(-row)
            out.append(
                Ranked(tuple(weights.labels[i] for i in order), tuple(float(row[i]) for i in order))
            )
        return out

    @classmethod
    def train(
        cls,
        examples: Sequence[tuple[str, str]],
        embeddings: CachedEmbeddings,
        *,
        view: Callable[[str], str] | None = None,
        view_name: str = "",
        cache_dir: Path | None = None,
    ) -> ExampleClassifier:
        """Train on (text, label) pairs, or load the weights a former build trained.

        ``view`` shows a text to the n-grams (folding homophones, say); ``view_name`` names
        it in the cache key, with the data's own hash.
        """
        key = _data_key(examples, f"{embeddings.name}|{view_name}")
        with _LOCK:
            cached = _TRAINED.get(key)
        if cached is None and cache_dir is not None:
            cached = _load(cache_dir / f"classifier-{key}.npz")
        if cached is None:
            cached = _train(examples, embeddings, view)
            if cache_dir is not None:
                _save(cache_dir / f"classifier-{key}.npz", cached)
        with _LOCK:
            _TRAINED[key] = cached
        return cls(cached, embeddings, view)


_TRAINED: dict[str, _Weights] = {}
_LOCK = threading.Lock()


def _features(
    dense: np.ndarray, texts: Sequence[str], view: Callable[[str], str] | None
) -> Features:
    return Features(
        (dense * DENSE_WEIGHT).astype(np.float32), sparse_features(texts, view) * SPARSE_WEIGHT
    )


def _train(
    examples: Sequence[tuple[str, str]],
    embeddings: CachedEmbeddings,
    view: Callable[[str], str] | None,
) -> _Weights:
    labels = tuple(sorted({label for _, label in examples}))
    index = {label: i for i, label in enumerate(labels)}
    texts = [text for text, _ in examples]
    y = np.array([index[label] for _, label in examples], dtype=np.int64)
    x = _features(embeddings.matrix(texts), texts, view)
    held_out = np.zeros((len(y), len(labels)), dtype=np.float32)
    for fold in _folds(y, FOLDS):
        train = np.setdiff1d(np.arange(len(y)), fold)
        dense, sparse, b = _fit(x.rows(train), y[train], len(labels))
        held_out[fold] = _Weights(labels, dense, sparse, b, 1.0).logits(x.rows(fold))
    temperature = _temperature(held_out, y)
    dense, sparse, b = _fit(x, y, len(labels))
    return _Weights(labels, dense, sparse, b, temperature)


def _data_key(examples: Sequence[tuple[str, str]], model: str) -> str:
    digest = hashlib.blake2b(digest_size=12)
    digest.update(
        f"{VERSION}|{model}|{HASH_DIM}|{DENSE_WEIGHT}|{SPARSE_WEIGHT}|{L2}|{STEPS}".encode()
    )
    for text, label in examples:
        digest.update(f"{label}\x00{text}\x01".encode())
    return digest.hexdigest()


def _save(path: Path, weights: _Weights) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    np.savez(
        buffer,
        labels=np.array(weights.labels),
        dense=weights.dense,
        sparse=weights.sparse,
        b=weights.b,
        temperature=np.array([weights.temperature]),
    )
    partial = path.with_suffix(f".{threading.get_ident()}.tmp")
    partial.write_bytes(buffer.getvalue())
    partial.replace(path)


def _load(path: Path) -> _Weights | None:
    if not path.exists():
        return None
    try:
        with np.load(path) as data:
            return _Weights(
                tuple(str(label) for label in data["labels"]),
                data["dense"].astype(np.float32),
                data["sparse"].astype(np.float32),
                data["b"].astype(np.float32),
                float(data["temperature"][0]),
            )
    except (OSError, ValueError, KeyError):
        return None


__all__ = ["ExampleClassifier", "Ranked", "ngrams", "sparse_features"]
