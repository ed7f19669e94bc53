"""A primed user: τ²'s own simulator, whose first message says why the user calls.

With a small model, τ²'s simulator answers the orchestrator's greeting as an agent would
("Hello! How can I assist you today?") on every test task (``probe.py``), and no agent can
get to the task. The primed user says the first message itself, from the task's own
instructions in the first person ("Hi! I want to exchange the water bottle and the desk
lamp. I am mei_kovacs_8020 in zipcode 28236."); every later message is τ²'s simulator's,
unchanged, with that first message in its history. It is **not** τ²'s protocol: its figures
are reported apart, as a diagnostic of the agents once a conversation gets going.
"""

from __future__ import annotations

import re
from typing import Any

from tau2.data_model.message import UserMessage
from tau2.user.user_simulator import UserSimulator

USER_NAME = "primed_user"
_SECTION = re.compile(r"\t(Reason for call|Known info):\n((?:\t\t.*\n?|\n)+)")
_PERSON = (
    (r"\bYou are\b", "I am"),
    (r"\byou are\b", "I am"),
    (r"\bYou're\b", "I'm"),
    (r"\byou're\b", "I'm"),
    (r"\bYou've\b", "I've"),
    (r"\byou've\b", "I've"),
    (r"\bYour\b", "My"),
    (r"\byour\b", "my"),
    (r"\bYou\b", "I"),
    (r"\byou\b", "I"),
)


def opening(instructions: str) -> str:
    """The first message: the reason's first sentence and what the user knows, as 'I'."""
    sections = {name: " ".join(body.split()) for name, body in _SECTION.findall(instructions)}
    reason = sections.get("Reason for call", "")
    first = re.match(r"(.+?[.!?])(?:\s|$)", reason)
    parts = [first.group(1) if first else reason, sections.get("Known info", "")]
    text = " ".join(part for part in parts if part)
    for pattern, replacement in _PERSON:
        text = re.sub(pattern, replacement, text)
    return f"Hi! {text}".strip()


class PrimedUser(UserSimulator):
    """τ²'s ``UserSimulator`` with its first message taken from the task's instructions."""

    def _generate_next_message(self, message: Any, state: Any) -> tuple[UserMessage, Any]:
        if any(isinstance(m, UserMessage) for m in state.messages):
            return super()._generate_next_message(message, state)
        state.messages.append(message)
        said = UserMessage(role="user", content=opening(self.instructions))
        state.messages.append(said)
        return said, state


__all__ = ["USER_NAME", "PrimedUser", "opening"]
