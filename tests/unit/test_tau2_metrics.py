"""The τ² figures, read from a trajectory the same way for both agents (no τ² needed)."""

from __future__ import annotations

from types import SimpleNamespace as Msg

from bench.tau2.metrics import call_in_text, figures, pass_hat_k


def say(role: str, content: str | None = None, calls: list | None = None, usage=None) -> Msg:
    return Msg(role=role, content=content, tool_calls=calls, usage=usage, id=None, error=False)


def call(name: str, call_id: str, **arguments) -> Msg:
    return Msg(name=name, id=call_id, arguments=arguments)


def answer(call_id: str, error: bool = False, content: str = "{}") -> Msg:
    return Msg(role="tool", id=call_id, error=error, content=content, tool_calls=None, usage=None)


class Gold:
    def __init__(self, name: str, **arguments) -> None:
        self.name, self.arguments = name, arguments

    def compare_with_tool_call(self, tool_call) -> bool:
        return tool_call.name == self.name and tool_call.arguments == self.arguments


def test_writes_are_counted_confirmed_or_not_on_or_off_the_gold_path():
    messages = [
        say("assistant", "Hi! How can I help you today?"),
        say("user", "cancel #W1 please"),
        say("assistant", "Cancel #W1 (no longer needed)? yes/no"),
        say("user", "Yes, go ahead."),
        say(
            "assistant",
            calls=[call("cancel_order", "c1", order_id="#W1")],
            usage={"prompt_tokens": 10},
        ),
        answer("c1"),
        say("assistant", "Done. Anything else?"),
        say("user", "also cancel #W2"),
        say("assistant", calls=[call("cancel_order", "c2", order_id="#W2")]),
        answer("c2"),
        say("assistant", calls=[call("get_order", "c3", order="#W3")]),
        answer("c3", error=True, content="Error: got an unexpected keyword argument 'order'"),
        say("assistant", '```json {"name": "cancel_order", "arguments": {"order_id": "#W4"}} ```'),
    ]
    simulation = Msg(
        messages=messages,
        reward_info=Msg(reward=0.0),
        task_id="t",
        termination_reason=Msg(value="max_steps"),
        duration=12.0,
    )
    task = Msg(evaluation_criteria=Msg(actions=[Gold("cancel_order", order_id="#W1")]))
    row = figures(simulation, task, {"cancel_order"}.__contains__, 0)
    assert (row.writes, row.unconfirmed_writes, row.off_gold_writes) == (2, 1, 1)
    assert (row.tool_errors, row.rejected_by_validation) == (1, 1)
    assert (row.calls_as_text, row.writes_as_text) == (1, 1)
    assert (row.agent_model_calls, row.agent_prompt_tokens) == (1, 10)


def test_a_call_written_as_text_and_pass_hat_k():
    assert call_in_text('{"name": "get_user_details", "arguments": {}}') == "get_user_details"
    assert call_in_text("Please tell me your name.") is None
    assert pass_hat_k({"a": [1.0, 0.0], "b": [1.0, 1.0]}, 1) == 0.75
    assert pass_hat_k({"a": [1.0, 0.0], "b": [1.0, 1.0]}, 2) == 0.5
