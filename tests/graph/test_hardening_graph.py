"""The compiled graph survives oversized input and keeps secrets out of its checkpoints."""

from __future__ import annotations

from langgraph.checkpoint.memory import InMemorySaver

from state import MAX_PROTOCOL_BYTES
from tests.conftest import say


def test_a_6kb_message_does_not_crash_the_turn_and_the_thread_goes_on(app):
    out = say(app, "我的订单怎么还没到？" + "啊" * 6000, thread="big")
    assert out["messages"][-1].content
    assert all(len(str(m).encode()) < 3 * MAX_PROTOCOL_BYTES for m in out["protocol"])
    again = say(app, "OD-20240618-001 到哪了", thread="big")
    assert "OD-20240618-001" in again["messages"][-1].content


def test_a_pin_spelled_passcode_never_reaches_a_checkpoint(make_app):
    saver = InMemorySaver()
    app = make_app(checkpointer=saver)
    say(app, "给 ACC-2001 转 100 元，Passcode is 123456", thread="pin")
    state = app.get_state({"configurable": {"thread_id": "pin"}})
    assert "123456" not in str(state.values.get("messages"))
    assert "123456" not in str(state.values.get("protocol"))
    blobs = list(_all_bytes([saver.storage, saver.writes, saver.blobs]))
    assert blobs
    assert not [blob for blob in blobs if b"123456" in blob]


def _all_bytes(value: object):
    if isinstance(value, bytes | bytearray):
        yield bytes(value)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _all_bytes(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _all_bytes(item)
