"""Medical appointments: concurrent lookups, one confirmation, hold → book → notify."""

from __future__ import annotations

from pathlib import Path

from contract.scenario import Scenario, TaskSpec, load_examples
from scenarios.appointment import confirm, understanding
from scenarios.appointment.agent import AGENT, make_appointment_node
from scenarios.appointment.cancel import CANCEL_TOOLS, suggest_appointment
from scenarios.appointment.seed import SEED
from scenarios.appointment.tools import APPOINTMENT_TOOLS
from scenarios.appointment.wording import DESCRIBE, WORDING, offered_day, slot_to_reask

SCENARIO = Scenario(
    examples=load_examples(Path(__file__).parent / "examples.yaml"),
    name="appointment",
    tasks=(
        TaskSpec(
            intent="CANCEL_APPOINTMENT",
            tool="cancel_appointment",
            required_slots=("appointment_id",),
            suggest=suggest_appointment,
        ),
        TaskSpec(
            intent="BOOK_APPOINTMENT",
            tool="book_appointment",
            required_slots=("department", "day"),
            optional_slots=("period", "doctor"),
            agent=AGENT,
            reask=slot_to_reask,
            offer=offered_day,
        ),
    ),
    cards=(*APPOINTMENT_TOOLS, *CANCEL_TOOLS),
    grants={"customer": frozenset({"appointment:book", "appointment:cancel"})},
    extract=understanding.extract,
    wording={**WORDING, **confirm.WORDING},
    describe=DESCRIBE,
    confirm=confirm.CONFIRM,
    agents={AGENT: make_appointment_node},
    seed=SEED,
)
