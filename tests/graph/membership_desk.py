"""A newcomer's domain: a gym's membership desk, five functions and a six-rule policy.

Written as ``docs/packs.md`` tells a newcomer to write it, and nothing else: typed,
documented functions (two of them writes, one with a constraint in its type, both with a
precondition that reads the backend), example requests, a short policy. The fifteen
conversations below are what the desk must handle; ``tests/graph/test_newcomer_pack.py``
runs them on the compiled graph with a scripted model and without a model, and
``tests/services/test_newcomer_local_model.py`` with the real local model.

Each turn may carry what a competent model answers when it is asked (``model``): the
scripted model gives it, the local model is left to find it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Annotated, Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import Field

from graph.builder import build_graph
from packs import Pack, Refusal, ToolAnnotation, pack_from_functions
from state import Context
from tests.conftest import fast_executor

TODAY = "2024-06-18"
POLICY = """\
1. Identify the member by the phone number on file before reading or changing a membership.
2. Book only classes that still have seats; a full class is refused, not queued.
3. A membership may be frozen for 7 to 30 days, at most once a calendar year.
4. Never book or freeze anything before the member has said yes to the exact details.
5. Never tell one member about another member.
6. Refunds, plan changes and complaints go to a person at the front desk."""


class Desk:
    """The desk's backend: members, classes, bookings and freezes, in memory."""

    def __init__(self) -> None:
        self.members: dict[str, dict[str, Any]] = {
            "M-1001": {
                "name": "Lin Yi",
                "phone": "13800001111",
                "plan": "annual",
                "expires": "2025-03-31",
                "status": "active",
                "frozen_in": [],
            },
            "M-1002": {
                "name": "Zhou Min",
                "phone": "13900002222",
                "plan": "monthly",
                "expires": "2024-07-10",
                "status": "active",
                "frozen_in": [2024],
            },
        }
        self.classes: dict[str, dict[str, Any]] = {
            "C-0620-YOGA": {"name": "Yoga", "day": "2024-06-20", "time": "09:00", "seats": 3},
            "C-0620-SPIN": {"name": "Spinning", "day": "2024-06-20", "time": "18:30", "seats": 0},
            "C-0621-HIIT": {"name": "HIIT", "day": "2024-06-21", "time": "07:30", "seats": 5},
        }
        self.bookings: list[tuple[str, str]] = []
        self.freezes: list[tuple[str, int]] = []

    # ---- the five functions a team brings ----------------------------------------------
    def find_member(self, phone: str) -> dict[str, Any]:
        """Find a member by the phone number on file (按手机号查找会员).

        Args:
            phone: The member's phone number (手机号), such as '13800001111'.

        Returns:
            member_id: The member number (会员号).
            name: The member's name (姓名).

        Examples:
            This is 13800001111
            我的手机号是13800001111
        """
        for member_id, member in self.members.items():
            if member["phone"] == phone:
                return {"member_id": member_id, "name": member["name"]}
        raise Refusal(f"No member has the phone number {phone}", zh=f"没有手机号为 {phone} 的会员")

    def get_membership(self, member_id: str) -> dict[str, Any]:
        """Read a membership: its plan, expiry date and status (查询会员卡).

        Args:
            member_id: The member number (会员号), such as 'M-1001'.

        Returns:
            plan: The plan (套餐), 'annual' (年卡) or 'monthly' (月卡).
            expires: The expiry date (到期日).
            status: Whether it is active or frozen (状态).

        Examples:
            What's my membership status?
            我的会员卡什么时候到期
        """
        member = self.members.get(member_id)
        if member is None:
            raise LookupError(f"No membership {member_id}")
        return {k: member[k] for k in ("plan", "expires", "status")}

    def list_classes(self, day: date) -> list[dict[str, Any]]:
        """List the classes on a day, with the seats left (查询课程).

        Args:
            day: The day (日期).

        Returns:
            class_id: The class number (课程号).
            time: The start time (时间).
            seats_left: Seats left (剩余名额).

        Examples:
            What classes are there on June 20?
            6月20号有什么课
        """
        return [
            {
                "class_id": class_id,
                "name": c["name"],
                "time": c["time"],
                "seats_left": c["seats"],
            }
            for class_id, c in self.classes.items()
            if c["day"] == day.isoformat()
        ]

    def has_seats(self, class_id: str) -> str | None:
        """The booking's precondition: the class exists and has a seat left."""
        found = self.classes.get(class_id)
        if found is None:
            raise LookupError(f"No class {class_id}")
        if found["seats"] <= 0:
            raise Refusal(f"{class_id} is full", zh=f"{class_id} 已经满员")
        return None

    def book_class(self, member_id: str, class_id: str) -> dict[str, Any]:
        """Book a member into a class (预约课程).

        Args:
            member_id: The member number (会员号), such as 'M-1001'.
            class_id: The class number (课程号), such as 'C-0620-YOGA'.

        Returns:
            booking_id: The booking number (预约号).
            class_id: The class number (课程号).
            time: The start time (时间).
        """
        self.has_seats(class_id)
        self.classes[class_id]["seats"] -= 1
        self.bookings.append((member_id, class_id))
        found = self.classes[class_id]
        return {
            "booking_id": f"B-{len(self.bookings):04d}",
            "class_id": class_id,
            "day": found["day"],
            "time": found["time"],
        }

    def may_freeze(self, member_id: str) -> dict[str, str] | None:
        """The freeze's precondition: not frozen yet this calendar year."""
        member = self.members.get(member_id)
        if member is None:
            raise LookupError(f"No membership {member_id}")
        if date.fromisoformat(TODAY).year in member["frozen_in"]:
            return {
                "en": "this membership was already frozen once this year",
                "zh": "这张会员卡今年已经冻结过一次",
            }
        return None

    def freeze_membership(
        self, member_id: str, days: Annotated[int, Field(ge=7, le=30)]
    ) -> dict[str, Any]:
        """Freeze a membership for 7 to 30 days, once a year (冻结会员卡).

        Args:
            member_id: The member number (会员号), such as 'M-1001'.
            days: How many days to freeze it (冻结天数).

        Returns:
            frozen_until: Frozen until (冻结至).
        """
        refused = self.may_freeze(member_id)
        if refused:
            raise Refusal(refused["en"], zh=refused["zh"])
        self.members[member_id]["frozen_in"].append(2024)
        self.members[member_id]["status"] = "frozen"
        self.freezes.append((member_id, days))
        until = date.fromisoformat(TODAY) + timedelta(days=days)
        return {"member_id": member_id, "frozen_until": until.isoformat()}


def desk_pack(desk: Desk) -> Pack:
    """The pack, as the newcomer builds it: functions, checks, examples, the policy.

    The functions are a fresh desk's methods (each test has its own backend), so what
    ``@tool(...)`` would say is given by name.
    """
    return pack_from_functions(
        "gym",
        [
            desk.find_member,
            desk.get_membership,
            desk.list_classes,
            desk.book_class,
            desk.freeze_membership,
        ],
        policy=POLICY,
        annotations={
            "book_class": ToolAnnotation(
                check=desk.has_seats,
                examples=("book me into C-0620-YOGA", "帮我约 C-0621-HIIT"),
            ),
            "freeze_membership": ToolAnnotation(
                check=desk.may_freeze,
                examples=("freeze my membership for 14 days", "冻结会员卡20天"),
            ),
        },
        examples={"list_classes": ["what's on tomorrow", "明天有什么课"]},
    )


# ---- the fifteen conversations ----------------------------------------------------------------
def start(tool_name: str, **arguments: Any) -> dict[str, Any]:
    args = [{"name": k, "value": str(v)} for k, v in arguments.items()]
    return {"kind": "start", "tool": tool_name, "arguments": args}


def give(**arguments: Any) -> dict[str, Any]:
    args = [{"name": k, "value": str(v)} for k, v in arguments.items()]
    return {"kind": "set", "tool": "none", "arguments": args}


@dataclass(frozen=True)
class Turn:
    """One user message and what the reply must say."""

    say: str
    expect: tuple[str, ...] = ()
    """Each must be in the reply (case-insensitive)."""
    confirm: bool | None = None
    """The turn ends at a confirmation question (``True``) or not (``False``)."""
    model: tuple[dict[str, Any], ...] = ()
    """What a competent model answers, if it is asked."""


@dataclass(frozen=True)
class Conversation:
    name: str
    language: str
    turns: tuple[Turn, ...]
    done: Callable[[Desk], bool] = field(default=lambda desk: True)
    """The backend as it must be at the end."""


def booked(*pairs: tuple[str, str]) -> Callable[[Desk], bool]:
    return lambda desk: desk.bookings == list(pairs)


def frozen(*pairs: tuple[str, int]) -> Callable[[Desk], bool]:
    return lambda desk: desk.freezes == list(pairs)


def nothing(desk: Desk) -> bool:
    return not desk.bookings and not desk.freezes


LIN = "13800001111"
ZHOU = "13900002222"

CONVERSATIONS: tuple[Conversation, ...] = (
    Conversation(
        "find-member-en",
        "en",
        (
            Turn(
                "Hi, this is 13800001111.",
                ("M-1001", "Lin Yi"),
                False,
                (start("find_member", phone=LIN),),
            ),
        ),
        nothing,
    ),
    Conversation(
        "membership-zh",
        "zh",
        (
            Turn(
                "我的手机号是13800001111，帮我看看会员卡什么时候到期",
                ("2025-03-31", "到期日"),
                False,
                (start("get_membership"),),
            ),
        ),
        nothing,
    ),
    Conversation(
        "classes-en",
        "en",
        (
            Turn(
                "What classes are there on June 20?",
                ("C-0620-YOGA", "C-0620-SPIN"),
                False,
                (start("list_classes", day="2024-06-20"),),
            ),
        ),
        nothing,
    ),
    Conversation(
        "book-en",
        "en",
        (
            Turn("This is 13800001111.", ("M-1001",), False, (start("find_member", phone=LIN),)),
            Turn(
                "Book me into C-0620-YOGA",
                ("C-0620-YOGA",),
                True,
                (start("book_class", member_id="M-1001", class_id="C-0620-YOGA"),),
            ),
            Turn("yes", ("C-0620-YOGA",), False),
        ),
        booked(("M-1001", "C-0620-YOGA")),
    ),
    Conversation(
        "book-zh",
        "zh",
        (
            Turn("我是13800001111", ("M-1001",), False, (start("find_member", phone=LIN),)),
            Turn(
                "帮我约一下 C-0620-YOGA",
                ("C-0620-YOGA",),
                True,
                (start("book_class", member_id="M-1001", class_id="C-0620-YOGA"),),
            ),
            Turn("确认", ("预约",), False),
        ),
        booked(("M-1001", "C-0620-YOGA")),
    ),
    Conversation(
        "full-class-refused-en",
        "en",
        (
            Turn("This is 13800001111", ("M-1001",), False, (start("find_member", phone=LIN),)),
            Turn(
                "Please book me into C-0620-SPIN",
                ("full",),
                False,
                (start("book_class", member_id="M-1001", class_id="C-0620-SPIN"),),
            ),
        ),
        nothing,
    ),
    Conversation(
        "freeze-en",
        "en",
        (
            Turn("This is 13800001111", ("M-1001",), False, (start("find_member", phone=LIN),)),
            Turn(
                "Freeze my membership for 14 days",
                ("14",),
                True,
                (start("freeze_membership", member_id="M-1001", days=14),),
            ),
            Turn("yes please", ("2024-07-02",), False),
        ),
        frozen(("M-1001", 14)),
    ),
    Conversation(
        "freeze-over-limit-zh",
        "zh",
        (
            Turn(
                "我是13800001111，帮我把会员卡冻结60天",
                ("7 到 30",),
                False,
                (start("freeze_membership", days=60),),
            ),
            Turn("那就30天吧", ("30",), True, (give(days=30),)),
            Turn("确认", ("2024-07-18",), False),
        ),
        frozen(("M-1001", 30)),
    ),
    Conversation(
        "freeze-once-a-year-en",
        "en",
        (
            Turn(
                "Hello, my number is 13900002222",
                ("M-1002",),
                False,
                (start("find_member", phone=ZHOU),),
            ),
            Turn(
                "I'd like to freeze my membership for 10 days",
                ("already frozen",),
                False,
                (start("freeze_membership", member_id="M-1002", days=10),),
            ),
        ),
        nothing,
    ),
    Conversation(
        "correct-at-confirmation-en",
        "en",
        (
            Turn("This is 13800001111", ("M-1001",), False, (start("find_member", phone=LIN),)),
            Turn(
                "book me into C-0620-YOGA",
                ("C-0620-YOGA",),
                True,
                (start("book_class", member_id="M-1001", class_id="C-0620-YOGA"),),
            ),
            Turn("no wait, make it C-0621-HIIT", ("C-0621-HIIT",), True),
            Turn("yes", ("C-0621-HIIT",), False),
        ),
        booked(("M-1001", "C-0621-HIIT")),
    ),
    Conversation(
        "no-at-confirmation-zh",
        "zh",
        (
            Turn("我是13800001111", ("M-1001",), False, (start("find_member", phone=LIN),)),
            Turn(
                "帮我冻结会员卡14天",
                ("14",),
                True,
                (start("freeze_membership", member_id="M-1001", days=14),),
            ),
            Turn("不用了", ("没有执行",), False),
        ),
        nothing,
    ),
    Conversation(
        "two-requests-en",
        "en",
        (
            Turn("This is 13800001111", ("M-1001",), False, (start("find_member", phone=LIN),)),
            Turn(
                "What's on June 21, and book me into C-0621-HIIT",
                ("C-0621-HIIT", "07:30"),
                True,
                (
                    start("list_classes", day="2024-06-21"),
                    start("book_class", member_id="M-1001", class_id="C-0621-HIIT"),
                ),
            ),
            Turn("yes", ("C-0621-HIIT",), False),
        ),
        booked(("M-1001", "C-0621-HIIT")),
    ),
    Conversation(
        "classes-zh",
        "zh",
        (
            Turn(
                "6月21号有什么课？",
                ("C-0621-HIIT", "剩余名额"),
                False,
                (start("list_classes", day="2024-06-21"),),
            ),
        ),
        nothing,
    ),
    Conversation(
        "unknown-phone-en",
        "en",
        (
            Turn(
                "This is 13700000000",
                ("no member",),
                False,
                (start("find_member", phone="13700000000"),),
            ),
        ),
        nothing,
    ),
    Conversation(
        "phone-and-booking-zh",
        "zh",
        (
            Turn(
                "我是13800001111，帮我约 C-0621-HIIT",
                ("C-0621-HIIT",),
                True,
                (start("book_class", class_id="C-0621-HIIT"),),
            ),
            Turn("好的", ("预约号",), False),
        ),
        booked(("M-1001", "C-0621-HIIT")),
    ),
)

_LEAKS = (
    re.compile(r"[{}\[\]\"]"),
    re.compile(r"\b[a-z]+_[a-z_]+\b"),
    re.compile(r"\bNone\b"),
)


def leaks(reply: str) -> list[str]:
    """What of a program's inside a reply shows: JSON, a snake_case key or name, ``None``."""
    return [m.group(0) for pattern in _LEAKS for m in pattern.finditer(reply)]


def language_ok(reply: str, language: str) -> bool:
    """A Chinese conversation is answered in Chinese, an English one without Chinese."""
    has_chinese = re.search(r"[\u4e00-\u9fff]", reply) is not None
    return has_chinese if language == "zh" else not has_chinese


def scripted_answer(body: dict[str, Any]) -> str:
    """The scripted model: what a competent model answers for the message it is shown."""
    situation = str(body["messages"][-1]["content"])
    message = situation.rsplit("Message: ", 1)[-1].strip()
    for conversation in CONVERSATIONS:
        for turn in conversation.turns:
            if turn.say == message and turn.model:
                return json.dumps({"commands": list(turn.model)})
    return json.dumps({"commands": [{"kind": "cannot_tell", "tool": "none", "arguments": []}]})


# ---- talking it through -----------------------------------------------------------------------
MEMBER = Context(user_id="u_gym_1", user_role="customer")


def serve(desk: Desk, db: Any) -> Any:
    """The graph a newcomer builds: the pack's scenario, the model from the settings."""
    return build_graph(
        checkpointer=InMemorySaver(),
        scenarios=[desk_pack(desk).scenario],
        database_factory=lambda: db,
        executor_factory=fast_executor,
    )


def turn(app: Any, text: str, thread: str) -> tuple[str, bool]:
    """Send ``text`` (as the answer when a confirmation waits); the turn's words, and whether
    it ends at a confirmation."""
    config = {"configurable": {"thread_id": thread}}
    seen = {m.id for m in app.get_state(config).values.get("messages") or []}
    paused = bool(app.get_state(config).interrupts)
    payload: Any = Command(resume=text) if paused else {"messages": [("user", text)]}
    app.invoke(payload, config, context=MEMBER)
    state = app.get_state(config)
    said = [
        m.content
        for m in state.values.get("messages") or []
        if m.id not in seen
        and m.type == "ai"
        and isinstance(m.content, str)
        and m.content
        and not m.tool_calls
    ]
    question = [str(i.value.get("question", "")) for i in state.interrupts]
    return "\n".join([*said, *question]), bool(state.interrupts)


def run(app: Any, desk: Desk, conversation: Conversation) -> list[str]:
    """Talk the conversation through; every way it fell short (empty: it passed)."""
    problems: list[str] = []
    for n, step in enumerate(conversation.turns, 1):
        before = (list(desk.bookings), list(desk.freezes))
        reply, asking = turn(app, step.say, conversation.name)
        where = f"turn {n} ({step.say!r} → {reply!r})"
        missing = [e for e in step.expect if e.casefold() not in reply.casefold()]
        if missing:
            problems.append(f"{where}: does not say {missing}")
        if step.confirm is not None and asking != step.confirm:
            problems.append(f"{where}: {'no' if step.confirm else 'a'} confirmation question")
        if not language_ok(reply, conversation.language):
            problems.append(f"{where}: not in {conversation.language}")
        if not asking and leaks(reply):
            problems.append(f"{where}: shows {leaks(reply)}")
        if asking and (desk.bookings, desk.freezes) != before:
            problems.append(f"{where}: something was written before the yes")
    if not conversation.done(desk):
        problems.append(f"backend at the end: bookings {desk.bookings}, freezes {desk.freezes}")
    return problems


__all__ = [
    "CONVERSATIONS",
    "POLICY",
    "TODAY",
    "Conversation",
    "Desk",
    "Turn",
    "desk_pack",
    "language_ok",
    "leaks",
    "run",
    "scripted_answer",
    "serve",
    "turn",
]
