"""The confirmation request is LangChain's HITL shape; only understood answers decide."""

from __future__ import annotations

import dataclasses
from typing import Any, Literal, NotRequired

import pytest
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError
from typing_extensions import TypedDict

from contract.scenario import ScenarioSet
from nodes.call_words import call_words
from nodes.confirmation import confirmation_request, read_decision, read_decisions
from scenarios import SCENARIOS
from scenarios.transfer.tools import FINANCE_TOOLS
from tests.helpers import default_registry
from tools.executor.pipeline import ActionExecutor, Decision, PreparedCall
from tools.registry.context import ToolContext

# ---- LangChain v1's HITL types, written out from langchain.agents.middleware.human_in_the_loop
# (langchain is not installed here); `forbid` makes a stray or misspelt field fail.
_STRICT = ConfigDict(extra="forbid")


class UpstreamActionRequest(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    name: str
    args: dict[str, Any]
    description: NotRequired[str]


class UpstreamReviewConfig(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    action_name: str
    allowed_decisions: list[Literal["approve", "edit", "reject", "respond"]]
    args_schema: NotRequired[dict[str, Any]]


class UpstreamHITLRequest(TypedDict):
    action_requests: list[UpstreamActionRequest]
    review_configs: list[UpstreamReviewConfig]


def hitl_adapters() -> list[TypeAdapter[Any]]:
    adapters: list[TypeAdapter[Any]] = [TypeAdapter(UpstreamHITLRequest)]
    try:  # the real type, when langchain v1 is installed
        from langchain.agents.middleware.human_in_the_loop import HITLRequest  # noqa: PLC0415
    except ImportError:
        pass
    else:
        adapters.append(TypeAdapter(HITLRequest))
    return adapters


def agent_chat_ui_draws_buttons(value: Any) -> bool:
    """agent-chat-ui's isAgentInboxInterruptSchema (src/lib/agent-inbox-interrupt.ts)."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("action_requests"), list)
        and len(value["action_requests"]) > 0
        and all(
            isinstance(a, dict)
            and isinstance(a.get("name"), str)
            and isinstance(a.get("args"), dict)
            for a in value["action_requests"]
        )
        and isinstance(value.get("review_configs"), list)
        and len(value["review_configs"]) > 0
        and all(
            isinstance(c, dict)
            and isinstance(c.get("action_name"), str)
            and isinstance(c.get("allowed_decisions"), list)
            for c in value["review_configs"]
        )
    )


@pytest.fixture
def ctx(db) -> ToolContext:
    return ToolContext(user_id="u_10001", user_role="customer", resources=db)


@pytest.fixture
def words(ctx):
    """How the shipped scenarios word a call, in Chinese."""
    return call_words(ScenarioSet(SCENARIOS), "zh", ctx)


@pytest.fixture
def refund(ctx) -> PreparedCall:
    executor = ActionExecutor(default_registry())
    prepared = executor.prepare(
        {
            "name": "request_refund",
            "parameters": {"order_id": "OD-20240618-002", "reason": "电话13800138000"},
        },
        ctx,
    )
    assert isinstance(prepared, PreparedCall)
    return prepared


class PayArgs(BaseModel):
    account_id: str
    pin: str


def manual_call(tool: str, arguments: dict[str, Any]) -> PreparedCall:
    card = default_registry().get(tool if tool != "pay_bill" else "request_refund")
    assert card is not None
    if tool == "pay_bill":  # a PIN-taking tool, like finance's verify_identity
        card = dataclasses.replace(card, name="pay_bill", parameters=PayArgs)
    return PreparedCall(
        card=card,
        args=card.parameters.model_construct(**arguments),
        arguments=arguments,
        request_id=f"req_{tool}",
        fingerprint="f",
    )


VAULT_TOKEN = "pii:0123456789abcdef01234567"


def test_request_validates_as_langchain_hitl_request(refund, words):
    payload = confirmation_request([refund], "zh", words=words)
    for adapter in hitl_adapters():
        adapter.validate_python(payload)
    assert agent_chat_ui_draws_buttons(payload)
    action = payload["action_requests"][0]
    assert action["name"] == "申请退款"  # the card's title: the task, not the tool
    assert action["args"]["订单号"] == "OD-20240618-002"
    assert payload["review_configs"][0]["action_name"] == "申请退款"
    assert payload["review_configs"][0]["allowed_decisions"] == ["approve", "edit", "reject"]
    assert set(payload["review_configs"][0]["args_schema"]["properties"]) == {"订单号", "退款原因"}
    assert payload["actions"][0]["tool"] == "request_refund"  # for programs, not people
    assert payload["fields"][0][0] == {"label": "订单号", "argument": "order_id", "editable": True}


def test_the_strict_replica_catches_a_wrong_shape(refund):
    payload = confirmation_request([refund], "zh")
    broken = {**payload, "action_requests": [{"tool": "request_refund", "arguments": {}}]}
    with pytest.raises(ValidationError):
        TypeAdapter(UpstreamHITLRequest).validate_python(broken)


def test_request_keeps_a_question_and_masks_identifiers(refund, words):
    payload = confirmation_request([refund], "zh", words=words)
    assert "确认" in payload["question"]
    assert "13800138000" not in str(payload)
    assert refund.request_id not in str(payload), "request ids are internals"
    assert payload["action_requests"][0]["description"] in payload["question"]


@pytest.mark.parametrize("language", ["zh", "en"])
def test_what_a_person_reads_names_no_tool_argument_none_or_cents(refund, ctx, language):
    payload = confirmation_request(
        [refund], language, words=call_words(ScenarioSet(SCENARIOS), language, ctx)
    )
    read = [
        payload["question"],
        *(str(a) for a in payload["action_requests"]),
        *(c["action_name"] for c in payload["review_configs"]),
    ]
    for text in read:
        for internal in ("request_refund", "order_id", "=", "None", "cents", "36000", "3600 "):
            assert internal not in text, (internal, text)
    assert "36.00" in payload["question"] and "麻辣香锅" in payload["question"]


def test_a_call_no_scenario_words_is_said_from_its_card(refund):
    payload = confirmation_request([refund], "en")  # no words: the card alone
    description = payload["action_requests"][0]["description"]
    assert description.startswith("About to: File a refund request")
    assert "request_refund" not in description and "=" not in description


def test_no_edit_for_a_pin_or_a_vault_token():
    pin = manual_call("pay_bill", {"account_id": "ACC-1001", "pin": "123456"})
    flight = manual_call(
        "book_flight_ticket",
        {"flight_no": "CA1501", "departure_date": "2024-06-21", "passenger_id": VAULT_TOKEN},
    )
    payload = confirmation_request([pin, flight], "en", display={VAULT_TOKEN: "110101********1237"})
    for adapter in hitl_adapters():
        adapter.validate_python(payload)
    assert [c["allowed_decisions"] for c in payload["review_configs"]] == [
        ["approve", "reject"],
        ["approve", "reject"],
    ]
    assert all("args_schema" not in c for c in payload["review_configs"])
    assert "123456" not in str(payload)
    assert payload["actions"][0]["arguments"]["pin"] == "******"
    assert payload["actions"][1]["arguments"]["passenger_id"] == "110101********1237"
    assert VAULT_TOKEN not in str(payload)


# ---- reading the answer --------------------------------------------------------------------


def test_agent_chat_ui_approve_is_an_approval():
    assert read_decisions({"decisions": [{"type": "approve"}]}, 1) == [Decision("approve")]


def test_agent_chat_ui_reject_is_a_rejection():
    answer = {"decisions": [{"type": "reject", "message": "不需要了"}]}
    assert read_decisions(answer, 1) == [Decision("reject")]


def test_decisions_follow_the_actions_in_order():
    answer = {"decisions": [{"type": "reject", "message": "x"}, {"type": "approve"}]}
    assert read_decisions(answer, 2) == [Decision("reject"), Decision("approve")]


@pytest.mark.parametrize(
    "answer",
    [
        {"decisions": [{"type": "approve"}]},
        {"decisions": [{"type": "approve"}, {"type": "approve"}, {"type": "approve"}]},
        {"decisions": []},
    ],
)
def test_a_count_mismatch_asks_again(answer):
    assert read_decisions(answer, 2) is None


def test_edit_keeps_only_what_the_reviewer_changed(refund, words):
    request = confirmation_request([refund], "zh", words=words)
    action = request["action_requests"][0]
    edited = {**action["args"], "退款原因": "商品破损"}
    answer = {
        "decisions": [{"type": "edit", "edited_action": {"name": action["name"], "args": edited}}]
    }
    assert read_decisions(answer, 1, request=request) == [Decision("edit", {"reason": "商品破损"})]
    # Without the request the edited arguments are taken as they are.
    assert read_decisions(answer, 1) == [Decision("edit", edited)]


def test_an_edit_of_a_value_shown_in_other_words_asks_again(ctx):
    """An amount is shown in yuan ("80.00 元"): the card offers no edit, and an edit sent
    anyway is not read (a correction is typed: "改成50")."""
    card = next(c for c in FINANCE_TOOLS if c.name == "execute_transfer")
    arguments = {
        "account_id": "ACC-1001",
        "to_account": "ACC-2001",
        "amount_cents": 8000,
        "risk_ticket": "RISK-0123456789",
    }
    transfer = PreparedCall(
        card=card,
        args=card.parameters.model_construct(**arguments),
        arguments=arguments,
        request_id="req_transfer",
        fingerprint="f",
    )
    request = confirmation_request(
        [transfer], "zh", words=call_words(ScenarioSet(SCENARIOS), "zh", ctx)
    )
    action = request["action_requests"][0]
    assert request["review_configs"][0]["allowed_decisions"] == ["approve", "reject"]
    assert action["args"]["转账金额"] == "80.00 元"
    assert "RISK-0123456789" not in str(action) and "risk" not in str(action).lower()
    assert action["description"] == "从您尾号 1001 的账户向尾号 2001 的账户转账 80.00 元。"
    edited = {**action["args"], "转账金额": "8000"}
    answer = {
        "decisions": [{"type": "edit", "edited_action": {"name": action["name"], "args": edited}}]
    }
    assert read_decisions(answer, 1, request=request) is None


def test_an_edit_changing_nothing_is_an_approval(refund, words):
    request = confirmation_request([refund], "zh", words=words)
    action = request["action_requests"][0]
    answer = {
        "decisions": [
            {"type": "edit", "edited_action": {"name": action["name"], "args": action["args"]}}
        ]
    }
    assert read_decisions(answer, 1, request=request) == [Decision("approve")]


def test_an_edit_may_not_change_the_tool(refund):
    request = confirmation_request([refund], "zh")
    answer = {
        "decisions": [
            {"type": "edit", "edited_action": {"name": "execute_transfer", "args": {"amount": 1}}}
        ]
    }
    assert read_decisions(answer, 1, request=request) is None


def test_an_edit_the_request_did_not_allow_asks_again():
    pin = manual_call("pay_bill", {"account_id": "ACC-1001", "pin": "123456"})
    request = confirmation_request([pin], "zh")
    edit = {"type": "edit", "edited_action": {"name": "pay_bill", "args": {"pin": "000000"}}}
    assert read_decisions({"decisions": [edit]}, 1, request=request) is None
    assert (
        read_decisions({"decision": "edit", "parameters": {"pin": "0"}}, 1, request=request) is None
    )
    assert read_decisions({"decisions": [{"type": "approve"}]}, 1, request=request) == [
        Decision("approve")
    ]


def test_the_projects_own_decision_applies_to_every_action():
    assert read_decisions({"decision": "approve"}, 2) == [Decision("approve")] * 2
    assert read_decisions({"decision": "reject"}, 1) == [Decision("reject")]
    assert read_decisions({"decision": "edit", "parameters": {"reason": "x"}}, 1) == [
        Decision("edit", {"reason": "x"})
    ]


@pytest.mark.parametrize(
    "answer", ["确认", "确认退款", "好的", "好的，谢谢", "是", "yes", "Yes please", "ok", "OK!"]
)
def test_words_that_approve(answer):
    assert read_decisions(answer, 1) == [Decision("approve")]
    assert read_decisions(answer, 2) == [Decision("approve")] * 2


@pytest.mark.parametrize(
    "answer", ["取消", "不确认", "算了", "不要", "不要退了", "no", "No thanks", "cancel"]
)
def test_words_that_reject(answer):
    assert read_decisions(answer, 1) == [Decision("reject")]


@pytest.mark.parametrize(
    "answer",
    [
        "嗯……那个……",
        "",
        "   ",
        "对了，我还想查个订单",
        "行李箱坏了",
        "yesterday I ordered",
        "是不是已经退款了？",
        "可以吗",
        None,
        42,
        [],
        {"decision": "maybe"},
        {"decision": "edit"},
        {"decisions": [{"type": "maybe"}]},
        {"decisions": [{"type": "edit"}]},
        {"decisions": [{"type": "edit", "edited_action": {"name": "x", "args": "no"}}]},
        {"decisions": "approve"},
        {"resume": "approve"},
        {"approve": True},
    ],
)
def test_an_unknown_answer_decides_nothing(answer):
    assert read_decisions(answer, 1) is None


def test_compat_wrapper_reads_new_shapes_and_rejects_the_rest():
    assert read_decision({"decisions": [{"type": "approve"}]}) == Decision("approve")
    assert read_decision(Decision("approve")) == Decision("approve")
    assert read_decision("嗯……") == Decision("reject")
    assert read_decision({"decision": "maybe"}) == Decision("reject")
