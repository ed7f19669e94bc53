"""Compressed checkpoint blobs: round trips, and blobs written before (uncompressed, zlib)."""

from __future__ import annotations

import random
import threading
import zlib

import zstandard
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from graph.checkpoint.compress import MIN_BYTES, SUFFIX, ZLIB_SUFFIX, protect


def test_small_blobs_stay_as_they_are_and_large_ones_round_trip():
    serde = protect(JsonPlusSerializer(), compress=True)
    small = {"step": 1}
    kind, blob = serde.dumps_typed(small)
    assert not kind.endswith(SUFFIX) and len(blob) < MIN_BYTES
    assert serde.loads_typed((kind, blob)) == small
    rng = random.Random(7)
    # longer than a small window, part repetitive and part random
    large = {
        "text": "运单 OD-20240618-001 正在配送中。" * 400,
        "noise": "".join(rng.choice("abcdef0123456789") for _ in range(20_000)),
    }
    kind, blob = serde.dumps_typed(large)
    assert kind == "msgpack" + SUFFIX
    # the random half is hex: four bits a character is the most any level saves of it
    assert len(blob) < len(serde.inner.dumps_typed(large)[1]) * 0.6
    assert serde.loads_typed((kind, blob)) == large
    plain = serde.inner.dumps_typed(large)[1]
    assert zstandard.ZstdDecompressor().decompress(blob) == plain  # a plain Zstandard frame


def test_blobs_written_uncompressed_still_load():
    serde = protect(JsonPlusSerializer(), compress=True)
    value = {"messages": ["订单到哪了"] * 200}
    kind, plain = serde.inner.dumps_typed(value)
    assert serde.loads_typed((kind, plain)) == value
    assert serde.loads_typed((kind + SUFFIX, zstandard.compress(plain, 9))) == value  # any level


def test_blobs_written_with_zlib_still_load():
    serde = protect(JsonPlusSerializer(), compress=True)
    value = {"messages": ["订单到哪了"] * 200}
    kind, plain = serde.inner.dumps_typed(value)
    for level in (1, 6, 9):
        assert serde.loads_typed((kind + ZLIB_SUFFIX, zlib.compress(plain, level))) == value


def test_threads_compress_at_once_without_sharing_a_context():
    # a Zstandard context is not thread-safe: each thread gets its own
    serde = protect(JsonPlusSerializer(), compress=True)
    values = [{"n": n, "text": f"第{n}号 " * 300} for n in range(8)]
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def work(value: dict) -> None:
        start.wait()
        try:
            for _ in range(50):
                assert serde.loads_typed(serde.dumps_typed(value)) == value
        except BaseException as error:  # noqa: BLE001 - collected and asserted on
            errors.append(error)

    threads = [threading.Thread(target=work, args=(value,)) for value in values]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
