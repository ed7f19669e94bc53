"""A yes with nothing waiting, and a message not understood (issue 38).

A second "确认" when nothing waits got "抱歉，我没太明白…" and the list of eleven tasks; any
message not understood got that list. Now a yes says what was last done, or that nothing
waits; a message not understood gets the two or three nearest tasks (the reader's
candidates, best first, those the caller may use) and one question.
"""

from __future__ import annotations

from dataclasses import dataclass

from langgraph.checkpoint.memory import InMemorySaver

from contract.scenario import UNKNOWN
from graph.builder import build_graph
from nodes.services import Services
from scenarios import SCENARIOS
from tests.conftest import ALICE, fast_executor, say
from understanding.commands import CannotTell, Reading
from understanding.view import DialogueView

EVERY_TASK = "查询订单状态、申请退款、催单"  # how the old menu began


def test_a_yes_after_the_refund_says_what_was_done_not_a_menu(talk, world):
    t = talk()("OD-20240618-002 我要退款", "确认")
    refund_id = t.rows("SELECT refund_id FROM refunds")[0]["refund_id"]
    t("确认")
    assert "没有需要您确认的操作" in t.replies and refund_id in t.replies
    assert "此前已提交过" not in t.replies and EVERY_TASK not in t.replies
    assert len(t.rows("SELECT * FROM refunds")) == 1
    t("yes")
    assert "Nothing is waiting for your yes" in t.replies and refund_id in t.replies


def test_a_yes_on_a_new_thread_says_nothing_waits(talk, world):
    t = talk()("确认")
    assert t.replies == "目前没有需要您确认的操作。请问还有什么可以帮您？"
    t = talk(thread="en")("ok")
    assert t.replies.startswith("Nothing is waiting for your yes")


def test_a_yes_after_a_read_says_nothing_waits_and_reads_nothing_again(talk, world):
    t = talk()("OD-20240618-001 到哪了", "好的")
    assert t.replies == "目前没有需要您确认的操作。请问还有什么可以帮您？"


def test_a_message_not_understood_gets_one_question_never_the_list(talk, world):
    t = talk()("今天心情不错")
    assert t.replies == "抱歉，我没太明白您的意思，能换个说法吗？"
    assert t.replies.count("？") == 1 and EVERY_TASK not in t.replies


@dataclass
class Unsure:
    """A reader that cannot tell, with candidates best first (what the recognizer returns)."""

    candidates: tuple[str, ...]

    def generate(self, text: str, view: DialogueView) -> Reading:
        return Reading((CannotTell(candidates=self.candidates, confidence=0.2),), "zh")

    def reconsider(self, text: str, view: DialogueView) -> Reading:
        return Reading((CannotTell(confidence=0.1),), "zh")  # the second look has none


def _unsure_app(db, candidates):
    services = Services(
        scenarios=SCENARIOS, database_factory=lambda: db, executor_factory=fast_executor
    )
    services.commands = Unsure(candidates)  # type: ignore[assignment]
    return build_graph(checkpointer=InMemorySaver(), services=services)


def test_the_nearest_tasks_the_caller_may_use_best_first_at_most_three(db, world):
    nearest = (
        "NOTIFY_CUSTOMERS",  # staff only: never offered to a customer
        "URGE_DELIVERY",
        "CHECK_ORDER_STATUS",
        "REQUEST_REFUND",
        "CANCEL_ORDER",
    )
    out = say(_unsure_app(db, nearest), "那个单子你看着办吧", context=ALICE)
    reply = out["messages"][-1].content
    assert reply == "请问您是想催单、查询订单状态，还是想申请退款？"
    assert out["intent"] == UNKNOWN and "批量" not in reply


def test_one_near_task_is_asked_about_alone(db, world):
    out = say(_unsure_app(db, ("BOOK_FLIGHT",)), "那个票", context=ALICE)
    assert out["messages"][-1].content == "抱歉，我没太明白。请问您是想预订机票吗？"
