"""Weather over real HTTP, through an adapter that refuses a response it does not recognize.

The API lives at ``Settings.weather_url`` (``GET {base}/weather?city=X``). Its failures
map onto the executor's classes: 5xx, connection errors and timeouts are transient (retried,
the tool is idempotent), 404 is "no such city", and a response whose fields changed is a
permanent failure that says which field, never an empty answer.
"""

from __future__ import annotations

from typing import TypedDict

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from scenarios.gazetteer import normalize_city
from tools.executor.errors import PermanentToolError, ResourceNotFoundError, TransientToolError
from tools.registry.cards import ToolCard
from tools.registry.context import ToolContext
from tools.registry.types import FiniteFloat


class CityQuery(BaseModel):
    """Arguments of a weather query."""

    model_config = ConfigDict(extra="forbid")

    city: str = Field(
        min_length=1,
        max_length=40,
        description="The city the user named, in Chinese or English, e.g. 北京 or Beijing.",
    )


class WeatherReport(BaseModel):
    """What the API must answer; ``extra`` fields are ignored, missing ones are an error."""

    model_config = ConfigDict(extra="ignore")

    city: str
    temp_c: FiniteFloat
    condition: str
    humidity: int | None = None


class WeatherData(TypedDict):
    """What ``query_weather`` answers: the city asked, the API's name for it, the weather."""

    city: str
    api_city: str
    temp_c: float
    condition: str
    humidity: int | None


def query_weather(args: CityQuery, ctx: ToolContext) -> WeatherData:
    """Fetch current weather for a city from the weather API."""
    base = ctx.settings.weather_url
    city = normalize_city(args.city)
    try:
        response = httpx.get(f"{base.rstrip('/')}/weather", params={"city": city}, timeout=3.0)
    except httpx.TimeoutException as exc:
        msg = f"weather API timed out for {city}"
        raise TransientToolError(msg, details={"city": city, "reason": "timeout"}) from exc
    except httpx.HTTPError as exc:
        msg = f"weather API unreachable: {type(exc).__name__}"
        raise TransientToolError(msg, details={"city": city, "reason": "unreachable"}) from exc
    if response.status_code == 404:
        msg = f"no such city: {city}"
        raise ResourceNotFoundError(msg, details={"city": args.city})
    if response.status_code >= 500:
        msg = f"weather API answered {response.status_code}"
        raise TransientToolError(msg, details={"city": city, "reason": "server_error"})
    if response.status_code != 200:
        msg = f"weather API answered {response.status_code}"
        raise PermanentToolError(msg, details={"city": city, "reason": "bad_status"})
    try:
        report = WeatherReport.model_validate(response.json())
    except (ValidationError, ValueError) as exc:
        missing = _missing_fields(exc)
        msg = f"weather API response changed: {missing or 'not JSON'}"
        raise PermanentToolError(
            msg, details={"city": city, "reason": "schema_drift", "fields": [*missing]}
        ) from exc
    return {
        "city": args.city,
        "api_city": report.city,
        "temp_c": report.temp_c,
        "condition": report.condition,
        "humidity": report.humidity,
    }


def _missing_fields(exc: Exception) -> list[str]:
    if not isinstance(exc, ValidationError):
        return []
    return [".".join(str(p) for p in err["loc"]) for err in exc.errors()]


def _summarize(data: WeatherData) -> str:
    return f"{data['api_city']}: {data['temp_c']}°C, {data['condition']}"


WEATHER_TOOLS = (
    ToolCard(
        name="query_weather",
        description="Get the current weather (temperature, conditions) for a city.",
        when_to_use="The user asks about the weather, temperature or rain in a named city.",
        when_not_to_use="No city named yet (ask which city); questions about orders.",
        parameters=CityQuery,
        returns="city, temp_c, condition, humidity.",
        handler=query_weather,
        idempotent=True,
        permission="weather:read",
        domain="weather",
        timeout_s=4.0,
        cache_ttl_s=600.0,
        summarize=_summarize,
    ),
)
