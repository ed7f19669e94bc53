"""agent-chat-ui's "Mark as resolved" (``goto: "__end__"``) is read as a rejection."""

from __future__ import annotations

from graph.auth import dismissal_as_rejection


def run(command: object) -> dict:
    return {"thread_id": "t", "kwargs": {"input": {}, "command": command}}


def test_a_bare_goto_end_becomes_a_rejection():
    for goto in ("__end__", ["__end__"]):
        value = run({"goto": goto})
        dismissal_as_rejection(value)
        assert value["kwargs"]["command"] == {"goto": goto, "resume": {"decision": "reject"}}


def test_other_commands_and_inputs_are_left_alone():
    approve = {"resume": {"decisions": [{"type": "approve"}]}, "goto": "__end__"}
    for command in (approve, {"goto": "tool"}, None, {"update": {"x": 1}}):
        value = run(command)
        before = repr(value)
        dismissal_as_rejection(value)
        assert repr(value) == before
    dismissal_as_rejection({"kwargs": None})  # malformed: no error, no change
