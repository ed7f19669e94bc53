"""Medical appointments: concurrent lookups, one confirmation, hold → book → notify."""

from __future__ import annotations

from nodes.tasks import Scenario, TaskSpec
from scenarios.appointment import understanding
from scenarios.appointment.agent import AGENT, make_appointment_node
from scenarios.appointment.seed import SEED
from scenarios.appointment.tools import APPOINTMENT_TOOLS
from scenarios.appointment.wording import DESCRIBE, WORDING, slot_to_reask

SCENARIO = Scenario(
    name="appointment",
    tasks=(
        TaskSpec(
            intent="BOOK_APPOINTMENT",
            tool="book_appointment",
            required_slots=("department", "day"),
            agent=AGENT,
            reask=slot_to_reask,
        ),
    ),
    cards=APPOINTMENT_TOOLS,
    grants={"customer": frozenset({"appointment:book"})},
    cues=understanding.CUES,
    support=understanding.support,
    extract=understanding.extract,
    wording=WORDING,
    describe=DESCRIBE,
    agents={AGENT: make_appointment_node},
    seed=SEED,
)
