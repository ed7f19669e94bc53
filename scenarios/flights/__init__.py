"""Flight booking: five slots over several turns, an ID number kept in the vault, confirmation."""

from __future__ import annotations

from pathlib import Path

from contract.scenario import Scenario, TaskSpec, load_examples
from scenarios.flights import understanding
from scenarios.flights.seed import SEED
from scenarios.flights.tools import FLIGHT_TOOLS
from scenarios.flights.wording import DESCRIBE, WORDING

SCENARIO = Scenario(
    examples=load_examples(Path(__file__).parent / "examples.yaml"),
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
    beyond=understanding.BEYOND,
    extract=understanding.extract,
    wording=WORDING,
    describe=DESCRIBE,
    seed=SEED,
)
