"""A pack's words and values from its cards: labels, examples, typed values, sentences."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal

import pytest
from pydantic import Field

from contract.scenario import ScenarioSet
from nodes.wording import Voice
from packs import Refusal, ToolAnnotation, pack_from_functions
from packs.docs import example_values, label, request_examples, result_fields, task_label
from packs.functions import parameters_model
from packs.values import ToolValues, chinese_number, shape_of
from state import AgentState
from tools.executor.envelope import envelope

TODAY = date(2024, 6, 18)  # a Tuesday


def book_class(member_id: str, class_id: str, plan: Literal["annual", "monthly"] = "annual") -> Any:
    """Book a member into a class (预约课程).

    Args:
        member_id: The member's id (会员号), such as 'M-1001'.
        class_id: The class number (课程号), such as 'C-0620-YOGA'.
        plan: The plan, 'annual' (年卡) or 'monthly' (月卡).

    Returns:
        booking_id: The booking number (预约号).
        seats_left: Seats left after it (剩余名额).

    Examples:
        book me into C-0620-YOGA
        - 帮我约 C-0621-HIIT
    """
    return {"booking_id": "B-1", "class_id": class_id, "seats_left": 2, "paid": True}


def freeze_membership(member_id: str, days: Annotated[int, Field(ge=7, le=30)]) -> Any:
    """Freeze a membership (冻结会员卡).

    Args:
        member_id: The member's id, such as 'M-1001'.
        days: How many days (冻结天数).
    """
    raise Refusal("already frozen this year", zh="今年已经冻结过")


def list_classes(day: date, phone: str = "") -> Any:
    """List the classes on a day.

    Args:
        day: The day.
        phone: The caller's phone number.
    """
    return [{"class_id": f"C-0620-{n}", "time": "09:00"} for n in ("YOGA", "SPIN")]


def read(fn: Any, text: str) -> dict[str, Any]:
    found = ToolValues(parameters_model(fn)).read(text, today=TODAY)
    return {"slots": found.slots, "invalid": found.invalid, "several": found.several}


def test_labels_examples_and_fields_come_from_the_docstring():
    assert label("The member's id (会员号), such as 'M-1001'.", "member_id") == {
        "en": "member's id",
        "zh": "会员号",
    }
    assert label(None, "seats_left") == {"en": "seats left", "zh": "seats left"}
    assert task_label("Book a member into a class (预约课程).", "book_class") == {
        "en": "book a member into a class",
        "zh": "预约课程",
    }
    assert example_values("The member's id, such as 'M-1001' or 'M-2002'.") == ["M-1001", "M-2002"]
    assert example_values("Either 'annual' or 'monthly'.") == []  # choices, not examples
    assert result_fields(book_class)["seats_left"] == {
        "en": "seats left after it",
        "zh": "剩余名额",
    }
    assert request_examples(book_class, ["约一节课"]) == {
        "en": ("Book a member into a class.", "book me into C-0620-YOGA"),
        "zh": ("预约课程", "帮我约 C-0621-HIIT", "约一节课"),
    }


def test_a_code_learns_its_shape_from_the_examples():
    pattern = shape_of(["C-0620-YOGA"])
    assert pattern is not None
    assert [m.group(0) for m in pattern.finditer("c-0621-hiit or C-0620-PILATES, not C-620-X")] == [
        "c-0621-hiit",
        "C-0620-PILATES",
    ]
    assert shape_of(["annual"]) is None and shape_of(["42"]) is None  # a word, an amount


@pytest.mark.parametrize(
    ("text", "slots", "several"),
    [
        ("book me into C-0620-YOGA", {"class_id": "C-0620-YOGA"}, {}),
        (
            "我是 m-1001，约 c-0620-yoga 年卡",
            {"member_id": "M-1001", "class_id": "C-0620-YOGA", "plan": "annual"},
            {},
        ),
        ("C-0620-YOGA and C-0621-HIIT", {}, {"class_id": ("C-0620-YOGA", "C-0621-HIIT")}),
        (
            "ＣＬＡＳＳ Ｃ－０６２０－ＹＯＧＡ monthly",
            {"class_id": "C-0620-YOGA", "plan": "monthly"},
            {},
        ),
    ],
)
def test_codes_and_choices_are_read_by_shape_and_words(text, slots, several):
    assert read(book_class, text) == {"slots": slots, "invalid": {}, "several": several}


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("classes on 2024-06-20", "2024-06-20"),
        ("6月20号有什么课", "2024-06-20"),
        ("what's on June 21st", "2024-06-21"),
        ("20 June please", "2024-06-20"),
        ("6/21", "2024-06-21"),
        ("明天呢", "2024-06-19"),
        ("the day after tomorrow", "2024-06-20"),
        ("周五有课吗", "2024-06-21"),
        ("on Monday", "2024-06-24"),
        ("25号", "2024-06-25"),
        ("1月5日", "2025-01-05"),  # the next one to come
        ("6月1日", "2024-06-01"),  # passed less than a month ago: this year's
    ],
)
def test_a_date_is_read_in_its_usual_forms(text, day):
    assert read(list_classes, text)["slots"] == {"day": day}


def test_a_number_is_the_one_that_is_no_part_of_another_value():
    assert read(freeze_membership, "freeze M-1001 for 14 days")["slots"] == {
        "member_id": "M-1001",
        "days": 14,
    }
    assert read(freeze_membership, "冻结十四天")["slots"] == {"days": 14}
    assert read(freeze_membership, "冻结两周")["slots"] == {}  # a week is no counter of days
    assert read(freeze_membership, "between 10 and 20 days")["slots"] == {}  # two numbers: not read
    assert chinese_number("三十") == 30 and chinese_number("二十五") == 25


def test_a_value_that_breaks_its_constraint_is_invalid_with_a_reason():
    found = read(freeze_membership, "freeze it for 60 days")
    assert found["slots"] == {} and found["invalid"] == {"days": "60: limits.days"}
    pack = pack_from_functions("gym", [freeze_membership], policy="")
    assert pack.scenario.wording["reason.limits.days"] == {
        "zh": "需在 7 到 30 之间",
        "en": "it must be between 7 and 30",
    }
    assert pack.scenario.wording["invalid.days"]["zh"].endswith("请重新提供冻结天数。")


def test_a_phone_is_read_by_its_name_when_no_example_shows_its_shape():
    assert read(list_classes, "my number is 13800001111, classes tomorrow")["slots"] == {
        "phone": "13800001111",
        "day": "2024-06-19",
    }


def _voice(pack: Any, language: str) -> Voice:
    return Voice(ScenarioSet([pack.scenario]), language, pack.scenario)


def test_a_result_is_said_in_sentences_from_the_card():
    pack = pack_from_functions("gym", [book_class, list_classes], policy="")
    state: AgentState = {"slots": {}}
    result = envelope(
        request_id="r1", tool="book_class", status="success", data=book_class("M-1", "C-0620-YOGA")
    )
    zh = pack.scenario.describe["book_class"](result, state, _voice(pack, "zh"))
    assert zh == "好的，已为您预约课程。预约号：B-1；课程号：C-0620-YOGA；剩余名额：2；paid：是"
    en = pack.scenario.describe["book_class"](result, state, _voice(pack, "en"))
    assert en.startswith("Done: book a member into a class. booking number: B-1;")
    listed = envelope(
        request_id="r1", tool="list_classes", status="success", data=list_classes(TODAY)
    )
    text = pack.scenario.describe["list_classes"](listed, state, _voice(pack, "en"))
    assert text == (
        "Here is what I found (list the classes on a day):\n"
        "1. class number: C-0620-YOGA; time: 09:00\n2. class number: C-0620-SPIN; time: 09:00"
    )
    empty = envelope(request_id="r1", tool="list_classes", status="success", data=[])
    assert "没有找到" in pack.scenario.describe["list_classes"](empty, state, _voice(pack, "zh"))


def test_a_refusal_is_said_in_the_failure_vocabulary_with_its_reason_in_the_users_language():
    pack = pack_from_functions("gym", [freeze_membership], policy="")
    card = pack.cards[0]
    with pytest.raises(Exception) as raised:
        card.handler(card.parameters(member_id="M-1", days=10), None)  # type: ignore[arg-type]
    error = raised.value
    result = envelope(
        request_id="r1",
        tool="freeze_membership",
        status="failed",
        error_type="user_fixable",
        message=str(error),
        data=error.details,  # type: ignore[attr-defined]
    )
    zh = pack.scenario.describe["freeze_membership"](result, {"slots": {}}, _voice(pack, "zh"))
    assert zh == "抱歉，按当前情况无法冻结会员卡，没有执行任何操作。原因：今年已经冻结过。"
    en = pack.scenario.describe["freeze_membership"](result, {"slots": {}}, _voice(pack, "en"))
    assert "as things stand" in en and en.endswith("Reason: already frozen this year.")


def test_a_tools_own_wording_wins():
    def said(data: Any, language: str) -> str | None:
        return f"已约好 {data['class_id']}" if language == "zh" else None

    pack = pack_from_functions(
        "gym", [book_class], policy="", annotations={"book_class": ToolAnnotation(describe=said)}
    )
    result = envelope(
        request_id="r1", tool="book_class", status="success", data=book_class("M-1", "C-0620-YOGA")
    )
    describe = pack.scenario.describe["book_class"]
    assert describe(result, {"slots": {}}, _voice(pack, "zh")) == "已约好 C-0620-YOGA"
    assert describe(result, {"slots": {}}, _voice(pack, "en")).startswith("Done:")


def test_the_examples_of_docstrings_and_annotations_train_the_recognizer():
    pack = pack_from_functions(
        "gym",
        [book_class, freeze_membership],
        policy="",
        annotations={"freeze_membership": ToolAnnotation(examples=("freeze my card for 14 days",))},
        examples={"freeze_membership": ["冻结会员卡20天"]},
    )
    assert pack.scenario.examples["freeze_membership"] == {
        "en": ("Freeze a membership.", "freeze my card for 14 days"),
        "zh": ("冻结会员卡", "冻结会员卡20天"),
    }
    assert "book me into C-0620-YOGA" in pack.scenario.examples["book_class"]["en"]
