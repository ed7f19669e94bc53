"""The transfer chain, one tool per step: verify, check balance, assess risk, execute.

Only the finance agent has these tools; the customer-service agent hands over to it.

Each step's result feeds the next (the risk check needs the balance step's figures, the
execution needs the risk ticket), and the executor refuses a step whose prerequisite has not
succeeded in the task. Money moves inside one database transaction, so it is never created
or lost; if clearing fails after the money moved, a compensating transaction puts it back.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TypedDict, cast

from pydantic import BaseModel, ConfigDict, Field

from scenarios.transfer.seed import pin_hash
from security.vault import TOKEN_PREFIX, IdentityVault
from storage.db import Database, amend_write
from tools.executor.errors import CompensatedError, ResourceNotFoundError, UserFixableError
from tools.registry.cards import ToolCard
from tools.registry.context import ToolContext
from tools.registry.types import PositiveCents

RISK_REVIEW_THRESHOLD = 0.7
LARGE_TRANSFER_CENTS = 200_000
"""2,000 yuan and more counts as a large transfer."""
ACCOUNT_PATTERN = r"^ACC-\d{4}$"


class TransferRecord(TypedDict):
    """A transfer as the ledger and the clearing network see it."""

    transfer_id: str
    from_account: str
    to_account: str
    amount_cents: int
    risk_score: float


class TransferData(TransferRecord):
    """What ``execute_transfer`` answers: the transfer and its status."""

    status: str
    """``completed``, ``pending_review`` (held for risk review), or as stored (a replay)."""


class IdentityVerified(TypedDict):
    """What ``verify_identity`` answers."""

    account_id: str
    verified: bool


class BalanceCheck(TypedDict):
    """What ``check_balance`` answers."""

    balance_cents: int
    payee_name: str


class RiskAssessment(TypedDict):
    """What ``assess_transfer_risk`` answers: the score, the ticket that proves it, review."""

    risk_score: float
    risk_ticket: str
    review: bool


class RefundDecision(TypedDict):
    """What ``approve_large_refund`` answers."""

    order_id: str
    refund_id: str
    amount_cents: int
    status: str
    already_requested: bool


class AccountBalanceRow(TypedDict):
    """One of the caller's accounts (``AccountBalance``)."""

    account_id: str
    balance_cents: int


class BalancesData(TypedDict):
    """What ``query_my_balance`` answers (``Balances``)."""

    accounts: list[AccountBalanceRow]


Clearing = Callable[[TransferRecord], None]
"""Tells the clearing network about a transfer; raises if it cannot be cleared."""


def _accept_all(transfer: TransferRecord) -> None:
    """The default clearing network accepts every transfer."""


class FinanceBackends:
    """Backends the finance tools need beyond the database (swappable in tests)."""

    clearing: Clearing = staticmethod(_accept_all)


class AccountRef(BaseModel):
    """The payer's account."""

    model_config = ConfigDict(extra="forbid")

    account_id: str = Field(pattern=ACCOUNT_PATTERN, description="The payer's account, ACC-NNNN.")


class IdentityCheck(AccountRef):
    """Arguments of identity verification."""

    pin: str = Field(
        pattern=r"^(\d{6}|pii:[0-9a-f]{24})$",
        description="The 6-digit payment PIN, or the vault token slot filling stored it as.",
    )


class TransferPlan(AccountRef):
    """Arguments of the balance and risk steps."""

    to_account: str = Field(pattern=ACCOUNT_PATTERN, description="The payee's account.")
    amount_cents: PositiveCents = Field(le=100_000_000, description="Amount in cents.")


class TransferOrder(TransferPlan):
    """Arguments of the execution step."""

    risk_ticket: str = Field(min_length=8, description="From the risk check; never invented.")


def payer_account(db: Database, user_id: str) -> str | None:
    """Return the account a transfer is paid from: the trusted caller's first account."""
    row = db.query_one(
        "SELECT account_id FROM accounts WHERE user_id = ? ORDER BY account_id LIMIT 1",
        (user_id,),
    )
    return None if row is None else str(row["account_id"])


def account_owner(args: AccountRef, ctx: ToolContext) -> str | None:
    """Return the owner of the payer's account."""
    row = ctx.database().query_one(
        "SELECT user_id FROM accounts WHERE account_id = ?", (args.account_id,)
    )
    return None if row is None else str(row["user_id"])


def verify_identity(args: IdentityCheck, ctx: ToolContext) -> IdentityVerified:
    """Check the payment PIN of the payer's account."""
    row = ctx.database().query_one(
        "SELECT pin_hash FROM accounts WHERE account_id = ?", (args.account_id,)
    )
    if row is None:
        msg = f"account {args.account_id} not found"
        raise ResourceNotFoundError(msg)
    pin = args.pin
    if pin.startswith(TOKEN_PREFIX):
        pin = IdentityVault(ctx.database()).reveal(ctx.user_id, pin) or ""
    if row["pin_hash"] != pin_hash(args.account_id, pin):
        msg = "the payment PIN is wrong"
        raise UserFixableError(msg, details={"step": "verify_identity", "reason": "wrong_pin"})
    return {"account_id": args.account_id, "verified": True}


def check_balance(args: TransferPlan, ctx: ToolContext) -> BalanceCheck:
    """Check the payer can cover the amount and the payee exists."""
    db = ctx.database()
    payer = db.query_one(
        "SELECT balance_cents FROM accounts WHERE account_id = ?", (args.account_id,)
    )
    payee = db.query_one(
        "SELECT holder_name FROM accounts WHERE account_id = ?", (args.to_account,)
    )
    if payee is None or args.to_account == args.account_id:
        msg = f"payee account {args.to_account} does not exist"
        raise UserFixableError(msg, details={"step": "check_balance", "reason": "no_payee"})
    balance = int(payer["balance_cents"]) if payer else 0
    if balance < args.amount_cents:
        msg = "insufficient balance"
        raise UserFixableError(
            msg,
            details={"step": "check_balance", "reason": "insufficient", "balance_cents": balance},
        )
    return {"balance_cents": balance, "payee_name": payee["holder_name"]}


def assess_transfer_risk(args: TransferPlan, ctx: ToolContext) -> RiskAssessment:
    """Score the transfer: large amounts, new payees and draining the account add risk."""
    db = ctx.database()
    payer = db.query_one(
        "SELECT balance_cents FROM accounts WHERE account_id = ?", (args.account_id,)
    )
    balance = int(payer["balance_cents"]) if payer else 0
    history = db.query_one(
        "SELECT COUNT(*) AS n FROM transfers WHERE from_account = ? AND to_account = ?"
        " AND status = 'completed'",
        (args.account_id, args.to_account),
    )
    paid_before = int(history["n"]) if history else 0
    score = 0.1
    if args.amount_cents >= LARGE_TRANSFER_CENTS:
        score += 0.4
    if not paid_before:
        score += 0.2
    if balance and args.amount_cents > balance * 0.5:
        score += 0.2
    score = round(min(score, 1.0), 2)
    raw = f"{ctx.session_id}|{ctx.task_id}|{args.model_dump_json()}|{score}"
    ticket = "RISK-" + hashlib.sha256(raw.encode()).hexdigest()[:12].upper()
    return {"risk_score": score, "risk_ticket": ticket, "review": score >= RISK_REVIEW_THRESHOLD}


def execute_transfer(args: TransferOrder, ctx: ToolContext) -> TransferData:
    """Move the money atomically; above the risk threshold, hold it for review instead."""
    db = ctx.database()
    score = assess_transfer_risk(args, ctx)["risk_score"]
    # The request id names "this amount to this payee in this task", not the ticket, which
    # is re-issued on every assessment; direct calls (no executor) keep the ticket.
    identity = ctx.request_id or args.risk_ticket
    transfer_id = "TX-" + hashlib.sha256(identity.encode()).hexdigest()[:10].upper()
    record: TransferRecord = {
        "transfer_id": transfer_id,
        "from_account": args.account_id,
        "to_account": args.to_account,
        "amount_cents": args.amount_cents,
        "risk_score": score,
    }
    with db.transaction() as conn:
        ledger = ctx.ledger(conn, tool="execute_transfer")
        done = conn.execute(
            "SELECT status FROM transfers WHERE transfer_id = ?", (transfer_id,)
        ).fetchone()
        if done is not None:
            return {**record, "status": done["status"]}
        if score >= RISK_REVIEW_THRESHOLD:
            conn.execute(
                "INSERT INTO transfers (transfer_id, from_account, to_account, amount_cents,"
                " status, risk_score, note) VALUES (?, ?, ?, ?, 'pending_review', ?, ?)",
                (
                    transfer_id,
                    args.account_id,
                    args.to_account,
                    args.amount_cents,
                    score,
                    "held for risk review",
                ),
            )
            return ledger.record(TransferData(**record, status="pending_review"))
        moved = conn.execute(
            "UPDATE accounts SET balance_cents = balance_cents - ? WHERE account_id = ?"
            " AND balance_cents >= ?",
            (args.amount_cents, args.account_id, args.amount_cents),
        ).rowcount
        if not moved:
            msg = "insufficient balance"
            raise UserFixableError(
                msg, details={"step": "execute_transfer", "reason": "insufficient"}
            )
        conn.execute(
            "UPDATE accounts SET balance_cents = balance_cents + ? WHERE account_id = ?",
            (args.amount_cents, args.to_account),
        )
        conn.execute(
            "INSERT INTO transfers (transfer_id, from_account, to_account, amount_cents, status,"
            " risk_score) VALUES (?, ?, ?, ?, 'completed', ?)",
            (transfer_id, args.account_id, args.to_account, args.amount_cents, score),
        )
        ledger.record(TransferData(**record, status="completed"))
    try:
        FinanceBackends.clearing(record)
    except Exception as exc:
        compensate(db, record, reason=f"clearing failed: {exc}", request_id=ctx.request_id)
        msg = "the transfer could not be cleared; the money was returned"
        raise CompensatedError(
            msg,
            details={
                "step": "execute_transfer",
                "reason": "compensated",
                "transfer_id": transfer_id,
            },
        ) from exc
    return {**record, "status": "completed"}


def compensate(db: Database, record: TransferRecord, *, reason: str, request_id: str = "") -> None:
    """Reverse a completed transfer in one transaction: the money goes back.

    The transfer's ledger entry is amended in the same transaction, so a replay of the
    request answers "reversed" and neither moves the money again nor reverses it twice.
    """
    with db.transaction() as conn:
        if request_id:
            amend_write(conn, request_id, {**record, "status": "reversed", "note": reason})
        conn.execute(
            "UPDATE accounts SET balance_cents = balance_cents - ? WHERE account_id = ?",
            (record["amount_cents"], record["to_account"]),
        )
        conn.execute(
            "UPDATE accounts SET balance_cents = balance_cents + ? WHERE account_id = ?",
            (record["amount_cents"], record["from_account"]),
        )
        conn.execute(
            "UPDATE transfers SET status = 'reversed', note = ? WHERE transfer_id = ?",
            (reason, record["transfer_id"]),
        )


class LargeRefund(BaseModel):
    """Arguments of a refund the customer-service agent handed over."""

    model_config = ConfigDict(extra="forbid")

    order_id: str = Field(pattern=r"^(OD-\d{8}-\d{3}|\d{9,12})$")
    reason: str = Field(default="用户申请退款", min_length=1, max_length=200)


AUTO_APPROVE_CENTS = 100_000
"""Finance approves refunds up to 1,000 yuan at once; larger ones go to manual review."""


def order_owner_for_refund(args: LargeRefund, ctx: ToolContext) -> str | None:
    """Return the owner of the order to refund."""
    row = ctx.database().query_one(
        "SELECT user_id FROM orders WHERE order_id = ?", (args.order_id,)
    )
    return None if row is None else str(row["user_id"])


def approve_large_refund(args: LargeRefund, ctx: ToolContext) -> RefundDecision:
    """Decide a large refund: approve it up to the limit, else queue it for review."""
    db = ctx.database()
    with db.transaction() as conn:
        ledger = ctx.ledger(conn, tool="approve_large_refund")
        order = conn.execute(
            "SELECT amount_cents, status FROM orders WHERE order_id = ?", (args.order_id,)
        ).fetchone()
        if order is None:
            msg = f"order {args.order_id} not found"
            raise ResourceNotFoundError(msg)
        existing = conn.execute(
            "SELECT refund_id, status FROM refunds WHERE order_id = ?", (args.order_id,)
        ).fetchone()
        if existing is not None:
            return {
                "order_id": args.order_id,
                "refund_id": existing["refund_id"],
                "amount_cents": order["amount_cents"],
                "status": existing["status"],
                "already_requested": True,
            }
        status = "approved" if order["amount_cents"] <= AUTO_APPROVE_CENTS else "pending_review"
        refund_id = "RF-" + hashlib.sha256(args.order_id.encode()).hexdigest()[:10].upper()
        conn.execute(
            "INSERT INTO refunds (refund_id, order_id, user_id, amount_cents, reason, status)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (refund_id, args.order_id, ctx.user_id, order["amount_cents"], args.reason, status),
        )
        decided: RefundDecision = {
            "order_id": args.order_id,
            "refund_id": refund_id,
            "amount_cents": order["amount_cents"],
            "status": status,
            "already_requested": False,
        }
        return ledger.record(decided)


class NoArguments(BaseModel):
    """A tool that needs nothing but the trusted caller."""

    model_config = ConfigDict(extra="forbid")


class AccountBalance(BaseModel):
    """One of the caller's accounts and what it holds."""

    account_id: str
    balance_cents: int


class Balances(BaseModel):
    """What ``query_my_balance`` answers."""

    accounts: list[AccountBalance]


def query_my_balance(args: NoArguments, ctx: ToolContext) -> BalancesData:
    """List the caller's own accounts and balances: whose they are comes from the identity.

    No PIN is asked: the caller is authenticated, and reading one's own balance moves
    nothing. There is no account argument, so nobody can name another's account.
    """
    rows = ctx.database().query(
        "SELECT account_id, balance_cents FROM accounts WHERE user_id = ? ORDER BY account_id",
        (ctx.user_id,),
    )
    return {"accounts": cast("list[AccountBalanceRow]", [dict(row) for row in rows])}


BALANCE_TOOLS = (
    ToolCard(
        name="query_my_balance",
        description="Show the caller's own accounts and their balances.",
        when_to_use="The user asks how much money is in their account.",
        when_not_to_use="Moving money (that is a transfer, with its own balance check).",
        parameters=NoArguments,
        returns="accounts: account_id, balance_cents.",
        handler=query_my_balance,
        result_model=Balances,
        idempotent=True,
        permission="finance:read",
        domain="finance",
        timeout_s=3.0,
    ),
)


FINANCE_TOOLS = (
    ToolCard(
        name="approve_large_refund",
        description="Decide a refund above the customer-service limit.",
        when_to_use="The customer-service agent handed over a large refund.",
        when_not_to_use="Small refunds (the customer-service agent files those).",
        parameters=LargeRefund,
        returns="refund_id, status (approved or pending_review).",
        handler=approve_large_refund,
        idempotent=False,
        permission="finance:refund",
        domain="finance",
        owner_of=order_owner_for_refund,
    ),
    ToolCard(
        name="verify_identity",
        description="Verify the payer with their 6-digit payment PIN.",
        when_to_use="First step of a transfer.",
        when_not_to_use="Anything but a money transfer.",
        parameters=IdentityCheck,
        returns="verified.",
        handler=verify_identity,
        idempotent=True,
        permission="finance:transfer",
        domain="finance",
        owner_of=account_owner,
        rate_limit="5/minute",
    ),
    ToolCard(
        name="check_balance",
        description="Check the payer's balance covers the transfer and the payee exists.",
        when_to_use="After identity is verified.",
        when_not_to_use="Before identity is verified.",
        parameters=TransferPlan,
        returns="balance_cents, payee_name.",
        handler=check_balance,
        idempotent=True,
        permission="finance:transfer",
        domain="finance",
        owner_of=account_owner,
        requires=("verify_identity",),
    ),
    ToolCard(
        name="assess_transfer_risk",
        description="Score the transfer's risk and issue a risk ticket.",
        when_to_use="After the balance check.",
        when_not_to_use="Before the balance check.",
        parameters=TransferPlan,
        returns="risk_score, risk_ticket, review.",
        handler=assess_transfer_risk,
        idempotent=True,
        permission="finance:transfer",
        domain="finance",
        owner_of=account_owner,
        requires=("check_balance",),
    ),
    ToolCard(
        name="execute_transfer",
        description="Move the money, or hold it for review when the risk is high.",
        when_to_use="After the risk check, once the user confirmed.",
        when_not_to_use="Without a risk ticket from assess_transfer_risk.",
        parameters=TransferOrder,
        returns="transfer_id, status (completed or pending_review).",
        handler=execute_transfer,
        idempotent=False,
        permission="finance:transfer",
        domain="finance",
        risk="high",
        owner_of=account_owner,
        requires=("assess_transfer_risk",),
        evidence_fields=("risk_ticket",),
    ),
)
