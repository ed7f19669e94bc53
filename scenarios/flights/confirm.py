"""What a booking will do, said before it runs: the flight it takes, its times and its fare.

"book_flight_ticket（…, flight_no=None）" becomes "为张三（身份证 110101********1237）预订
2024-06-20 上海→北京 MU5101 航班（08:00 起飞，10:15 到达），票价 980 元。": the flight the
booking would take (the one named, else the earliest with a seat), never "None".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from contract.scenario import Confirmer, Speaker, Wording
from scenarios.gazetteer import normalize_city
from tools.registry.context import ToolContext

WORDING: Wording = {
    "confirm.book_flight_ticket": {
        "zh": "为{passenger_name}（身份证 {passenger_id}）预订 {departure_date}"
        " {origin}→{destination} 的 {flight_no} 航班（{depart_time} 起飞，{arrive_time} 到达），"
        "票价 {price} 元。",
        "en": "Book {flight_no} from {origin} to {destination} on {departure_date} for"
        " {passenger_name} (ID {passenger_id}): departs {depart_time}, arrives {arrive_time},"
        " fare {price} yuan.",
    },
    "confirm.book_flight_open": {
        "zh": "为{passenger_name}（身份证 {passenger_id}）预订 {departure_date}"
        " {origin}→{destination} 最早一班有座位的航班。",
        "en": "Book the earliest flight with a seat from {origin} to {destination} on"
        " {departure_date} for {passenger_name} (ID {passenger_id}).",
    },
}


def booking(arguments: Mapping[str, Any], ctx: ToolContext, speaker: Speaker) -> str:
    """Say the booking with the flight it would take, as the handler would choose it."""
    day = str(arguments.get("departure_date", ""))
    named = arguments.get("flight_no")
    row = ctx.database().query_one(
        "SELECT flight_no, depart_time, arrive_time, price_cents FROM flights"
        " WHERE origin = ? AND destination = ? AND flight_date = ? AND seats_left > 0"
        " AND (? IS NULL OR flight_no = ?) ORDER BY depart_time LIMIT 1",
        (
            normalize_city(str(arguments.get("origin", ""))),
            normalize_city(str(arguments.get("destination", ""))),
            day,
            named,
            named,
        ),
    )
    values = {
        "passenger_name": arguments.get("passenger_name", ""),
        "passenger_id": arguments.get("passenger_id", ""),
        "departure_date": day,
        "origin": arguments.get("origin", ""),
        "destination": arguments.get("destination", ""),
    }
    if row is None:  # none with a seat now: the booking will say so; name no flight here
        return speaker.say("confirm.book_flight_open", **values)
    return speaker.say(
        "confirm.book_flight_ticket",
        **values,
        flight_no=row["flight_no"],
        depart_time=row["depart_time"],
        arrive_time=row["arrive_time"],
        price=f"{int(row['price_cents']) / 100:,.0f}",
    )


CONFIRM: dict[str, Confirmer] = {"book_flight_ticket": booking}
