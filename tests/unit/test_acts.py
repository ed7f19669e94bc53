"""Conversation acts: what is read as a courtesy, "never mind" or a request for a person.

The acts are learned from each language's examples (``language/<code>/acts.yaml``); none of
these phrasings is among them.
"""

from __future__ import annotations

import pytest

from tests.recognizer import reader
from understanding.view import DialogueView

KINDS = {
    "greet": ("chitchat", "greet"),
    "thanks": ("chitchat", "thanks"),
    "bye": ("chitchat", "bye"),
    "never_mind": ("cancel", None),
    "human": ("handoff", "user_request"),
    "complaint": ("handoff", "complaint"),
}


def _read(text: str) -> tuple[str, object]:
    (command, *_) = reader().generate(text, DialogueView()).commands
    detail = getattr(command, "act", None) or getattr(command, "reason", None)
    return command.kind, detail


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("你好", "greet"),
        ("您好！", "greet"),
        ("在吗", "greet"),
        ("hi", "greet"),
        ("Hello there", "greet"),
        ("谢谢", "thanks"),
        ("好的谢谢", "thanks"),
        ("thank you so much!", "thanks"),
        ("谢谢，再见", "bye"),
        ("没有了", "bye"),
        ("谢谢啦，没别的事了", "bye"),
        ("没有其他问题了", "bye"),
        ("thanks, bye", "bye"),
        ("算了不挂了", "never_mind"),
        ("那算了吧", "never_mind"),
        ("不用了谢谢", "never_mind"),
        ("不转了", "never_mind"),
        ("先不用了", "never_mind"),
        ("never mind", "never_mind"),
        ("算啦不用了", "never_mind"),
        ("nah forget it", "never_mind"),
        ("你们客服在吗", "human"),  # asking for the service people is asking for a person
        ("no thanks", "never_mind"),
        ("forget it", "never_mind"),
        ("我要找人工", "human"),
        ("转人工", "human"),
        ("I want to talk to a human", "human"),
        ("i want to speak with customer service", "human"),
        ("我要找客服", "human"),
        ("订单 OD-20240618-001 一直没到，转人工", "human"),
        ("我想投诉骑手态度差", "complaint"),
        ("I want to file a complaint", "complaint"),
    ],
)
def test_an_act_is_read(text: str, kind: str) -> None:
    assert _read(text) == KINDS[kind]


@pytest.mark.parametrize(
    "text",
    [
        "你好，OD-20240618-001 到哪了",  # a greeting in front of a question is the question
        "hi, where is my order",
        "谢谢，再帮我查一下 OD-20240618-001",
        "我的快递不见了",  # a missing parcel, not "不…了"
        "订单不要了",  # cancelling the order is a task
        "太不好了",
        "不错了",
        "人工智能是什么",  # AI, not a person
    ],
)
def test_a_message_that_says_more_is_no_act(text: str) -> None:
    kind, _ = _read(text)
    assert kind not in ("chitchat", "cancel", "handoff")
