"""What the finance agent says, in zh and en."""

from __future__ import annotations

from typing import Any

from nodes.tasks import Describer, Speaker, Wording
from state import AgentState, ToolResult

WORDING: Wording = {
    "beyond.transfer_reversal": {
        "zh": "已经发起的转账不能在这里撤回，正在为您转接人工客服核实处理，请稍候。",
        "en": (
            "I can't take back a transfer here; I'm passing you to a human agent to check it, "
            "please hold on."
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
    "balance_failed": {
        "zh": "余额暂时查不到，请稍后再试。",
        "en": "I can't look your balance up right now; please try again shortly.",
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
    "transfer_review": {
        "zh": "这笔 {amount} 元的转账需要风控审核，已提交，预计 2 小时内完成（交易号 {transfer_id}）。",
        "en": "This ¥{amount} transfer needs a risk review; it has been submitted and should complete within 2 hours (transaction {transfer_id}).",
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
    "transfer_in_progress": {
        "zh": "这笔转账正在处理中，结果暂时无法确认，请勿重复转账；稍后可在交易记录中查看，或凭参考号 {request_id} 向人工客服查询。",
        "en": "This transfer is still being processed and its outcome is not known yet. Please don't send it again; check your transaction history later, or ask an agent with reference {request_id}.",
    },
    "transfer_failed": {
        "zh": "转账暂时无法完成，没有扣款，请稍后再试。",
        "en": "The transfer can't be completed right now; nothing was taken.",
    },
    "large_refund_approved": {
        "zh": "订单 {order_id} 的退款金额较大（{amount} 元），已转交财务处理：已批准，退款单号 {refund_id}，将原路退回。",
        "en": "The refund for order {order_id} ({amount} yuan) is above my limit, so finance handled it: approved, refund {refund_id}.",
    },
    "large_refund_review": {
        "zh": "订单 {order_id} 的退款金额较大（{amount} 元），已转交财务人工审核（退款单号 {refund_id}）。",
        "en": "The refund for order {order_id} ({amount} yuan) went to finance for review (refund {refund_id}).",
    },
}


def describe_transfer(result: ToolResult, state: AgentState, speaker: Speaker) -> str:
    """Report the transfer, or the step that stopped it and that nothing was taken."""
    data: dict[str, Any] = result.get("data") or {}
    slots = state.get("slots") or {}
    amount = f"{(slots.get('amount_cents') or data.get('amount_cents') or 0) / 100:,.2f}"
    reason = data.get("reason")
    if result.get("status") == "success" and result.get("tool") == "execute_transfer":
        name = {"pending_review": "transfer_review", "completed": "transfer_done"}.get(
            str(data.get("status")), "transfer_reversed"
        )
        payee = next(
            (
                (s.get("data") or {}).get("payee_name")
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
    if result.get("status") == "unknown":  # it may have happened: never say nothing was taken
        return speaker.say("transfer_in_progress", request_id=result.get("request_id", ""))
    if reason == "wrong_pin":
        return speaker.say("transfer_wrong_pin")
    if reason == "insufficient":
        return speaker.say(
            "transfer_insufficient", balance=f"{data.get('balance_cents', 0) / 100:,.2f}"
        )
    if reason == "no_payee":
        return speaker.say("transfer_no_payee", to_account=slots.get("to_account", ""))
    if reason == "compensated":
        return speaker.say("transfer_reversed")
    return speaker.say("transfer_failed")


def describe_large_refund(result: ToolResult, state: AgentState, speaker: Speaker) -> str:
    """Report finance's decision on a large refund."""
    data: dict[str, Any] = result.get("data") or {}
    if result.get("status") != "success":
        return speaker.say("handoff", task=speaker.label(state.get("intent", "")))
    name = "large_refund_approved" if data.get("status") == "approved" else "large_refund_review"
    return speaker.say(name, amount=f"{data['amount_cents'] / 100:,.2f}", **data)


def describe_balance(result: ToolResult, state: AgentState, speaker: Speaker) -> str:
    """Say what each of the caller's accounts holds."""
    if result.get("status") != "success":
        return speaker.say("balance_failed")
    accounts = (result.get("data") or {}).get("accounts") or []
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
