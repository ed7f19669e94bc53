"""Confirmation of high-risk actions: what to ask, and how to read the answer.

The tool node asks once per node, with LangGraph's ``interrupt()``, before any side effect.
The answer may be structured (``{"decision": "approve" | "reject" | "edit", ...}``, from an
API client or Studio) or the user's own words ("确认退款", "yes", "算了").
"""

from __future__ import annotations

import re
from typing import Any

from nodes.prompts import GENERIC
from tools.executor import Decision, PreparedCall

_APPROVE = re.compile(
    r"^\s*(确认|确定|同意|是的?|好的?|可以|没问题|对|yes|y|ok|okay|sure|approve|confirm)",
    re.IGNORECASE,
)
_REJECT = re.compile(
    r"(不要|不用|不确认|取消|算了|别|否|拒绝|\bno\b|\bnope\b|cancel|reject|don'?t|stop)",
    re.IGNORECASE,
)


def render(key: str, language: str, **values: Any) -> str:
    """Fill one of the generic confirmation sentences."""
    text = GENERIC[key]
    return (text.get(language) or text["zh"]).format(**values)


def confirmation_request(
    waiting: list[PreparedCall], language: str, *, display: dict[str, str] | None = None
) -> dict[str, Any]:
    """Build the interrupt payload: the actions, masked, and the question to ask.

    ``display`` maps stored values (vault tokens) to what a person should see instead.
    """
    display = display or {}
    actions = []
    for call in waiting:
        action = call.action()
        action["arguments"] = {
            key: display.get(str(value), value) for key, value in action["arguments"].items()
        }
        actions.append(action)
    lines = [
        render(
            "confirm_action",
            language,
            tool=action["tool"],
            arguments=", ".join(f"{k}={v}" for k, v in action["arguments"].items()),
        )
        for action in actions
    ]
    return {
        "type": "confirm_action",
        "question": "\n".join([*lines, render("confirm_question", language)]),
        "actions": actions,
        "resume_with": {"decision": "approve | reject | edit", "parameters": "(for edit)"},
    }


def read_decision(answer: Any) -> Decision:
    """Turn a resume value into a decision. Anything unclear is a rejection: nothing runs."""
    if isinstance(answer, Decision):
        return answer
    if isinstance(answer, dict):
        kind = str(answer.get("decision", "")).lower()
        if kind == "approve":
            return Decision("approve")
        if kind == "edit" and isinstance(answer.get("parameters"), dict):
            return Decision("edit", dict(answer["parameters"]))
        return Decision("reject")
    if isinstance(answer, str):
        if _REJECT.search(answer):
            return Decision("reject")
        if _APPROVE.search(answer):
            return Decision("approve")
    return Decision("reject")
