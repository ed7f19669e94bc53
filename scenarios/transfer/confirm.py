"""What a transfer will do, said before the money moves: from and to which account, how much.

"About to run: execute_transfer (account_id=ACC-1001, to_account=ACC-2001, amount_cents=8000,
risk_ticket=RISK-…)" becomes "从您尾号 1001 的账户向尾号 2001 的账户转账 80.00 元。": accounts
masked to their last digits, the amount in yuan, no risk ticket.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from contract.scenario import Confirmer, Speaker, Wording
from scenarios.transfer.wording import say_amount
from tools.registry.context import ToolContext

WORDING: Wording = {
    "confirm.execute_transfer": {
        "zh": "从您尾号 {payer} 的账户向尾号 {payee} 的账户转账 {amount}。",
        "en": "Move {amount} from your account ending {payer} to the account ending {payee}.",
    },
}

TAIL = 4
"""How many last characters of an account number a confirmation shows."""


def tail(account: Any) -> str:
    """An account number masked to its last digits ("ACC-2001" → "2001")."""
    return str(account or "")[-TAIL:]


def transfer(arguments: Mapping[str, Any], ctx: ToolContext, speaker: Speaker) -> str:
    """Say the transfer: the caller's account, the payee's, the amount."""
    return speaker.say(
        "confirm.execute_transfer",
        payer=tail(arguments.get("account_id")),
        payee=tail(arguments.get("to_account")),
        amount=say_amount(int(arguments.get("amount_cents") or 0), speaker.language),
    )


CONFIRM: dict[str, Confirmer] = {"execute_transfer": transfer}
