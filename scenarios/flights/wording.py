"""What the flight agent says, in zh and en."""

from __future__ import annotations

from contract.scenario import Describer, Speaker, Wording
from scenarios.flights.tools import FlightBookingData
from state import AgentState, ToolResult
from tools.executor.envelope import result_data

WORDING: Wording = {
    "beyond.flight_change": {
        "zh": "机票的退票、改签和取消暂时不能在这里办理，正在为您转接人工客服，请稍候。",
        "en": (
            "I can't refund, change or cancel a ticket here; I'm passing you to a human "
            "agent, please hold on."
        ),
    },
    "beyond.group_booking": {
        "zh": "这里一次只能为一位乘客订票，多位乘客的机票正在为您转接人工客服办理，请稍候。",
        "en": (
            "I can only book one passenger at a time here; I'm passing you to a human agent "
            "to book for several, please hold on."
        ),
    },
    "intent.BOOK_FLIGHT": {"zh": "预订机票", "en": "book a flight"},
    "reason.check digit does not match": {"zh": "校验位不正确", "en": "wrong check digit"},
    "reason.sold_out": {"zh": "已售罄", "en": "sold out"},
    "reason.no_flight": {"zh": "无此航线", "en": "no such flight"},
    "reason.no_seat": {"zh": "无座位", "en": "no seat"},
    "invalid.passenger_id": {
        "zh": "身份证号 {value} {reason}，请核对后重新提供。",
        "en": "The ID number {value} is not valid ({reason}); please check it.",
    },
    "invalid.departure_date": {
        "zh": "{value} 已经过去了，请换一个今天以后的出发日期。",
        "en": "{value} has already passed; please choose a travel date from today on.",
    },
    "slot.flight_no": {"zh": "航班号", "en": "flight"},
    "slot.origin": {
        "zh": "出发城市",
        "en": "departure city",
    },
    "slot.destination": {
        "zh": "到达城市",
        "en": "destination",
    },
    "slot.departure_date": {
        "zh": "出发日期",
        "en": "travel date",
    },
    "slot.passenger_name": {
        "zh": "乘客姓名",
        "en": "passenger's name",
    },
    "slot.passenger_id": {
        "zh": "乘客身份证号",
        "en": "passenger's ID number",
    },
    "flight_booked": {
        "zh": "已为{passenger_name}（身份证 {passenger_id}）预订 {departure_date} {origin}→{destination} 的 {flight_no} 航班，{depart_time} 起飞，{arrive_time} 到达，订单号 {booking_id}，票价 {price} 元。",
        "en": "Booked {flight_no} from {origin} to {destination} on {departure_date} for {passenger_name} (ID {passenger_id}): departs {depart_time}, arrives {arrive_time}. Booking {booking_id}, fare ¥{price}.",
    },
    "step.notify_booking": {"zh": "发送预订短信", "en": "text you the booking"},
    "booking_notice_sent": {
        "zh": "已按您的要求短信通知您这张机票的信息。",
        "en": "As you asked, I've texted you the booking.",
    },
    "booking_notice_not_sent": {
        "zh": "没有订成，所以没有发送通知。",
        "en": "Nothing was booked, so no text was sent.",
    },
    "flight_unavailable_named": {
        "zh": "{departure_date} {origin}→{destination} 的 {flight_no} 没有可订的座位（{reason}）。要换个航班或日期吗？",
        "en": "There is no seat on {flight_no} from {origin} to {destination} on {departure_date} ({reason}). Another flight or date?",
    },
    "flight_unavailable": {
        "zh": "{departure_date} {origin}→{destination} 没有可订的航班（{reason}）。要换个日期吗？",
        "en": "There is no seat from {origin} to {destination} on {departure_date} ({reason}). Another date?",
    },
}


def describe_flight(result: ToolResult, state: AgentState, speaker: Speaker) -> str | None:
    """Confirm a booking with its details, or say why there was no seat (else ``None``)."""
    data = result_data(result, FlightBookingData)
    slots = state.get("slots") or {}
    if result.get("status") == "success":
        return speaker.say(
            "flight_booked",
            price=f"{data['price_cents'] / 100:,.0f}",
            **{k: v for k, v in data.items() if k != "price_cents"},
        )
    if result.get("error_type") == "not_found":
        reason = str(data.get("reason"))
        if reason not in ("sold_out", "no_flight"):
            reason = "no_seat"
        return speaker.say(
            "flight_unavailable_named" if slots.get("flight_no") else "flight_unavailable",
            flight_no=slots.get("flight_no", ""),
            origin=slots.get("origin", ""),
            destination=slots.get("destination", ""),
            departure_date=slots.get("departure_date", ""),
            reason=speaker.say(f"reason.{reason}"),
        )
    return None


def describe_notice(result: ToolResult, state: AgentState, speaker: Speaker) -> str | None:
    """Say the booking was texted, or that nothing was sent because nothing was booked.

    Any other failure is the generic vocabulary's to word (``None``).
    """
    if result.get("status") == "success":
        return speaker.say("booking_notice_sent")
    if (result.get("data") or {}).get("requires"):
        return speaker.say("booking_notice_not_sent")
    return None


DESCRIBE: dict[str, Describer] = {
    "book_flight_ticket": describe_flight,
    "notify_booking": describe_notice,
}
