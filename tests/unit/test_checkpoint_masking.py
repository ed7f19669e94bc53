"""Checkpoint masking string by string, and the shortcuts that make it cheap, agree with the
detectors: nothing the detectors find reaches a blob, and clean blobs are left byte for byte."""

from __future__ import annotations

import random
from typing import Any

import ormsgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import Overwrite

import security.pii as pii
from graph.checkpoint.masking import MaskingSerializer, ValueBytes
from graph.checkpoint.msgpack_masking import (
    CHECKPOINT_KINDS,
    CleanBlobs,
    is_checkpoint_record,
    mask_msgpack,
)
from security.pii import _find_all, find_pii, mask_pii, mask_text
from tests.properties import examples

ID_NUMBER = "110101199003071231"
SERDE = MaskingSerializer(JsonPlusSerializer())


@pytest.mark.parametrize("length", range(20, 300, 7))
def test_an_id_number_at_the_start_of_a_message_is_masked_whatever_its_length(length):
    # a msgpack str8 length byte can be an ASCII digit; read as bytes it glued onto the ID,
    # which became a 19-digit run no detector takes for an ID (lengths 48-57 and others)
    text = f"{ID_NUMBER} {'a' * (length - len(ID_NUMBER) - 1)}"
    for value in (text, [text], ("user", text), {"messages": [HumanMessage(content=text)]}):
        kind, blob = SERDE.dumps_typed(value)
        assert ID_NUMBER.encode() not in blob
        loaded = SERDE.loads_typed((kind, blob))
        assert "110101********1231" in str(loaded)


def test_clean_blobs_come_back_as_the_same_bytes_and_load_as_before():
    value = {
        "messages": [HumanMessage(content="OD-20240618-001 到哪了", id="m1"), AIMessage("好的")],
        "slots": {"order_id": "OD-20240618-001", "count": 3, "ratio": 0.5, "ok": True},
        "raw": b"\x00\x01bytes",
        "nested": [[{"k": ("a", "b")}]],
        "version": f"{7:032}.0.{random.random():016}",  # noqa: S311
    }
    kind, blob = JsonPlusSerializer().dumps_typed(value)
    assert mask_msgpack(blob) is blob
    assert SERDE.dumps_typed(value) == (kind, blob)


def test_masked_values_keep_their_types_and_neighbours():
    value = {"note": f"身份证 {ID_NUMBER}", 7: [1.5, None, "passcode 654321"], "n": 2**40}
    kind, blob = SERDE.dumps_typed(value)
    loaded = SERDE.loads_typed((kind, blob))
    expected = {"note": "身份证 110101********1231", 7: [1.5, None, "passcode ******"]}
    assert loaded == {**expected, "n": 2**40}


def test_a_secret_inside_bytes_is_masked_too():
    kind, blob = SERDE.dumps_typed({"raw": b"pin: 123456"})
    assert b"123456" not in blob and SERDE.loads_typed((kind, blob)) == {"raw": b"pin: ******"}


def test_not_msgpack_falls_back_to_masking_the_bytes():
    assert b"123456" not in mask_msgpack(b"\xc1 pin: 123456")  # 0xc1: never used by msgpack


@settings(max_examples=examples(300), deadline=None)
@given(st.integers(0, 10**9), st.floats(0, 1, exclude_max=True))
def test_langgraph_channel_versions_hold_nothing_a_detector_finds(step, fraction):
    # the masking serializer passes these over without a look-up (format: InMemorySaver's)
    version = f"{step:032}.{fraction:016}"
    assert _find_all(version, frozenset(("id_card", "bank_card", "phone", "secret"))) == []


@settings(max_examples=examples(500), deadline=None)
@given(st.text(alphabet="pinwdotcvPIN0123456789 :=#-xX", max_size=6))
def test_short_ascii_texts_hold_nothing(text):
    assert _find_all(text, frozenset(("id_card", "bank_card", "phone", "secret"))) == []


LEAVES = st.sampled_from(
    [
        "OD-20240618-001",
        f"身份证 {ID_NUMBER}",
        "passcode 654321",
        "call me on 138-0013-8000",
        "pin",
        "",
        "好的",
        "4111 1111 1111 1111",
        7,
        2.5,
        None,
        True,
    ]
)
NESTED = st.recursive(
    LEAVES,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.sampled_from(["a", "note 110101199001011237", "pin 1234"]), inner)
    ),
    max_leaves=20,
)


def _reference(value: Any, kinds: frozenset[pii.Kind] | None) -> Any:
    """What ``mask_pii`` did before it learned to skip: mask every string, copy everything."""
    if isinstance(value, str):
        return mask_text(value, kinds)
    if isinstance(value, dict):
        return {_reference(k, kinds): _reference(v, kinds) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_reference(item, kinds) for item in value]
    return value


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


@settings(max_examples=examples(400), deadline=None)
@given(NESTED, st.sampled_from([None, CHECKPOINT_KINDS]))
def test_mask_pii_masks_what_masking_every_string_masks_and_copies_only_when_it_must(value, kinds):
    before = repr(value)
    masked = mask_pii(value, kinds)
    assert repr(value) == before  # the input is never changed
    assert _plain(masked) == _reference(value, kinds)
    if _plain(value) == _reference(value, kinds):
        assert masked is value


def test_the_clean_text_memo_never_holds_what_a_detector_finds(monkeypatch):
    monkeypatch.setattr(pii, "_CLEAN", {})
    monkeypatch.setattr(pii, "_CLEAN_CHARS", {})
    texts = ["OD-20240618-001 到哪了", f"身份证 {ID_NUMBER}", "passcode 654321"] * 3
    for text in texts:
        assert find_pii(text) == _find_all(text, pii._ALL_KINDS)
    remembered = {text for clean in pii._CLEAN.values() for text in clean}
    assert remembered == {"OD-20240618-001 到哪了"}


def test_the_memo_is_bounded_in_entries_and_in_characters(monkeypatch):
    monkeypatch.setattr(pii, "_CLEAN", {})
    monkeypatch.setattr(pii, "_CLEAN_CHARS", {})
    monkeypatch.setattr(pii, "CLEAN_MEMO_ENTRIES", 10)
    for index in range(35):
        find_pii(f"order number OD-{index:06d} please")
    assert 0 < len(pii._CLEAN[pii._ALL_KINDS]) <= 10
    monkeypatch.setattr(pii, "CLEAN_MEMO_ENTRIES", 10_000)
    monkeypatch.setattr(pii, "CLEAN_MEMO_TOTAL_CHARS", 5_000)
    for index in range(100):
        find_pii(f"{index:04d} " + "好" * 1000)
    held = sum(map(len, pii._CLEAN[pii._ALL_KINDS]))
    assert 0 < held <= 5_000 and held == pii._CLEAN_CHARS[pii._ALL_KINDS]


def test_nested_payloads_are_masked_and_repacked():
    inner = ormsgpack.packb(["pin: 123456", "ok"])
    blob = ormsgpack.packb({"m": ormsgpack.Ext(5, inner)})
    masked = mask_msgpack(blob)

    def hook(code: int, data: bytes) -> Any:
        return (code, ormsgpack.unpackb(data))

    assert ormsgpack.unpackb(masked, ext_hook=hook) == {"m": (5, ["pin: ******", "ok"])}


def test_the_clean_blob_memo_is_bounded_in_count_and_bytes():
    memo = CleanBlobs(entries=3, largest=10, total=25)
    memo.add(b"x" * 11)  # too large to keep
    assert b"x" * 11 not in memo
    for index in range(5):
        memo.add(bytes([index]) * 8)
    assert sum(bytes([i]) * 8 in memo for i in range(5)) <= 3
    assert bytes([4]) * 8 in memo  # the newest is always kept


def test_a_checkpoint_record_is_recognised_and_nothing_else_is():
    # what InMemorySaver and our Redis saver serialize apart from the channel values
    saver = InMemorySaver()
    graph = StateGraph(MessagesState)
    graph.add_node("echo", lambda state: {"messages": [("ai", "ok")]})
    graph.add_edge(START, "echo")
    app = graph.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "r"}}
    app.invoke({"messages": [("user", f"身份证 {ID_NUMBER}")]}, config)
    checkpoint = app.get_state(config).config
    stored = saver.get_tuple(checkpoint)
    assert stored is not None
    record = {k: v for k, v in stored.checkpoint.items() if k != "channel_values"}
    assert is_checkpoint_record(record)
    assert not is_checkpoint_record(stored.checkpoint)  # with its values: masked as a whole
    assert not is_checkpoint_record({**record, "note": ID_NUMBER})  # an extra key
    assert not is_checkpoint_record({"channel_versions": {}, "versions_seen": {}, "id": ID_NUMBER})
    assert not is_checkpoint_record({**record, "versions_seen": [ID_NUMBER]})  # not a map
    serde = MaskingSerializer(JsonPlusSerializer())
    assert serde.dumps_typed(record) == JsonPlusSerializer().dumps_typed(record)
    for value in ({"note": ID_NUMBER}, {**record, "note": ID_NUMBER}, stored.checkpoint):
        assert ID_NUMBER.encode() not in serde.dumps_typed(value)[1]


def test_a_long_list_is_masked_item_by_item_and_clean_items_are_remembered():
    serde = MaskingSerializer(JsonPlusSerializer())
    entries = [{"role": "tool", "content": f"第{i}步完成", "n": i} for i in range(6)]
    first = serde.dumps_typed(entries)
    assert serde.loads_typed(first) == entries  # clean: the same bytes as the inner ones
    assert first == JsonPlusSerializer().dumps_typed(entries)
    # the same entries again, one of them now with an ID number, and a new one after
    dirty = [*entries[:3], {**entries[3], "content": f"证件 {ID_NUMBER}"}, *entries[4:]]
    dirty.append({"role": "user", "content": f"身份证号{ID_NUMBER}", "n": 6})
    dirty.append(None)
    _, blob = serde.dumps_typed(dirty)
    assert ID_NUMBER.encode() not in blob
    loaded = serde.loads_typed(("msgpack", blob))
    assert loaded[:3] == entries[:3] and loaded[4:6] == entries[4:] and loaded[-1] is None
    assert "*" in loaded[3]["content"] and "*" in loaded[6]["content"]
    # a clean item seen before is skipped, a dirty one never becomes "seen clean"
    _, again = serde.dumps_typed(dirty)
    assert again == blob


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(NESTED, min_size=4, max_size=8))
def test_a_long_list_through_the_serializer_is_masked_as_every_string_would_be(items):
    serde = MaskingSerializer(JsonPlusSerializer())
    expected = _reference(items, CHECKPOINT_KINDS)
    for _ in range(2):  # cold, then with the clean items remembered
        assert _plain(serde.loads_typed(serde.dumps_typed(items))) == expected


def test_a_whole_checkpoint_has_its_values_masked_and_the_rest_left_as_it_is():
    # SQLite's saver serializes the checkpoint with its values in one blob
    serde = MaskingSerializer(JsonPlusSerializer())
    protocol = [{"role": "tool", "content": f"第{i}步", "n": i} for i in range(5)]
    checkpoint = {
        "v": 4,
        "id": "1f1ed41f-5886-60dc-bfff-b3579d069906",
        "ts": "2026-12-01T04:44:57.320852+00:00",
        "channel_values": {
            "messages": [HumanMessage(f"身份证 {ID_NUMBER}")],
            "protocol": [*protocol, {"role": "user", "content": f"证件{ID_NUMBER}", "n": 5}],
            "note": f"pin {ID_NUMBER[-6:]}",
        },
        "channel_versions": {"messages": f"{7:032}.0.123", "protocol": 3},
        "versions_seen": {"intent": {"messages": f"{6:032}.0.5"}},
        "updated_channels": ["messages"],
    }
    assert is_checkpoint_record(checkpoint, values=True) and not is_checkpoint_record(checkpoint)
    _, blob = serde.dumps_typed(checkpoint)
    assert ID_NUMBER.encode() not in blob and ID_NUMBER[-6:].encode() not in blob
    loaded = serde.loads_typed(("msgpack", blob))
    assert {k: v for k, v in loaded.items() if k != "channel_values"} == {
        k: v for k, v in checkpoint.items() if k != "channel_values"
    }
    assert loaded["channel_values"]["protocol"][:5] == protocol
    clean = {**checkpoint, "channel_values": {"protocol": protocol}}
    plain = JsonPlusSerializer()
    expected = plain.loads_typed(plain.dumps_typed(clean))
    assert plain.loads_typed(serde.dumps_typed(clean)) == expected


def _checkpoint(values: dict[str, Any], versions: dict[str, Any]) -> dict[str, Any]:
    return {
        "v": 4,
        "id": "1f1ed41f-5886-60dc-bfff-b3579d069906",
        "ts": "2026-12-01T04:44:57.320852+00:00",
        "channel_values": values,
        "channel_versions": versions,
        "versions_seen": {},
        "updated_channels": None,
    }


def test_an_unchanged_channel_is_taken_from_its_version_and_a_plain_counter_never_is():
    serde = MaskingSerializer(JsonPlusSerializer())
    plain = JsonPlusSerializer()
    version = f"{3:032}.{0.7213546210927541:016}"
    first = _checkpoint({"note": "第一版", "n": None}, {"note": version, "n": version})
    assert serde.loads_typed(serde.dumps_typed(first))["channel_values"] == {
        "note": "第一版",
        "n": None,
    }
    # the same version again is the same value (LangGraph bumps it on every change): taken
    # from the cache, even if the object handed in now differs
    again = _checkpoint({"note": "not looked at", "n": None}, {"note": version, "n": version})
    assert serde.loads_typed(serde.dumps_typed(again))["channel_values"]["note"] == "第一版"
    # a new version is serialized and masked afresh
    newer = f"{4:032}.{0.1971141828948001:016}"
    changed = _checkpoint({"note": f"身份证 {ID_NUMBER}"}, {"note": newer})
    _, blob = serde.dumps_typed(changed)
    assert (
        ID_NUMBER.encode() not in blob
        and "*" in plain.loads_typed(("msgpack", blob))["channel_values"]["note"]
    )
    # counters (another saver's versions) repeat across threads: never taken from the cache
    for text in ("线程一", "线程二", f"身份证 {ID_NUMBER}"):
        counted = _checkpoint({"note": text}, {"note": 2})
        loaded = serde.loads_typed(serde.dumps_typed(counted))["channel_values"]["note"]
        assert loaded == mask_text(text, CHECKPOINT_KINDS)


def test_the_value_cache_is_bounded():
    cache = ValueBytes(entries=3, largest=10, total=25)
    keys = [("c", f"{n:032}.0.{12345678 + n}") for n in range(5)]
    assert [ValueBytes.key(*key) for key in keys] == keys
    assert ValueBytes.key("c", 3) is None and ValueBytes.key("c", f"{3:032}.0.5") is None
    for key in keys[:3]:
        cache.put(key, b"x" * 8)
    cache.put(keys[3], b"y" * 11)  # too large: not kept
    assert cache.get(keys[3]) is None
    cache.put(keys[4], b"z")  # full: cleared first
    assert cache.get(keys[0]) is None and cache.get(keys[4]) == b"z"


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(NESTED, min_size=1, max_size=6), st.lists(NESTED, min_size=1, max_size=12))
def test_a_list_that_grows_is_masked_as_every_string_would_be(start, added):
    # each new value of an append-only channel starts with the last one's items: those are
    # proved clean by their bytes, and only the items after them are looked at
    serde = MaskingSerializer(JsonPlusSerializer())
    items = list(start)
    for item in added:
        items.append(item)
        loaded = serde.loads_typed(serde.dumps_typed(items))
        assert _plain(loaded) == _reference(items, CHECKPOINT_KINDS)


def test_an_id_number_appended_to_a_clean_log_is_masked():
    serde = MaskingSerializer(JsonPlusSerializer())
    log = [{"role": "agent", "content": f"第{i}步完成，订单 OD-2024-00{i}" * 4} for i in range(9)]
    assert serde.dumps_typed(log) == JsonPlusSerializer().dumps_typed(log)
    grown = [*log, {"role": "user", "content": f"我的身份证是{ID_NUMBER}"}]
    _, blob = serde.dumps_typed(grown)
    assert ID_NUMBER.encode() not in blob
    assert serde.loads_typed(("msgpack", blob))[:9] == log
    # and the dirty list is never taken for a clean prefix of the next one
    _, again = serde.dumps_typed([*grown, {"role": "agent", "content": "好的"}])
    assert ID_NUMBER.encode() not in again


def test_a_list_inside_a_constructor_is_masked_item_by_item():
    # compaction writes ``Overwrite(value=[...])``: the list is an argument of an extension
    serde = MaskingSerializer(JsonPlusSerializer())
    log = [{"role": "agent", "content": f"第{i}步"} for i in range(8)]
    serde.dumps_typed(log)  # its items are known
    dirty = Overwrite([*log, {"role": "user", "content": f"身份证 {ID_NUMBER}"}])
    kind, blob = serde.dumps_typed(dirty)
    assert ID_NUMBER.encode() not in blob
    loaded = serde.loads_typed((kind, blob))
    assert isinstance(loaded, Overwrite) and loaded.value[:8] == log
    assert serde.dumps_typed(Overwrite(log)) == JsonPlusSerializer().dumps_typed(Overwrite(log))


def test_a_list_that_only_starts_like_a_clean_one_is_masked_whole():
    # same first bytes as a clean list, an ID number where the clean one had a clean item
    serde = MaskingSerializer(JsonPlusSerializer())
    entry = {"role": "agent", "content": "您的订单正在配送中，预计三十分钟内送达" * 3}
    serde.dumps_typed([entry] * 10)
    dirty = [entry] * 3 + [{"role": "user", "content": f"身份证 {ID_NUMBER}"}] + [entry] * 7
    _, blob = serde.dumps_typed(dirty)
    assert ID_NUMBER.encode() not in blob
    assert serde.loads_typed(("msgpack", blob))[4:] == [entry] * 7


@pytest.mark.parametrize(
    "value",
    [{}, 1, [], [HumanMessage("好的", id="m1"), AIMessage("ok", id="m2")], {"a": [1, {"b": 2.5}]}],
)
def test_an_overwrite_packs_to_the_bytes_jsonplus_writes_and_loads_back(value):
    plain = JsonPlusSerializer()
    assert SERDE.dumps_typed(Overwrite(value)) == plain.dumps_typed(Overwrite(value))
    loaded = SERDE.loads_typed(SERDE.dumps_typed(Overwrite(value)))
    assert isinstance(loaded, Overwrite) and loaded.value == value


def test_an_overwrite_is_still_masked():
    kind, blob = SERDE.dumps_typed(Overwrite({"note": f"身份证 {ID_NUMBER}"}))
    assert ID_NUMBER.encode() not in blob
    assert "*" in SERDE.loads_typed((kind, blob)).value["note"]


@pytest.mark.parametrize(
    "value",
    [
        [HumanMessage("123456")],
        [("user", "１２３４５６")],
        {"messages": [("user", "123 456")]},
        [{"role": "user", "content": "123456", "session_id": "t"}],  # a protocol entry
        Overwrite([HumanMessage("123456。")]),
    ],
)
def test_a_users_message_that_is_only_a_code_is_starred(value):
    serde = MaskingSerializer(JsonPlusSerializer())
    data = serde.dumps_typed(value)
    assert b"123456" not in data[1] and "123" not in repr(serde.loads_typed(data))
    assert "******" in repr(serde.loads_typed(data))


@pytest.mark.parametrize(
    "value",
    [
        [AIMessage("123456")],  # the agent's words are not a user's PIN
        [{"role": "tool", "content": "123456"}],
        {"count": "123456"},
        [HumanMessage("订单 123456 到哪了")],  # six digits in a sentence
    ],
)
def test_other_bare_numbers_are_kept(value):
    serde = MaskingSerializer(JsonPlusSerializer())
    assert serde.loads_typed(serde.dumps_typed(value)) == value
