"""How a flight booking is recognized, and its five slots found over several messages."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date

from contract.scenario import Beyond, Cues, SlotResult
from contract.text_match import normalize
from scenarios.dates import find_date, is_past
from scenarios.gazetteer import city_pattern
from scenarios.notify import asks_for_notification
from security.vault import id_card_problem, id_number, mask_id_card
from state import SlotValues

CUES: dict[str, Cues] = {
    "BOOK_FLIGHT": (
        ("机票", 1.2),
        ("订票", 1.2),
        ("张票", 1.0),  # "订一张票", "买张票": flights are the only tickets sold here
        ("航班", 1.0),
        ("坐飞机", 1.0),
        ("飞机", 0.4),
        ("乘客", 0.4),
        ("身份证", 0.4),
        ("book a flight", 1.2),
        ("flight", 1.0),
        ("plane ticket", 1.2),
        ("fly to", 1.0),
        ("fly from", 1.0),
        ("passenger", 0.4),
        ("ticket", 0.4),
        ("机位", 0.4),
    ),
    "SEARCH_FLIGHTS": (  # asking about the day's flights, not booking one
        ("有哪些航班", 1.8),
        ("哪些航班", 1.8),
        ("航班有哪些", 1.8),
        ("有什么航班", 1.8),
        ("什么航班", 1.4),
        ("有没有航班", 1.8),
        ("有航班吗", 1.8),
        ("哪班", 1.4),
        ("哪一班", 1.4),
        ("几班", 1.2),
        ("航班信息", 1.6),
        ("查航班", 1.8),
        ("查一下航班", 1.8),
        ("查下航班", 1.8),
        ("查询航班", 1.8),
        ("看看航班", 1.8),
        ("航班时刻", 1.8),
        ("时刻表", 1.6),
        ("几点的航班", 1.6),
        ("几点起飞", 1.4),
        ("最便宜", 1.2),
        ("最早", 0.8),
        ("最晚", 0.8),
        ("票价", 1.0),
        ("还有座", 1.0),
        ("what flights", 1.8),
        ("which flights", 1.8),
        ("which flight", 1.2),
        ("any flights", 1.8),
        ("flights are there", 1.8),
        ("show me flights", 1.8),
        ("show me the flights", 1.8),
        ("list flights", 1.8),
        ("list the flights", 1.8),
        ("search flights", 1.8),
        ("search for flights", 1.8),
        ("find flights", 1.6),
        ("flight times", 1.6),
        ("flight schedule", 1.6),
        ("cheapest", 1.2),
        ("earliest", 0.8),
        ("latest flight", 1.0),
        ("fares", 1.0),
    ),
}
FLY_SUPPORT, ROUTE_SUPPORT, TICKET_SUPPORT = 1.0, 0.6, 1.0
"""Flying to a city is a flight request ("明天飞广州", "fly to Beijing"); a bare route
("from Shanghai to Chengdu", "从上海到北京") only supports one: it could be a train. A ticket
booked to a city ("订张后天去广州的票") is one: flights are the only tickets sold here, and
the confirmation names the flight."""

_NAME_ZH = re.compile(
    r"(?:乘客|旅客|乘机人|名字是|名字叫|姓名[是:：]?|我叫)\s*(?:是|为|叫)?\s*"
    r"([\u4e00-\u9fff]{2,4}?)(?=[，,。.\s]|身份|的|$|\d)"
)
_NAME_EN = re.compile(r"passenger(?:'s name)?(?: is| name is|:)?\s+([A-Z][a-z]+(?: [A-Z][a-z]+)*)")
COMMON_SURNAMES = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏"
    "魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵"
    "万钱严覃武戴莫孔向汤常温康施文牛樊葛邢安齐易乔伍庞颜倪庄聂章鲁岳翟殷詹申欧耿关兰焦俞左柳甘"
    "祝包宁尚符舒阮柯纪梅童凌毕单季裴霍涂成苗谷盛曲翁冉骆蓝路游辛靳管柴蒙鲍华喻祁蒲房滕屈饶解牟"
    "艾尤阳时穆农司卓古吉缪简车项连芦麦褚娄窦戚岑景党宫费卜冷晏席卫米柏宗瞿桂全佟应臧闵苟邬边卞"
    "姬师和仇栾隋商刁沙荣巫寇桑郎甄丛仲虞敖巩明佘池查麻苑迟邝"
)
"""The surnames most people have: a bare answer starting with one can be a passenger's name."""
_BARE_NAME = re.compile(rf"\s*([{COMMON_SURNAMES}][\u4e00-\u9fff]{{1,3}})\s*[，,。.]?\s*")
"""A message that is only a name ("张三"), as the answer to the question for the passenger."""
_BARE_NAME_EN = re.compile(r"\s*([A-Z][a-z]+(?: [A-Z][a-z]+){1,2})\s*[,.]?\s*")
"""A name alone in Latin letters: two or three capitalized words ("Zhang San")."""
_NAME_BEFORE_ID = re.compile(
    rf"(?:^|[，,。;；\s])([{COMMON_SURNAMES}][\u4e00-\u9fff]{{1,3}})\s*[，,\s]\s*(?=\d{{17}}[\dXx])"
)
"""A name said as a clause of its own just before the ID number ("…的票，张三，1101…")."""
_NOT_IN_NAMES = re.compile(r"[票机航班车铁天号月日点周末吗呢吧了的个么去到从走]")
"""Characters that make a short answer a word, not a name."""
_ID_NUMBER = re.compile(r"(?<![0-9])(\d{17}[\dXx])(?![0-9])")


_BOOK_NAMED = re.compile(
    r"(?:订|买|要|\bbook\b|\btake\b)\s*[^，,。.!！?？]{0,6}?(?<![a-z0-9-])[a-z][a-z0-9]\d{3,4}(?![a-z0-9-])",
    re.IGNORECASE,
)
"""Booking a flight by its number (in the normalized, lower-case message)."""
_FLIGHT_NO = re.compile(r"(?<![A-Za-z0-9-])[A-Z][A-Z0-9]\d{3,4}(?![A-Za-z0-9-])", re.IGNORECASE)
"""A flight number (CA1858, MU5101, 3U8881); codes with a dash (ACC-, OD-, AP-) are not."""


_ASKING = re.compile(
    r"(?:哪些|哪班|哪一班|几班|几点|什么|啥|有没有|有.{0,6}吗|还有.{0,4}吗|多少钱|查[^，,。]{0,14}?航班)"
    r"[^，,。]{0,12}?(?:航班|飞机|机票|座位|班)|(?:航班|飞机|机票|座位)[^，,。]{0,12}?(?:吗|呢|哪些|哪写|几点|多少钱)"
    r"|查[^，,。]{0,16}?航班"
    r"|\b(?:what|which|whats|waht|any|how much|how many|show|list|find|are there|is there|options|"
    r"schedule|times|earliest|latest|cheapest|still have)\b[^.!?]{0,40}?\b(?:flights?|flying)\b"
    r"|\bflights?\b[^.!?]{0,50}?\b(?:fares|prices|times|schedule|options)\b",
    re.IGNORECASE,
)
"""A question about flights (which, when, how much, any seats?), not a request to book one."""
_BOOKING = re.compile(r"订|买|预订|预定|\bbook\b|\breserve\b", re.IGNORECASE)
SEARCH_SUPPORT = 1.8


def support(text: str) -> Iterator[tuple[str, float, str]]:
    """Flying to or from a city supports a flight booking; a route from A to B a little.

    A question about the flights ("有哪些航班", "any flights…?") supports a search instead,
    unless it also asks to book.
    """
    cities = city_pattern()
    normal = normalize(text)
    if _ASKING.search(normal) and not _BOOKING.search(normal):
        yield "SEARCH_FLIGHTS", SEARCH_SUPPORT, "asks about flights"
        return
    if re.search(
        rf"(?:飞往?|(?:fly|flying|flight|flights)\s+(?:to|from)\s*)(?:{cities})", normal, re.I
    ):
        yield "BOOK_FLIGHT", FLY_SUPPORT, "fly to a city"
    elif re.search(rf"(?:订|买)[^，,。]{{0,8}}?(?:去|到|飞)(?:{cities})[^，,。]{{0,4}}?票", normal):
        yield "BOOK_FLIGHT", TICKET_SUPPORT, "a ticket to a city"
    elif re.search(
        rf"(?:订|买|\bbook\b)[^，,。]{{0,10}}?(?:{cities})\s*(?:到|去|飞|→|->|-|\bto\b)\s*(?:{cities})",
        normal,
        re.I,
    ):
        yield "BOOK_FLIGHT", TICKET_SUPPORT, "book a route"
    elif re.search(rf"(?:从|from\s+)(?:{cities})\s*(?:出发)?\s*(?:到|去|to\s)", normal, re.I):
        yield "BOOK_FLIGHT", ROUTE_SUPPORT, "route"
    if _BOOK_NAMED.search(normal):  # "订CA1858", "就订MU5101吧": a flight named to book
        yield "BOOK_FLIGHT", TICKET_SUPPORT, "book a flight named"


def extract(text: str, intent: str, *, today: date) -> SlotResult:
    """Find route, date, passenger name and ID number; corrections simply restate a value."""
    slots: SlotValues = {}
    invalid: dict[str, str] = {}
    cities = city_pattern()
    route = re.search(
        rf"(?:从|from\s+)?({cities})\s*(?:出发)?\s*(?:到|去|飞往|飞|→|->|-|to)\s*({cities})",
        text,
        re.IGNORECASE,
    )
    if route:
        slots["origin"], slots["destination"] = route.group(1), route.group(2)
    else:
        to = re.search(rf"(?:去|到|飞往|飞|\bto\s+)({cities})", text, re.IGNORECASE)
        frm = re.search(rf"(?:从|\bfrom\s+)({cities})", text, re.IGNORECASE)
        if to:
            slots["destination"] = to.group(1)
        if frm:
            slots["origin"] = frm.group(1)
    day = find_date(text, today)
    if day is not None and is_past(day, today):
        invalid["departure_date"] = f"{day.isoformat()}: past"
    elif day is not None:
        slots["departure_date"] = day.isoformat()
    name = _NAME_ZH.search(text) or _NAME_EN.search(text)
    number = _ID_NUMBER.search(text)
    before_id = _NAME_BEFORE_ID.search(text)
    if name:
        slots["passenger_name"] = name.group(1)
    elif (
        before_id
        and not re.fullmatch(cities, before_id.group(1))
        and not _NOT_IN_NAMES.search(before_id.group(1))
    ):
        slots["passenger_name"] = before_id.group(1)
    elif not slots and not invalid:  # nothing else said: perhaps a name alone (with the ID)
        rest = _ID_NUMBER.sub(" ", text)
        alone = (
            (_BARE_NAME.fullmatch(rest) or _BARE_NAME_EN.fullmatch(rest)) if text.strip() else None
        )
        if (
            alone
            and not re.fullmatch(cities, alone.group(1))  # "武汉" is a city, not 武 汉
            and not _NOT_IN_NAMES.search(alone.group(1))  # "高铁票", "周末吧"
        ):
            slots["passenger_name"] = alone.group(1)
    if flight := _FLIGHT_NO.search(text):  # "下午那班CA1858": that flight, not the earliest
        slots["flight_no"] = flight.group(0).upper()
    if asks_for_notification(text):  # "订好了通知我": a text message once it is booked
        slots["notify"] = "sms"
    if number:
        typed = id_number(number.group(1))
        problem = id_card_problem(typed)
        if problem:
            invalid["passenger_id"] = f"{mask_id_card(typed)}: {problem}"
        else:
            slots["passenger_id"] = typed
    return SlotResult(slots=slots, invalid=invalid)


BEYOND = (
    Beyond(
        "flight_change",
        re.compile(
            r"退票|改签|退(?:掉|了)?[^，,。.!！?？]{0,6}?机票|取消[^，,。.!！?？]{0,6}?(?:机票|航班)"
            r"|机票[^，,。.!！?？]{0,4}?(?:退|取消|改)|(?:改|换)(?:一下)?[^，,。.!！?？]{0,4}?航班"
            r"|\b(?:cancel|refund|change|reschedule|rebook)\b[^,.!?]{0,20}?"
            r"\b(?:flight|plane ticket|air ?ticket|ticket)s?\b"
        ),
    ),
    Beyond(
        "group_booking",
        re.compile(
            r"[两二三四五六七八九2-9]\s*张[^，,。.!！?？]{0,8}?票"
            r"|(?:订|买)\s*(?:[两二三四五2-5])\s*(?:个人|位)"
            r"|\b(?:two|three|four|five|[2-9]) (?:tickets|seats|passengers)\b"
        ),
    ),
)
"""Refunding, changing or cancelling a ticket: no tool here does it (a person does); nor
booking for several passengers at once ("订两张明天的票": a booking is one passenger's, and
booking one would not be what was asked)."""
