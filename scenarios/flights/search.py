"""Searching flights: a route and a day → the day's flights, their times, seats and fares.

"6月20号上海到北京最便宜的航班是哪班" started a booking and asked for a passenger; nothing
showed the day's flights before booking. ``search_flights`` is a read: the flights of a route
on a day (the part of the day asked for: "下午的"), each with its times, the seats left and
the fare, and the one picked when the question asks for it ("cheapest", "最早"). A flight
named from it is then booked ("订CA1858": the booking takes the route and day searched).
"""

from __future__ import annotations

import re
from datetime import date
from typing import Literal, TypedDict

from pydantic import BaseModel, ConfigDict, Field

from contract.scenario import Speaker, Wording
from scenarios.gazetteer import normalize_city
from state import AgentState, ToolResult
from tools.executor.envelope import result_data
from tools.registry.cards import ToolCard
from tools.registry.context import ToolContext

Period = Literal["morning", "afternoon", "evening"]
Pick = Literal["cheapest", "earliest", "latest"]
PERIODS: dict[str, tuple[str, str]] = {
    "morning": ("00:00", "12:00"),
    "afternoon": ("12:00", "18:00"),
    "evening": ("18:00", "24:00"),
}
"""Departure times each part of the day covers, [from, to)."""


class FlightSearch(BaseModel):
    """Arguments of a flight search."""

    model_config = ConfigDict(extra="forbid")

    origin: str = Field(min_length=2, max_length=40, description="Departure city, e.g. 上海.")
    destination: str = Field(min_length=2, max_length=40, description="Arrival city, e.g. 北京.")
    departure_date: date = Field(description="Date of travel, YYYY-MM-DD.")
    period: Period | None = Field(None, description="Only flights leaving in this part of the day.")
    pick: Pick | None = Field(None, description="The one flight the user asks for, if any.")


class FoundFlight(TypedDict):
    """One flight of the day."""

    flight_no: str
    depart_time: str
    arrive_time: str
    seats_left: int
    price_cents: int


class FlightList(TypedDict):
    """What ``search_flights`` answers: the flights, earliest first, and the one picked."""

    origin: str
    destination: str
    departure_date: str
    period: str | None
    flights: list[FoundFlight]
    picked: str | None
    """The flight number the question asked for (among those with a seat), if any."""


class FoundFlightModel(BaseModel):
    """``FoundFlight`` as a model, to check results against."""

    flight_no: str
    depart_time: str
    arrive_time: str
    seats_left: int
    price_cents: int


class FlightListModel(BaseModel):
    """``FlightList`` as a model (the card's ``result_model``)."""

    origin: str
    destination: str
    departure_date: str
    period: str | None
    flights: list[FoundFlightModel]
    picked: str | None


def search_flights(args: FlightSearch, ctx: ToolContext) -> FlightList:
    """List the route's flights on the day (in the part of the day asked), earliest first."""
    start, end = PERIODS[args.period] if args.period else ("00:00", "24:00")
    rows = ctx.database().query(
        "SELECT flight_no, depart_time, arrive_time, seats_left, price_cents FROM flights"
        " WHERE origin = ? AND destination = ? AND flight_date = ?"
        " AND depart_time >= ? AND depart_time < ? ORDER BY depart_time, flight_no",
        (
            normalize_city(args.origin),
            normalize_city(args.destination),
            args.departure_date.isoformat(),
            start,
            end,
        ),
    )
    flights: list[FoundFlight] = [
        {
            "flight_no": str(row["flight_no"]),
            "depart_time": str(row["depart_time"]),
            "arrive_time": str(row["arrive_time"]),
            "seats_left": int(row["seats_left"]),
            "price_cents": int(row["price_cents"]),
        }
        for row in rows
    ]
    open_ = [f for f in flights if f["seats_left"] > 0]
    picked: FoundFlight | None = None
    if args.pick == "cheapest" and open_:
        picked = min(open_, key=lambda f: (f["price_cents"], f["depart_time"]))
    elif args.pick == "earliest" and open_:
        picked = open_[0]
    elif args.pick == "latest" and open_:
        picked = open_[-1]
    return {
        "origin": args.origin,
        "destination": args.destination,
        "departure_date": args.departure_date.isoformat(),
        "period": args.period,
        "flights": flights,
        "picked": picked["flight_no"] if picked else None,
    }


SEARCH_CARD = ToolCard(
    name="search_flights",
    description="List the flights between two cities on a date: times, seats left and fares.",
    when_to_use="The user asks which flights there are, their times or prices, the cheapest or "
    "earliest one, or those in a part of the day, before booking.",
    when_not_to_use="The user wants a seat booked (book_flight_ticket); a ticket is to be "
    "refunded or changed.",
    parameters=FlightSearch,
    returns="flights (flight_no, depart_time, arrive_time, seats_left, price_cents), picked.",
    handler=search_flights,
    result_model=FlightListModel,
    idempotent=True,
    permission="flight:search",
    domain="flight",
    timeout_s=3.0,
    summarize=lambda data: f"{len(data['flights'])} flights, picked {data['picked']}",
)

_PERIOD_WORDS: tuple[tuple[re.Pattern[str], Period], ...] = (
    (re.compile(r"上午|早上|早晨|清早|早班|\bmorning\b|\bam\b", re.IGNORECASE), "morning"),
    (re.compile(r"中午|下午|午后|\bafternoon\b|\bpm\b", re.IGNORECASE), "afternoon"),
    (re.compile(r"晚上|傍晚|夜里|晚班|红眼|\bevening\b|\b(?:to)?night\b", re.I), "evening"),
)
_PICK_WORDS: tuple[tuple[re.Pattern[str], Pick], ...] = (
    (
        re.compile(
            r"最便宜|最实惠|最低价|价格最低|便宜点|\bcheapest\b|\blowest (?:price|fare)", re.I
        ),
        "cheapest",
    ),
    (re.compile(r"最早|第一班|头班|\bearliest\b|\bfirst flight\b", re.IGNORECASE), "earliest"),
    (re.compile(r"最晚|最后一班|末班|\blatest\b|\blast flight\b", re.IGNORECASE), "latest"),
)


def search_terms(text: str) -> dict[str, str]:
    """The part of the day ("下午的") and the one flight asked for ("最便宜") in ``text``."""
    found: dict[str, str] = {}
    for pattern, period in _PERIOD_WORDS:
        if pattern.search(text):
            found["period"] = period
            break
    for pattern, pick in _PICK_WORDS:
        if pattern.search(text):
            found["pick"] = pick
            break
    return found


WORDING: Wording = {
    "intent.SEARCH_FLIGHTS": {"zh": "查询航班", "en": "look up flights"},
    "slot.period": {"zh": "时段", "en": "part of the day"},
    "slot.pick": {"zh": "挑选", "en": "choice"},
    "period.morning": {"zh": "上午", "en": "morning"},
    "period.afternoon": {"zh": "下午", "en": "afternoon"},
    "period.evening": {"zh": "晚上", "en": "evening"},
    "pick.cheapest": {"zh": "最便宜的", "en": "The cheapest"},
    "pick.earliest": {"zh": "最早的", "en": "The earliest"},
    "pick.latest": {"zh": "最晚的", "en": "The latest"},
    "flight_line": {
        "zh": "{flight_no}（{depart_time} 起飞，{arrive_time} 到达，{seats}，{price} 元）",
        "en": "{flight_no} (departs {depart_time}, arrives {arrive_time}, {seats}, {price} yuan)",
    },
    "seats_left": {"zh": "余座 {count}", "en": "seats left: {count}"},
    "seats_none": {"zh": "已售罄", "en": "sold out"},
    "flights_found": {
        "zh": "{departure_date} {origin}→{destination}{period}共有 {count} 班：{lines}。"
        "需要预订的话，告诉我航班号即可。",
        "en": "Flights from {origin} to {destination} on {departure_date}{period} ({count}):"
        " {lines}. To book one, tell me its flight number.",
    },
    "flight_picked": {
        "zh": "{departure_date} {origin}→{destination}{period}{pick}是 {line}。"
        "要预订这班吗？告诉我“订{flight_no}”即可。",
        "en": "{pick} flight from {origin} to {destination} on {departure_date}{period} is"
        " {line}. To book it, say “book {flight_no}”.",
    },
    "flights_none": {
        "zh": "{departure_date} {origin}→{destination}{period}没有航班。要换个日期或时段吗？",
        "en": "There are no flights from {origin} to {destination} on {departure_date}"
        "{period}. Another date or time of day?",
    },
    "flights_full": {
        "zh": "{departure_date} {origin}→{destination}{period}的航班都已售罄：{lines}。",
        "en": "Every flight from {origin} to {destination} on {departure_date}{period} is"
        " sold out: {lines}.",
    },
    "period_zh": {"zh": "{period}", "en": " in the {period}"},
}


def _line(flight: FoundFlight, speaker: Speaker) -> str:
    seats = (
        speaker.say("seats_left", count=flight["seats_left"])
        if flight["seats_left"] > 0
        else speaker.say("seats_none")
    )
    return speaker.say(
        "flight_line",
        flight_no=flight["flight_no"],
        depart_time=flight["depart_time"],
        arrive_time=flight["arrive_time"],
        seats=seats,
        price=f"{flight['price_cents'] / 100:,.0f}",
    )


def _city(name: str, speaker: Speaker) -> str:
    """A city as said in Chinese, or by its English name ("shanghai" → Shanghai)."""
    return name if speaker.language == "zh" else normalize_city(name)


def describe_search(result: ToolResult, state: AgentState, speaker: Speaker) -> str | None:
    """Say the day's flights, or the one asked for; a failure is the generic sentence's."""
    if result.get("status") != "success":
        return None
    data = result_data(result, FlightList)
    flights = data["flights"]
    period = (
        speaker.say("period_zh", period=speaker.say(f"period.{data['period']}"))
        if data.get("period")
        else ""
    )
    where = {
        "departure_date": data["departure_date"],
        "origin": _city(data["origin"], speaker),
        "destination": _city(data["destination"], speaker),
        "period": period,
    }
    join = "；" if speaker.language == "zh" else "; "
    if not flights:
        return speaker.say("flights_none", **where)
    picked = next((f for f in flights if f["flight_no"] == data.get("picked")), None)
    pick = (state.get("slots") or {}).get("pick")
    if picked is not None and pick:
        return speaker.say(
            "flight_picked",
            **where,
            pick=speaker.say(f"pick.{pick}"),
            line=_line(picked, speaker),
            flight_no=picked["flight_no"],
        )
    lines = join.join(_line(f, speaker) for f in flights)
    if not any(f["seats_left"] > 0 for f in flights):
        return speaker.say("flights_full", **where, lines=lines)
    return speaker.say("flights_found", **where, count=len(flights), lines=lines)


__all__ = [
    "SEARCH_CARD",
    "WORDING",
    "FlightList",
    "FlightSearch",
    "describe_search",
    "search_flights",
    "search_terms",
]
