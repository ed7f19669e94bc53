"""Weather over HTTP: a REST API behind an adapter that refuses what it does not recognize."""

from __future__ import annotations

from pathlib import Path

from contract.scenario import Scenario, TaskSpec, load_examples
from scenarios.weather import understanding
from scenarios.weather.tools import WEATHER_TOOLS
from scenarios.weather.wording import DESCRIBE, WORDING

SCENARIO = Scenario(
    examples=load_examples(Path(__file__).parent / "examples.yaml"),
    name="weather",
    tasks=(
        TaskSpec(
            intent="QUERY_WEATHER",
            tool="query_weather",
            required_slots=("city",),
            handoff_on_failure=False,
        ),
    ),
    cards=WEATHER_TOOLS,
    grants={role: frozenset({"weather:read"}) for role in ("customer", "agent", "analyst")},
    extract=understanding.extract,
    wording=WORDING,
    describe=DESCRIBE,
)
