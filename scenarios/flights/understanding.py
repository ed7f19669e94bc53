"""How a flight booking is recognized, and its five slots found over several messages."""

from __future__ import annotations

import re
from datetime import date

from contract.scenario import Beyond, SlotResult
from scenarios.dates import find_date, is_past
from scenarios.gazetteer import city_pattern
from scenarios.notify import asks_for_notification
from security.vault import id_card_problem, id_number, mask_id_card
from state import SlotValues

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
    rf"|(?:^|[，,。;；])\s*([{COMMON_SURNAMES}][\u4e00-\u9fff]{{1,2}})\s*(?=[，,。;；]|$)"
)
"""A name said as a clause of its own ("…的票，张三，1101…", "…飞北京，张三，身份证…")."""
_NAME_FOR = re.compile(
    rf"(?:给|为|帮|替|\bfor\s+)\s*([{COMMON_SURNAMES}][\u4e00-\u9fff]{{1,2}})"
    r"(?=订|买|的|[，,。.\s]|$)"
)
"""A passenger named as whom the ticket is for ("给张三订", "for 张三")."""
_LATIN_NAME = re.compile(r"(?<![A-Za-z])([A-Z][a-z]+ [A-Z][a-z]+)(?![A-Za-z])")
"""Two capitalized words ("Zhang San"): a name, unless they are a place or a date."""
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
    name = _NAME_ZH.search(text) or _NAME_EN.search(text) or _NAME_FOR.search(text)
    name = name or _latin_name(text, cities)
    number = _ID_NUMBER.search(text)
    before_id = _NAME_BEFORE_ID.search(text)
    if name:
        slots["passenger_name"] = name.group(1)
    elif (
        before_id
        and not re.fullmatch(cities, said := before_id.group(1) or before_id.group(2))
        and not _NOT_IN_NAMES.search(said)
    ):
        slots["passenger_name"] = said
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


def _latin_name(text: str, cities: str) -> re.Match[str] | None:
    """Two capitalized words that are neither cities nor a month and a day ("for Zhang San")."""
    for found in _LATIN_NAME.finditer(text):
        words = found.group(1).split()
        if any(re.fullmatch(cities, word, re.IGNORECASE) for word in words):
            continue
        if find_date(found.group(1), date(2000, 1, 1)) is not None:
            continue
        return found
    return None


BEYOND = (Beyond("flight_change"), Beyond("group_booking"))
"""Refunding, changing or cancelling a ticket: no tool here does it (a person does); nor
booking for several passengers at once ("订两张明天的票": a booking is one passenger's, and
booking one would not be what was asked)."""
