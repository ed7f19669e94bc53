"""A scenario a user adds in their own module: store opening hours (the README's example)."""

from __future__ import annotations

from datetime import date
from typing import TypedDict

from pydantic import BaseModel, ConfigDict, Field

from contract.scenario import Scenario, SlotResult, Speaker, TaskSpec
from state import AgentState, ToolResult
from tools.executor.errors import ResourceNotFoundError
from tools.registry.cards import ToolCard
from tools.registry.context import ToolContext

HOURS = {"北京": "09:00–21:00", "上海": "10:00–22:00"}


class StoreQuery(BaseModel):
    """Arguments of an opening-hours lookup."""

    model_config = ConfigDict(extra="forbid")
    city: str = Field(min_length=1, max_length=20, description="The store's city, e.g. 北京.")


class StoreHours(TypedDict):
    """What ``query_store_hours`` answers."""

    city: str
    hours: str


def query_store_hours(args: StoreQuery, ctx: ToolContext) -> StoreHours:
    """Look up a store's opening hours."""
    if args.city not in HOURS:
        raise ResourceNotFoundError(f"no store in {args.city}", details={"city": args.city})
    return {"city": args.city, "hours": HOURS[args.city]}


def extract(text: str, intent: str, *, today: date) -> SlotResult:
    """Find the city: one of the cities that have a store."""
    city = next((name for name in HOURS if name in text), None)
    return SlotResult(slots={"city": city} if city else {})


def describe(result: ToolResult, state: AgentState, speaker: Speaker) -> str | None:
    """Say the hours, or that there is no store there; other failures are the generic ones."""
    data = result.get("data") or {}
    if result.get("status") == "success":
        return speaker.say("store_hours", **data)
    if result.get("error_type") == "not_found":
        return speaker.say("no_store", city=(state.get("slots") or {}).get("city", ""))
    return None


STORE = Scenario(
    name="store",
    tasks=(
        TaskSpec(
            intent="QUERY_STORE_HOURS",
            tool="query_store_hours",
            required_slots=("city",),
            handoff_on_failure=False,
        ),
    ),  # fmt: skip
    cards=(
        ToolCard(
            name="query_store_hours",
            description="Look up a store's opening hours by city.",
            when_to_use="The user asks when a store opens or closes.",
            when_not_to_use="Anything about orders or deliveries.",
            parameters=StoreQuery,
            returns="city, hours.",
            handler=query_store_hours,
            idempotent=True,
            permission="store:read",
            domain="store",
        ),
    ),
    grants={"customer": frozenset({"store:read"})},
    examples={
        "QUERY_STORE_HOURS": {
            "zh": (
                "门店几点开门",
                "你们店营业时间是几点到几点",
                "北京门店几点关门",
                "上海的店今天开到几点",
                "门店营业时间",
                "店里晚上几点打烊",
                "周末门店开不开",
                "请问实体店几点营业",
            ),
            "en": (
                "what are your store opening hours",
                "when does the shanghai store open",
                "what time does the store close tonight",
                "is the beijing shop open on sunday",
                "store hours please",
                "until when is your shop open",
            ),
        }
    },
    extract=extract,
    wording={
        "intent.QUERY_STORE_HOURS": {"zh": "查询门店营业时间", "en": "check store hours"},
        "ask.city": {"zh": "请问是哪个城市的门店？", "en": "Which city's store?"},
        "store_hours": {"zh": "{city}门店营业时间：{hours}。", "en": "The {city} store: {hours}."},
        "no_store": {"zh": "{city}没有门店。", "en": "There is no store in {city}."},
    },
    describe={"query_store_hours": describe},
)
