"""Money transfers, and large refunds, carried out by a finance agent with its own tools."""

from __future__ import annotations

from pathlib import Path

from contract.scenario import Scenario, TaskSpec, load_examples
from scenarios.transfer import confirm, understanding
from scenarios.transfer.agent import AGENT, TRANSFER_TOOL, make_finance_node
from scenarios.transfer.seed import SEED
from scenarios.transfer.tools import BALANCE_TOOLS, FINANCE_TOOLS
from scenarios.transfer.wording import DESCRIBE, WORDING, say_amount

SCENARIO = Scenario(
    examples=load_examples(Path(__file__).parent / "examples.yaml"),
    name="transfer",
    tasks=(
        TaskSpec(
            intent="TRANSFER_MONEY",
            tool=TRANSFER_TOOL,
            required_slots=("to_account", "amount_cents", "pin"),
            sensitive_slots=("pin",),
            agent=AGENT,
        ),
        TaskSpec(
            intent="QUERY_BALANCE",
            tool="query_my_balance",
            required_slots=(),
            handoff_on_failure=False,
        ),
    ),
    cards=BALANCE_TOOLS,
    agent_cards={AGENT: FINANCE_TOOLS},
    grants={"customer": frozenset({"finance:transfer", "finance:refund", "finance:read"})},
    beyond=understanding.BEYOND,
    extract=understanding.extract,
    wording={**WORDING, **confirm.WORDING},
    describe=DESCRIBE,
    confirm=confirm.CONFIRM,
    agents={AGENT: make_finance_node},
    shown={"amount_cents": lambda cents, language: say_amount(int(cents), language)},
    seed=SEED,
)
