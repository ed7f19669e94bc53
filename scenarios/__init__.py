"""The shipped scenarios, each a folder behind the ``contract.scenario.Scenario`` contract.

``SCENARIOS`` is what ``build_graph`` serves by default; pass ``scenarios=[...]`` to serve a
subset, or to add your own. A scenario may import the packages below ``scenarios``: the
nodes (a sub-agent acts through ``nodes.actions``), ``contract``, ``state``, ``jobs``,
``tools`` and the rest; never the graph, and never another scenario.
"""

from __future__ import annotations

from contract.scenario import Scenario
from scenarios.appointment import SCENARIO as APPOINTMENT
from scenarios.delivery import SCENARIO as DELIVERY
from scenarios.flights import SCENARIO as FLIGHTS
from scenarios.jobs import SCENARIO as JOBS
from scenarios.sales import SCENARIO as SALES
from scenarios.transfer import SCENARIO as TRANSFER
from scenarios.weather import SCENARIO as WEATHER

SCENARIOS: tuple[Scenario, ...] = (
    DELIVERY,
    WEATHER,
    FLIGHTS,
    TRANSFER,
    APPOINTMENT,
    SALES,
    JOBS,
)
"""Every shipped scenario, in the order the "what can you do" question lists them."""

__all__ = [
    "APPOINTMENT",
    "DELIVERY",
    "FLIGHTS",
    "JOBS",
    "SALES",
    "SCENARIOS",
    "TRANSFER",
    "WEATHER",
]
