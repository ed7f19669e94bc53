"""Flights: search a route's flights on a day, and book one.

A booking has five slots, an ID number kept in the vault, and a confirmation.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from pathlib import Path

from contract.scenario import Scenario, SlotResult, TaskSpec, load_examples
from scenarios.flights import confirm, search, understanding
from scenarios.flights.seed import SEED
from scenarios.flights.tools import FLIGHT_TOOLS
from scenarios.flights.wording import DESCRIBE, WORDING

ROUTE = ("origin", "destination", "departure_date")
"""What a search and a booking both need: the route and the day."""


def extract(text: str, intent: str, *, today: date) -> SlotResult:
    """A booking's five slots; a search's route and day, part of the day and pick."""
    found = understanding.extract(text, intent, today=today)
    if intent != "SEARCH_FLIGHTS":
        return found
    slots = {k: v for k, v in found.slots.items() if k in ROUTE}
    invalid = {k: v for k, v in found.invalid.items() if k in ROUTE}
    return replace(found, slots={**slots, **search.search_terms(text)}, invalid=invalid)


SCENARIO = Scenario(
    examples=load_examples(Path(__file__).parent / "examples.yaml"),
    name="flights",
    tasks=(
        TaskSpec(
            intent="BOOK_FLIGHT",
            tool="book_flight_ticket",
            required_slots=(*ROUTE, "passenger_name", "passenger_id"),
            sensitive_slots=("passenger_id",),
            optional_slots=("flight_no",),
            on_request=(("notify", "notify_booking"),),
            takes_from=("SEARCH_FLIGHTS",),
        ),
        TaskSpec(
            intent="SEARCH_FLIGHTS",
            tool="search_flights",
            required_slots=ROUTE,
            optional_slots=("period", "pick"),
            handoff_on_failure=False,
            takes_from=("SEARCH_FLIGHTS",),
        ),
    ),
    cards=(*FLIGHT_TOOLS, search.SEARCH_CARD),
    grants={"customer": frozenset({"flight:book", "flight:search"})},
    beyond=understanding.BEYOND,
    extract=extract,
    wording={**WORDING, **confirm.WORDING, **search.WORDING},
    describe={**DESCRIBE, "search_flights": search.describe_search},
    confirm=confirm.CONFIRM,
    seed=SEED,
)
