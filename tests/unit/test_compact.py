"""Compaction rules and the in-memory transcript store, without a graph."""

from __future__ import annotations

import hashlib
import json

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage
from langgraph.types import Overwrite

from nodes.compact import compact_update, cut_index, full_transcript, summarize, summary_text
from state import MAX_PROTOCOL_BYTES, ProtocolMessage, ValidatedProtocol, append_protocol
from storage.transcript import MemoryTranscriptStore, entry_key, make_entry
from tests.properties import examples


def turn(n: int, *, call: str | None = None, answer: str | None = None) -> list:
    out: list = [HumanMessage(content=f"q{n}", id=f"h{n}")]
    if call:
        out.append(
            AIMessage(content="", id=f"c{n}", tool_calls=[{"id": call, "name": "t", "args": {}}])
        )
    if answer:
        out.append(ToolMessage(content="{}", tool_call_id=answer, id=f"t{n}"))
    out.append(AIMessage(content=f"a{n}", id=f"a{n}"))
    return out


def note(text: str) -> dict:
    return ProtocolMessage(role="assistant", content=text).model_dump(mode="json")


def test_the_cut_keeps_the_last_turns():
    messages = turn(1) + turn(2) + turn(3)
    assert messages[cut_index(messages, 2)].id == "h2"
    assert cut_index(messages, 3) == 0


def test_the_cut_never_separates_a_call_from_its_answer():
    # turn 2 asks (a confirmation), turn 3 carries the answer to that call
    messages = turn(1) + turn(2, call="x") + turn(3, answer="x")
    assert messages[cut_index(messages, 1)].id == "h2"


def test_summary_keeps_one_line_per_turn_and_counts_them():
    first = summarize(None, turn(1) + turn(2))
    assert first["turns"] == 2
    assert first["text"].split("\n") == ["q1 → a1", "q2 → a2"]
    later = summarize(first, [m for n in range(3, 12) for m in turn(n)])
    assert later["turns"] == 11
    assert later["text"].split("\n")[-1] == "q11 → a11"
    assert len(later["text"].split("\n")) == 6
    assert summary_text(later).startswith("更早的 11 轮")


def test_compaction_moves_old_messages_and_protocol_to_the_store():
    store = MemoryTranscriptStore()
    state = {
        "messages": turn(1) + turn(2) + [HumanMessage(content="q3", id="h3")],
        "protocol": [note(f"n{i}") for i in range(4)],
    }
    update = {"messages": [AIMessage(content="a3", id="a3")], "protocol": [note("n4")]}
    out = compact_update(state, update, keep_turns=2, keep_protocol=3, store=store, thread_id="t")
    removed = [m.id for m in out["messages"] if isinstance(m, RemoveMessage)]
    assert removed == ["h1", "a1"]
    assert out["messages"][-1].id == "a3"
    assert isinstance(out["protocol"], Overwrite)
    assert [p["content"] for p in out["protocol"].value] == ["n2", "n3", "n4"]
    assert out["summary"] == {"turns": 1, "text": "q1 → a1"}
    kinds = [
        (e["kind"], e["body"].get("content") or e["body"]["data"]["content"])
        for e in store.read("t")
    ]
    assert kinds == [("message", "q1"), ("message", "a1"), ("protocol", "n0"), ("protocol", "n1")]
    # the state as it will be, plus the store, is the whole conversation
    values = {
        "messages": turn(2) + [HumanMessage(content="q3", id="h3"), update["messages"][0]],
        "protocol": out["protocol"].value,
    }
    messages, protocol = full_transcript(store, "t", values)
    assert [m.id for m in messages] == ["h1", "a1", "h2", "a2", "h3", "a3"]
    assert [p["content"] for p in protocol] == ["n0", "n1", "n2", "n3", "n4"]


def test_nothing_is_removed_while_a_confirmation_is_awaited():
    state = {"messages": turn(1) + turn(2) + turn(3), "awaiting": {"node": "tool"}}
    out = compact_update(
        state, {}, keep_turns=1, keep_protocol=8, store=MemoryTranscriptStore(), thread_id="t"
    )
    assert out == {}


def test_the_reducer_validates_plain_dicts_but_not_twice():
    big = {"role": "assistant", "content": "x" * 6000}
    cut = append_protocol([], [big])  # validated: an oversized message is cut, never raised
    compact = json.dumps(cut[0], ensure_ascii=False, separators=(",", ":"))
    assert len(compact.encode()) <= MAX_PROTOCOL_BYTES
    masked = append_protocol([], [{"role": "user", "content": "身份证 110101199003071234"}])
    assert "110101199003071234" not in masked[0]["content"]
    checked = ValidatedProtocol(note("ok"))
    out = append_protocol([], [checked])
    assert out == [note("ok") | {"timestamp": checked["timestamp"]}]
    assert type(out[0]) is dict


def test_memory_store_appends_each_key_once():
    store = MemoryTranscriptStore()
    entry = make_entry("protocol", {"role": "user", "content": "hi"})
    assert store.append("t", [entry, entry]) == 1
    assert store.append("t", [entry]) == 0
    assert store.read("t") == [entry]
    assert store.read("other") == []


JSON_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(0, 1).map(lambda x: round(x, 3)),  # a confidence
    st.text(),
)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=15,
)


@settings(max_examples=examples(400), deadline=None)
@given(st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=8))
def test_a_protocol_entry_keeps_the_key_it_had_when_json_wrote_it(body):
    # entries stored before keep matching: the key is the hash of the same bytes
    text = json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    legacy = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    assert entry_key("protocol", body) == legacy
