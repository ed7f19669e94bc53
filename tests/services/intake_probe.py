"""A conversation with an ID number and PINs, and a search for them in what a server stored.

Shared by the served tests (``langgraph dev``, Aegra): a flight booked with a fresh valid ID
number, a transfer made with the right PIN, and one refused with a fresh wrong PIN. The fresh
values appear nowhere else, so finding one in a server's files or tables is this run's leak.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from typing import Any

from security.vault import id_card_problem

PIN = "123456"
"""ACC-1001's payment PIN in the seed data."""
BOOKED = "FL-2024062"
MOVED = "已向李四（ACC-2001）转账 500.00 元"


def fresh_id_number(rng: random.Random) -> str:
    """Return a valid 18-digit ID number no other test uses (random sequence digits)."""
    stem = f"110101{rng.randint(1950, 2005)}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}"
    stem += f"{rng.randint(0, 999):03d}"
    for check in "0123456789X":
        if id_card_problem(stem + check) is None:
            return stem + check
    raise AssertionError("unreachable: one check character always fits")


@dataclass
class Secrets:
    """The values the conversation typed."""

    id_number: str
    wrong_pin: str

    @classmethod
    def fresh(cls) -> Secrets:
        rng = random.Random()  # noqa: S311 - uniqueness, not secrecy
        wrong = f"{rng.randint(100000, 999999)}"
        while wrong == PIN:
            wrong = f"{rng.randint(100000, 999999)}"
        return cls(fresh_id_number(rng), wrong)

    def found_in_text(self, text: str) -> list[str]:
        """Return which secrets ``text`` holds (the right PIN only next to its keyword)."""
        found = [s for s in (self.id_number, self.id_number.lower()) if s in text]
        for pin in (PIN, self.wrong_pin):
            if re.search(rf"密码\s*{pin}(?!\d)", text):
                found.append(pin)
        return found

    def found_in_bytes(self, data: bytes) -> list[str]:
        """Return which fresh secrets raw storage bytes hold, as text or as hex (bytea dumps).

        Only this run's fresh values: storage shared with earlier runs may hold the seed PIN
        from a run without intake. The wrong PIN is looked for after its keyword (six random
        digits alone could be part of anything).
        """
        found = []
        for value in (self.id_number, f"密码 {self.wrong_pin}", f"密码{self.wrong_pin}"):
            raw = value.encode()
            if raw in data or raw.hex().encode() in data:
                found.append(value)
        return found


def ask(text: str) -> dict[str, Any]:
    """An input message as agent-chat-ui sends it: content blocks."""
    return {"messages": [{"type": "human", "content": [{"type": "text", "text": text}]}]}


def say(text: str) -> dict[str, Any]:
    """An input message as a plain SDK caller sends it."""
    return {"messages": [{"role": "user", "content": text}]}


def reply(out: dict[str, Any]) -> str:
    """The last AI message of a ``runs.wait`` result."""
    messages = [m for m in out.get("messages") or [] if m.get("type") == "ai"]
    return str(messages[-1]["content"]) if messages else ""


def converse(first: Any, second: Any, secrets: Secrets) -> list[str]:
    """Book a flight and make two transfers, hopping between two clients; return thread ids."""
    booking = first.threads.create()["thread_id"]
    asked = first.runs.wait(
        booking,
        "agent",
        input=ask(f"帮我订一张2024-06-20从上海去北京的机票，乘客张三，身份证号{secrets.id_number}"),
    )
    assert asked.get("__interrupt__"), asked
    done = second.runs.wait(booking, "agent", command={"resume": "确认"})
    assert BOOKED in reply(done), reply(done)

    transfer = first.threads.create()["thread_id"]
    asked = second.runs.wait(transfer, "agent", input=say(f"帮我转500元给ACC-2001，密码{PIN}"))
    assert asked.get("__interrupt__"), asked
    done = first.runs.wait(transfer, "agent", command={"resume": "确认"})
    assert MOVED in reply(done), reply(done)
    refused = second.runs.wait(
        transfer, "agent", input=say(f"再转 100 元给 ACC-2001，密码 {secrets.wrong_pin}")
    )
    assert "支付密码不正确" in reply(refused), reply(refused)
    return [booking, transfer]


def served_record(client: Any, threads: list[str]) -> str:
    """Everything the server answers about ``threads``: state, history and runs, as JSON."""
    parts: list[Any] = []
    for thread in threads:
        parts.append(client.threads.get(thread))
        parts.append(client.threads.get_state(thread))
        parts.append(client.threads.get_history(thread, limit=100))
        parts.append(client.runs.list(thread, limit=100))
    return json.dumps(parts, ensure_ascii=False, default=str)
