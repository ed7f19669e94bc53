"""What the weather agent says, in zh and en."""

from __future__ import annotations

from typing import Any

from nodes.tasks import Describer, Speaker, Wording
from state import AgentState, ToolResult

WORDING: Wording = {
    "slot.city": {"zh": "城市", "en": "city"},
    "intent.QUERY_WEATHER": {"zh": "查询天气", "en": "check the weather"},
    "ask.city": {
        "zh": "好的，我来帮您{task}。请问是哪个城市？",
        "en": "Sure, I can help you {task}. Which city?",
    },
    "weather_now": {
        "zh": "{city}现在{condition}，气温 {temp_c:g}°C{humidity}。",
        "en": "It's {condition} in {city} right now, {temp_c:g}°C{humidity}.",
    },
    "humidity": {
        "zh": "，湿度 {value}%",
        "en": ", humidity {value}%",
    },
    "city_not_found": {
        "zh": "未找到该城市：{city}。请确认城市名称是否正确。",
        "en": "I couldn't find a city called {city}. Please check the name.",
    },
    "weather_unavailable": {
        "zh": "抱歉，暂时无法获取{city}的天气（天气服务没有及时响应），请稍后再试。",
        "en": "Sorry, I can't get the weather for {city} right now (the weather service did not answer in time). Please try again later.",
    },
    "weather_format_changed": {
        "zh": "抱歉，天气服务返回的数据格式有变，暂时无法提供{city}的天气；问题已记录。",
        "en": "Sorry, the weather service changed its data format, so I can't give the weather for {city} right now; the problem has been logged.",
    },
}


def describe_weather(result: ToolResult, state: AgentState, speaker: Speaker) -> str:
    """Report the weather, a city that does not exist, or why there is no report."""
    data: dict[str, Any] = result.get("data") or {}
    city = (state.get("slots") or {}).get("city") or data.get("city", "")
    if result.get("status") == "success":
        humidity = data.get("humidity")
        return speaker.say(
            "weather_now",
            city=city,
            condition=data["condition"],
            temp_c=data["temp_c"],
            humidity="" if humidity is None else speaker.say("humidity", value=humidity),
        )
    if result.get("error_type") == "not_found":
        return speaker.say("city_not_found", city=city)
    if data.get("reason") == "schema_drift":
        return speaker.say("weather_format_changed", city=city)
    return speaker.say("weather_unavailable", city=city)


DESCRIBE: dict[str, Describer] = {"query_weather": describe_weather}
