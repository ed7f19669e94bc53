"""Flight booking: five slots over several turns, an ID number kept in the vault, confirmation."""

from __future__ import annotations

from contract.scenario import Scenario, TaskSpec
from scenarios.flights import confirm, understanding
from scenarios.flights.seed import SEED
from scenarios.flights.tools import FLIGHT_TOOLS
from scenarios.flights.wording import DESCRIBE, WORDING

SCENARIO = Scenario(
    name="flights",
    tasks=(
        TaskSpec(
            intent="BOOK_FLIGHT",
            tool="book_flight_ticket",
            required_slots=(
                "origin",
                "destination",
                "departure_date",
                "passenger_name",
                "passenger_id",
            ),
            sensitive_slots=("passenger_id",),
            optional_slots=("flight_no",),
            on_request=(("notify", "notify_booking"),),
        ),
    ),
    cards=FLIGHT_TOOLS,
    grants={"customer": frozenset({"flight:book"})},
    cues=understanding.CUES,
    beyond=understanding.BEYOND,
    extract=understanding.extract,
    support=understanding.support,
    wording={**WORDING, **confirm.WORDING},
    describe=DESCRIBE,
    confirm=confirm.CONFIRM,
    seed=SEED,
)
