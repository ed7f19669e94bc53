"""What the finance agent says, in zh and en."""

from __future__ import annotations

from typing import TypedDict

from contract.scenario import Describer, Speaker, Wording
from scenarios.transfer.tools import BalanceCheck, BalancesData, RefundDecision
from state import AgentState, ToolResult
from tools.executor.envelope import result_data

WORDING: Wording = {
    "beyond.transfer_reversal": {
        "zh": "已经发起的转账不能在这里撤回，正在为您转接人工客服核实处理，请稍候。",
        "en": (
            "I can't take back a transfer here; I'm passing you to a human agent to check it, "
            "please hold on."
        ),
    },
    "beyond.charge_dispute": {
        "zh": "重复或错误的扣款需要财务人工核实，这里不能处理，正在为您转接人工客服，请稍候。",
        "en": (
            "A double or wrong charge has to be checked by our finance staff, not here; I'm "
            "passing you to a human agent, please hold on."
        ),
    },
    "intent.TRANSFER_MONEY": {"zh": "转账", "en": "make a transfer"},
    "intent.QUERY_BALANCE": {"zh": "查询余额", "en": "check your balance"},
    "balance_one": {
        "zh": "您的账户 {account_id} 当前余额 {amount} 元。",
        "en": "Your account {account_id} holds {amount} yuan.",
    },
    "balance_many": {"zh": "您的账户余额：{accounts}。", "en": "Your balances: {accounts}."},
    "balance_item": {"zh": "{account_id} {amount} 元", "en": "{account_id} {amount} yuan"},
    "balance_none": {
        "zh": "您名下还没有账户。",
        "en": "There is no account in your name.",
    },
    "slot.to_account": {
        "zh": "收款账户（ACC-NNNN）",
        "en": "payee account (ACC-NNNN)",
    },
    "slot.amount_cents": {
        "zh": "转账金额",
        "en": "amount",
    },
    "slot.pin": {
        "zh": "6 位支付密码",
        "en": "6-digit payment PIN",
    },
    "transfer_done": {
        "zh": "已向{payee}（{to_account}）转账 {amount} 元，交易号 {transfer_id}。",
        "en": "Sent ¥{amount} to {payee} ({to_account}); transaction {transfer_id}.",
    },
    "transfer_wrong_pin": {
        "zh": "支付密码不正确，转账已停止，没有扣款。",
        "en": "The payment PIN is wrong; the transfer was stopped and nothing was taken.",
    },
    "transfer_insufficient": {
        "zh": "余额不足（可用 {balance} 元），转账已停止，没有扣款。",
        "en": "Insufficient balance (¥{balance} available); the transfer was stopped and nothing was taken.",
    },
    "transfer_no_payee": {
        "zh": "收款账户 {to_account} 不存在，转账已停止，没有扣款。",
        "en": "Payee account {to_account} does not exist; the transfer was stopped and nothing was taken.",
    },
    "transfer_reversed": {
        "zh": "转账未能完成清算，款项已原路退回您的账户，请稍后再试。",
        "en": "The transfer could not be cleared, so the money was returned to your account. Please try again later.",
    },
    "large_refund_approved": {
        "zh": "订单 {order_id} 的退款金额较大（{amount} 元），已转交财务处理：已批准，退款单号 {refund_id}，将原路退回。",
        "en": "The refund for order {order_id} ({amount} yuan) is above my limit, so finance handled it: approved, refund {refund_id}.",
    },
}


class TransferOutcome(TypedDict, total=False):
    """What a step of the transfer chain answers, read as one.

    The transfer when it ran (``TransferData``), or the refusal's details (``reason``, the
    balance that fell short).
    """

    amount_cents: int
    status: str
    to_account: str
    transfer_id: str
    reason: str
    balance_cents: int


def describe_transfer(result: ToolResult, state: AgentState, speaker: Speaker) -> str | None:
    """Report the transfer, or the finance check that refused it before any money moved.

    A check's refusal (wrong PIN, too little money, no such payee) stops the chain before
    ``execute_transfer`` moves anything, so "nothing was taken" is true of it. Every other
    failure (unknown outcome, a reversed transfer, an outage) is the generic sentence's.
    """
    data = result_data(result, TransferOutcome)
    slots = state.get("slots") or {}
    amount = f"{(slots.get('amount_cents') or data.get('amount_cents') or 0) / 100:,.2f}"
    reason = data.get("reason")
    if result.get("status") == "success":
        if result.get("tool") != "execute_transfer":
            return None  # a step of the chain is not the answer
        name = "transfer_done" if data.get("status") == "completed" else "transfer_reversed"
        payee = next(
            (
                result_data(s, BalanceCheck).get("payee_name")
                for s in state.get("tool_results") or []
                if s.get("tool") == "check_balance" and s.get("data")
            ),
            "",
        )
        return speaker.say(
            name,
            amount=amount,
            payee=payee,
            to_account=data.get("to_account", ""),
            transfer_id=data.get("transfer_id", ""),
        )
    if result.get("error_type") != "user_fixable":
        return None
    if reason == "wrong_pin":
        return speaker.say("transfer_wrong_pin")
    if reason == "insufficient":
        return speaker.say(
            "transfer_insufficient", balance=f"{data.get('balance_cents', 0) / 100:,.2f}"
        )
    if reason == "no_payee":
        return speaker.say("transfer_no_payee", to_account=slots.get("to_account", ""))
    return None


def describe_large_refund(result: ToolResult, state: AgentState, speaker: Speaker) -> str | None:
    """Report finance's approval of a large refund (a review is the generic sentence's)."""
    data = result_data(result, RefundDecision)
    if result.get("status") != "success" or data.get("status") != "approved":
        return None
    return speaker.say("large_refund_approved", amount=f"{data['amount_cents'] / 100:,.2f}", **data)


def describe_balance(result: ToolResult, state: AgentState, speaker: Speaker) -> str | None:
    """Say what each of the caller's accounts holds."""
    if result.get("status") != "success":
        return None
    accounts = result_data(result, BalancesData).get("accounts") or []
    if not accounts:
        return speaker.say("balance_none")
    shown = [
        {"account_id": row["account_id"], "amount": f"{row['balance_cents'] / 100:,.2f}"}
        for row in accounts
    ]
    if len(shown) == 1:
        return speaker.say("balance_one", **shown[0])
    items = ("、" if speaker.language == "zh" else "; ").join(
        speaker.say("balance_item", **row) for row in shown
    )
    return speaker.say("balance_many", accounts=items)


DESCRIBE: dict[str, Describer] = {
    **dict.fromkeys(
        ("verify_identity", "check_balance", "assess_transfer_risk", "execute_transfer"),
        describe_transfer,
    ),
    "approve_large_refund": describe_large_refund,
    "query_my_balance": describe_balance,
}


def say_amount(cents: int, language: str) -> str:
    """An amount in cents as a person says it: "50.00 元", "50.00 yuan"."""
    unit = "yuan" if language == "en" else "元"
    return f"{cents / 100:,.2f} {unit}"
