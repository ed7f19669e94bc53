"""What the weather agent says, in zh and en."""

from __future__ import annotations

from contract.scenario import Describer, Speaker, Wording
from scenarios.weather.tools import WeatherData
from state import AgentState, ToolResult
from tools.executor.envelope import result_data

WORDING: Wording = {
    "slot.city": {"zh": "城市", "en": "city"},
    "intent.QUERY_WEATHER": {"zh": "查询天气", "en": "check the weather"},
    "ask.city": {
        "zh": "好的，我来帮您{task}。请问是哪个城市？",
        "en": "Sure, I can help you {task}. Which city?",
    },
    "now_only": {
        "zh": "我只能查到实时天气，查不到 {day} 的预报。",
        "en": "I can only see the weather right now, not the forecast for {day}. ",
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
}


def describe_weather(result: ToolResult, state: AgentState, speaker: Speaker) -> str | None:
    """Report the weather, or a city that does not exist; other failures are generic."""
    data = result_data(result, WeatherData)
    city = (state.get("slots") or {}).get("city") or data.get("city", "")
    if result.get("status") == "success":
        humidity = data.get("humidity")
        now = speaker.say(
            "weather_now",
            city=city,
            condition=data["condition"],
            temp_c=data["temp_c"],
            humidity="" if humidity is None else speaker.say("humidity", value=humidity),
        )
        day = (state.get("slots") or {}).get("day")
        return f"{speaker.say('now_only', day=day)}{now}" if day else now
    if result.get("error_type") == "not_found":
        return speaker.say("city_not_found", city=city)
    return None


DESCRIBE: dict[str, Describer] = {"query_weather": describe_weather}
