"""Flight booking: find a flight with a free seat, hold it and book it, in one transaction.

The passenger's ID number arrives as a vault token (``pii:...``) put there by slot filling;
only this handler resolves it, and the booking keeps the token and the masked number.
"""

from __future__ import annotations

from datetime import date
from typing import Any, Literal, TypedDict

from pydantic import BaseModel, ConfigDict, Field, field_validator

from scenarios.gazetteer import normalize_city
from security.vault import TOKEN_PREFIX, IdentityVault, id_card_problem, id_number, mask_id_card
from storage.db import Database
from tools.executor.errors import ResourceNotFoundError, UserFixableError
from tools.registry.cards import ToolCard
from tools.registry.context import ToolContext


class FlightBooking(BaseModel):
    """Arguments of a booking."""

    model_config = ConfigDict(extra="forbid")

    origin: str = Field(min_length=2, max_length=40, description="Departure city, e.g. 上海.")
    destination: str = Field(min_length=2, max_length=40, description="Arrival city, e.g. 北京.")
    departure_date: date = Field(description="Date of travel, YYYY-MM-DD.")
    passenger_name: str = Field(min_length=1, max_length=40, description="Passenger's name.")
    passenger_id: str = Field(
        description="The passenger's ID number, or the pii: token slot filling stored it as. "
        "Never guess it; ask the user."
    )
    flight_no: str | None = Field(
        None,
        pattern=r"^[A-Z0-9]{2}\d{3,4}$",
        description="The flight the user named (e.g. CA1858); omitted: the earliest with a seat.",
    )

    @field_validator("passenger_id")
    @classmethod
    def _valid_id(cls, value: str) -> str:
        if value.startswith(TOKEN_PREFIX):
            return value
        problem = id_card_problem(value)
        if problem:
            msg = f"passenger_id {problem}"
            raise ValueError(msg)
        return id_number(value)


def _passenger(args: FlightBooking, ctx: ToolContext) -> tuple[str, str]:
    """Return (token, masked number), storing a raw number in the vault first."""
    vault = IdentityVault(ctx.database())
    if args.passenger_id.startswith(TOKEN_PREFIX):
        number = vault.reveal(ctx.user_id, args.passenger_id)
        if number is None:
            msg = "the passenger's ID number is not on file; ask for it again"
            raise UserFixableError(msg, details={"reason": "id_unknown"})
        return args.passenger_id, mask_id_card(number)
    return vault.store(ctx.user_id, args.passenger_id), mask_id_card(args.passenger_id)


class FlightBookingData(TypedDict):
    """A booking as ``book_flight_ticket`` and its status lookup answer (the ID masked)."""

    booking_id: str
    flight_no: str
    origin: str
    destination: str
    departure_date: str
    depart_time: str
    arrive_time: str
    price_cents: int
    passenger_name: str
    passenger_id: str


class BookingNoticeData(TypedDict):
    """What ``notify_booking`` answers."""

    booking_id: str
    channel: str
    sent: bool


def book_flight_ticket(args: FlightBooking, ctx: ToolContext) -> FlightBookingData:
    """Book the flight named, else the earliest with a free seat on the route and date."""
    db = ctx.database()
    token, masked = _passenger(args, ctx)
    origin, destination = normalize_city(args.origin), normalize_city(args.destination)
    day = args.departure_date.isoformat()
    with db.transaction() as conn:
        ledger = ctx.ledger(conn, tool="book_flight_ticket")
        flight = conn.execute(
            "SELECT flight_no, depart_time, arrive_time, price_cents FROM flights"
            " WHERE origin = ? AND destination = ? AND flight_date = ? AND seats_left > 0"
            " AND (? IS NULL OR flight_no = ?) ORDER BY depart_time LIMIT 1",
            (origin, destination, day, args.flight_no, args.flight_no),
        ).fetchone()
        if flight is None:
            any_flight = conn.execute(
                "SELECT COUNT(*) FROM flights WHERE origin = ? AND destination = ?"
                " AND flight_date = ? AND (? IS NULL OR flight_no = ?)",
                (origin, destination, day, args.flight_no, args.flight_no),
            ).fetchone()[0]
            reason = "sold_out" if any_flight else "no_flight"
            named = f" on {args.flight_no}" if args.flight_no else ""
            msg = f"no seat from {origin} to {destination}{named} on {day} ({reason})"
            raise ResourceNotFoundError(
                msg, details={"reason": reason, "date": day, "flight_no": args.flight_no}
            )
        existing = conn.execute(
            "SELECT booking_id FROM flight_bookings WHERE flight_no = ? AND flight_date = ?"
            " AND passenger_token = ?",
            (flight["flight_no"], day, token),
        ).fetchone()
        if existing is not None:
            booking_id = existing["booking_id"]
        else:
            conn.execute(
                "UPDATE flights SET seats_left = seats_left - 1 WHERE flight_no = ?"
                " AND flight_date = ? AND seats_left > 0",
                (flight["flight_no"], day),
            )
            sequence = conn.execute(
                "SELECT COUNT(*) FROM flight_bookings WHERE flight_date = ?", (day,)
            ).fetchone()[0]
            booking_id = f"FL-{day.replace('-', '')}{sequence + 1:03d}"
            conn.execute(
                "INSERT INTO flight_bookings (booking_id, user_id, flight_no, flight_date,"
                " passenger_name, passenger_token, passenger_masked) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    booking_id,
                    ctx.user_id,
                    flight["flight_no"],
                    day,
                    args.passenger_name,
                    token,
                    masked,
                ),
            )
        ledger.record({"booking_id": booking_id})
    view = _booking_view(db, args, "b.booking_id = ?", (booking_id,))
    if view is None:  # the row was written in the transaction above
        msg = f"booking {booking_id} vanished after commit"
        raise RuntimeError(msg)
    return view


def _booking_view(
    db: Database, args: FlightBooking, where: str, params: tuple[Any, ...]
) -> FlightBookingData | None:
    """Describe one booking the same way, whether just made or found by a status lookup."""
    row = db.query_one(
        "SELECT b.booking_id, b.flight_no, b.flight_date, b.passenger_name, b.passenger_masked,"
        " f.depart_time, f.arrive_time, f.price_cents FROM flight_bookings b JOIN flights f"
        " ON f.flight_no = b.flight_no AND f.flight_date = b.flight_date WHERE " + where,
        params,
    )
    if row is None:
        return None
    return {
        "booking_id": row["booking_id"],
        "flight_no": row["flight_no"],
        "origin": args.origin,
        "destination": args.destination,
        "departure_date": row["flight_date"],
        "depart_time": row["depart_time"],
        "arrive_time": row["arrive_time"],
        "price_cents": row["price_cents"],
        "passenger_name": row["passenger_name"],
        "passenger_id": row["passenger_masked"],
    }


def booking_status(args: FlightBooking, ctx: ToolContext) -> FlightBookingData | None:
    """Find the booking a timed-out call may have made, or ``None``."""
    db = ctx.database()
    token = args.passenger_id
    if not token.startswith(TOKEN_PREFIX):
        token = IdentityVault(db).store(ctx.user_id, token)
    return _booking_view(
        db,
        args,
        "b.user_id = ? AND b.flight_date = ? AND b.passenger_token = ?",
        (ctx.user_id, args.departure_date.isoformat(), token),
    )


class BookingNotice(FlightBooking):
    """Arguments of the text message about a booking just made: the booking's, and a channel."""

    channel: Literal["sms", "in_app"] = Field(
        default="sms", description="sms (text message) or in_app (站内信)."
    )


def notify_booking(args: BookingNotice, ctx: ToolContext) -> BookingNoticeData:
    """Send the user the booking they just made (it must exist: ``requires`` the booking)."""
    db = ctx.database()
    booking = booking_status(args, ctx)
    if booking is None:
        msg = "no booking on that date for this passenger"
        raise ResourceNotFoundError(msg, details={"reason": "no_booking"})
    route = f"{booking['origin']}→{booking['destination']}"
    content = (
        f"您已预订 {booking['departure_date']} {route} {booking['flight_no']} 航班，"
        f"{booking['depart_time']} 起飞，订单号 {booking['booking_id']}。"
    )
    with db.transaction() as conn:
        ledger = ctx.ledger(conn, tool="notify_booking")
        conn.execute(
            "INSERT INTO notifications (user_id, channel, content) VALUES (?, ?, ?)",
            (ctx.user_id, args.channel, content),
        )
        sent: BookingNoticeData = {
            "booking_id": booking["booking_id"],
            "channel": args.channel,
            "sent": True,
        }
        return ledger.record(sent)


def _summarize(data: FlightBookingData) -> str:
    return (
        f"booked {data['booking_id']}: {data['flight_no']} {data['departure_date']} "
        f"{data['depart_time']}-{data['arrive_time']}"
    )


FLIGHT_TOOLS = (
    ToolCard(
        name="book_flight_ticket",
        description="Book a seat on the earliest flight between two cities on a date.",
        when_to_use="The user wants a flight booked and has given origin, destination, date, "
        "the passenger's name and ID number.",
        when_not_to_use="Any of those is missing (ask for just those); the user only asks "
        "about prices or times.",
        parameters=FlightBooking,
        returns="booking_id (FL-YYYYMMDDNNN), flight_no, depart_time, arrive_time, price.",
        handler=book_flight_ticket,
        idempotent=False,
        permission="flight:book",
        domain="flight",
        risk="high",
        status_lookup=booking_status,
        timeout_s=5.0,
        summarize=_summarize,
    ),
    ToolCard(
        name="notify_booking",
        description="Text the user the booking just made (flight, time, booking number).",
        when_to_use="Only when the user asked to be told once it is booked (订好了通知我).",
        when_not_to_use="Never to reply in the conversation; never unasked; never before the "
        "booking succeeded.",
        parameters=BookingNotice,
        returns="booking_id, channel, sent.",
        handler=notify_booking,
        idempotent=False,
        permission="flight:book",
        domain="flight",
        requires=("book_flight_ticket",),
        rate_limit="5/minute",
    ),
)
