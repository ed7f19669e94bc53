"""One-round-trip pin operations: the same answers on every store, and release drops them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from storage.kv import KeyValueStore, MemoryKV, SQLiteKV
from tests.helpers import default_registry
from tests.unit.test_lifecycle import shared_registries


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> KeyValueStore:
    return MemoryKV() if request.param == "memory" else SQLiteKV(tmp_path / "kv.db", "t")


def test_put_if_absent_keeps_the_first_value(store: KeyValueStore) -> None:
    assert store.put_if_absent("pin:a", {"version": "1"}) == {"version": "1"}
    assert store.put_if_absent("pin:a", {"version": "2"}) == {"version": "1"}
    assert store.get("pin:a") == {"version": "1"}


def test_delete_many_counts_what_existed(store: KeyValueStore) -> None:
    store.put("a", {"x": 1})
    store.put("b", {"x": 2})
    assert store.delete_many(["a", "b", "missing"]) == 2
    assert store.delete_many([]) == 0
    assert store.items() == {}


def test_release_drops_the_pins_a_task_used(tmp_path: Path) -> None:
    ops, worker = shared_registries(tmp_path)
    worker.get("urge_delivery", task_id="t1")
    worker.get("query_order_status", task_id="t1")
    assert set(ops.lifecycle.store.items("pin:task:t1|")) == {
        "pin:task:t1|urge_delivery",
        "pin:task:t1|query_order_status",
    }
    worker.release("t1")
    assert ops.lifecycle.store.items("pin:") == {}
    worker.release("t1")  # nothing left: no error, no I/O needed


def test_a_task_continued_elsewhere_keeps_its_pin_and_is_released_there(tmp_path: Path) -> None:
    first, second = shared_registries(tmp_path)
    assert first.get("urge_delivery", task_id="t2").version == "1"
    v2 = dataclasses.replace(first.get("urge_delivery"), version="2")
    second.register(v2)
    assert second.get("urge_delivery", task_id="t2").version == "1"  # pinned by the other worker
    assert second.get("urge_delivery", task_id="t3").version == "2"
    second.release("t2")
    assert "pin:task:t2|urge_delivery" not in second.lifecycle.store.items("pin:")


def test_default_registry_without_task_makes_no_pin() -> None:
    registry = default_registry()
    registry.get("urge_delivery")
    assert registry.lifecycle.store.items("pin:") == {}
