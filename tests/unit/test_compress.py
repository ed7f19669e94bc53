"""Compressed checkpoint blobs: round trips, and blobs written before compression was on."""

from __future__ import annotations

import random
import zlib

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from graph.checkpoint.compress import MIN_BYTES, SUFFIX, protect


def test_small_blobs_stay_as_they_are_and_large_ones_round_trip():
    serde = protect(JsonPlusSerializer(), compress=True)
    small = {"step": 1}
    kind, blob = serde.dumps_typed(small)
    assert not kind.endswith(SUFFIX) and len(blob) < MIN_BYTES
    assert serde.loads_typed((kind, blob)) == small
    rng = random.Random(7)
    # longer than zlib's window, part repetitive and part random
    large = {
        "text": "运单 OD-20240618-001 正在配送中。" * 400,
        "noise": "".join(rng.choice("abcdef0123456789") for _ in range(20_000)),
    }
    kind, blob = serde.dumps_typed(large)
    assert kind == "msgpack" + SUFFIX
    assert len(blob) < len(serde.inner.dumps_typed(large)[1]) / 2
    assert serde.loads_typed((kind, blob)) == large
    assert zlib.decompress(blob) == serde.inner.dumps_typed(large)[1]  # a plain zlib stream


def test_blobs_written_uncompressed_still_load():
    serde = protect(JsonPlusSerializer(), compress=True)
    value = {"messages": ["订单到哪了"] * 200}
    kind, plain = serde.inner.dumps_typed(value)
    assert serde.loads_typed((kind, plain)) == value
    assert serde.loads_typed((kind + SUFFIX, zlib.compress(plain, 9))) == value  # any level
