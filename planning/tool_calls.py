"""Tool calls from model output, checked before anything runs.

Small local models often ignore the ``tools`` parameter and write the call as JSON in the
message ``content`` instead of ``tool_calls`` (measured with Qwen2.5-1.5B on llama-server: 0/22
native calls, 20/22 right tools in ``content``). ``calls_from_message`` takes native calls when
there are any and otherwise parses the content: fenced or bare JSON, one object or a list, with
``{"name", "arguments"}``, ``{"tool", "parameters"}`` or OpenAI's ``{"function": {...}}`` shape.

Every call is then checked (``check_calls``): unknown tool names and duplicate ids are refused,
never passed on; tool results must answer an id that was issued (``check_results``). The
arguments themselves are validated by the caller (the executor's pydantic models), and
``call_with_repair`` sends malformed arguments back to the model once, with the error.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from langchain_core.messages import HumanMessage

from tools.registry.types import Arguments
from tools.registry.views import ModelToolView


class ParsedCall(TypedDict):
    """One tool call, whatever shape the model wrote it in."""

    id: str
    name: str
    parameters: Arguments


@dataclass
class CallCheck:
    """The calls that may run, and why the others were refused."""

    accepted: list[ParsedCall] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    """One reason per refused call or unparseable fragment."""


_FENCE = re.compile(r"```(?:json|tool_call|tool|JSON)?\s*\n?(.*?)```", re.DOTALL)
_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
_NAME_KEYS = ("name", "tool", "tool_name", "function")
_ARG_KEYS = ("arguments", "parameters", "args", "input")


def _json_fragments(content: str) -> list[str]:
    """Fenced or tagged blocks when present; otherwise every balanced top-level JSON value."""
    blocks = _FENCE.findall(content) + _TAGGED.findall(content)
    if blocks:
        return [block.strip() for block in blocks if block.strip()]
    fragments: list[str] = []
    decoder = json.JSONDecoder()
    index = 0
    while index < len(content):
        if content[index] in "[{":
            try:
                _, end = decoder.raw_decode(content, index)
            except json.JSONDecodeError:
                index += 1
                continue
            fragments.append(content[index:end])
            index = end
        else:
            index += 1
    return fragments


def _normalize(item: Any) -> tuple[str, Any] | str:
    """Return (name, raw arguments) for one call object, or why it is not a call."""
    if not isinstance(item, dict):
        return f"not a call object: {str(item)[:60]}"
    if isinstance(item.get("function"), dict):  # OpenAI wire shape written as text
        item = {**item, **item["function"]}
    name = next((item[k] for k in _NAME_KEYS if isinstance(item.get(k), str)), None)
    if name is None:
        return f"no tool name in {json.dumps(item, ensure_ascii=False)[:80]}"
    arguments: Any = next((item[k] for k in _ARG_KEYS if k in item), {})
    return name, arguments


def _arguments(raw: Any) -> Arguments | str:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value: Any = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError as error:
            return f"arguments are not JSON: {error.msg}"
        return value if isinstance(value, dict) else "arguments are not an object"
    return "arguments are not an object"


def parse_content_calls(content: str) -> tuple[list[ParsedCall], list[str]]:
    """Parse tool calls written as JSON in ``content``; return (calls, problems).

    Ids are generated (``content_<n>``) since text calls have none; a text call that carries
    an ``id`` keeps it so that duplicates can be detected.
    """
    calls: list[ParsedCall] = []
    problems: list[str] = []
    for fragment in _json_fragments(content):
        try:
            value = json.loads(fragment)
        except json.JSONDecodeError as error:
            problems.append(f"unparseable JSON in content: {error.msg}")
            continue
        items = value if isinstance(value, list) else [value]
        if isinstance(value, dict) and isinstance(value.get("tool_calls"), list):
            items = value["tool_calls"]
        for item in items:
            normalized = _normalize(item)
            if isinstance(normalized, str):
                problems.append(normalized)
                continue
            name, raw = normalized
            arguments = _arguments(raw)
            if isinstance(arguments, str):
                problems.append(f"{name}: {arguments}")
                continue
            call_id = item.get("id") if isinstance(item.get("id"), str) else None
            calls.append(
                ParsedCall(
                    id=call_id or f"content_{len(calls)}_{uuid.uuid4().hex[:8]}",
                    name=name,
                    parameters=arguments,
                )
            )
    return calls, problems


def calls_from_message(message: Any) -> tuple[list[ParsedCall], list[str]]:
    """Return the calls of an ``AIMessage``: native ``tool_calls``, else JSON in ``content``.

    ``invalid_tool_calls`` (native calls whose arguments did not parse) are reported as
    problems so that they can go back to the model.
    """
    problems = [
        f"{bad.get('name') or '?'}: arguments are not JSON ({bad.get('error') or 'invalid'})"
        for bad in getattr(message, "invalid_tool_calls", None) or []
    ]
    native = getattr(message, "tool_calls", None) or []
    if native:
        calls = [
            ParsedCall(
                id=call.get("id") or f"call_{uuid.uuid4().hex[:8]}",
                name=call["name"],
                parameters=dict(call.get("args") or {}),
            )
            for call in native
        ]
        return calls, problems
    content = getattr(message, "content", message)
    if isinstance(content, list):  # content blocks
        content = "".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)
    calls, more = parse_content_calls(str(content or ""))
    return calls, problems + more


def check_calls(calls: Iterable[ParsedCall], known_tools: Collection[str]) -> CallCheck:
    """Refuse calls to unknown tools and calls whose id repeats an earlier one."""
    check = CallCheck()
    seen: set[str] = set()
    for call in calls:
        if call["name"] not in known_tools:
            check.refused.append(f"unknown tool {call['name']!r}")
        elif call["id"] in seen:
            check.refused.append(f"duplicate tool_call_id {call['id']!r}")
        else:
            seen.add(call["id"])
            check.accepted.append(call)
    return check


def check_results(
    result_ids: Sequence[str], issued_ids: Collection[str]
) -> tuple[list[str], list[str]]:
    """Split tool-result ids into (answering an issued call once, refused with a reason)."""
    ok: list[str] = []
    refused: list[str] = []
    for call_id in result_ids:
        if call_id not in issued_ids:
            refused.append(f"unknown tool_call_id {call_id!r}")
        elif call_id in ok:
            refused.append(f"duplicate tool_call_id {call_id!r}")
        else:
            ok.append(call_id)
    return ok, refused


Validator = Callable[[ParsedCall], "str | None"]
"""Returns why a call's arguments are invalid, or ``None`` (e.g. the executor's pydantic check)."""


@dataclass
class RepairOutcome:
    """What the model finally asked for, after at most one repair round."""

    calls: list[ParsedCall]
    refused: list[str]
    rounds: int
    """1 when the first answer was usable, 2 when it went back once."""
    messages: list[Any]
    """The conversation including the repair exchange (for the protocol)."""


def _evaluate(
    answer: Any, known_tools: Collection[str], validate: Validator
) -> tuple[list[ParsedCall], list[str], list[str]]:
    """Return (valid calls, refused outright, repairable errors) for one model answer."""
    calls, problems = calls_from_message(answer)
    check = check_calls(calls, known_tools)
    valid: list[ParsedCall] = []
    errors = list(problems)
    for call in check.accepted:
        error = validate(call)
        if error is None:
            valid.append(call)
        else:
            errors.append(f"{call['name']}: {error}")
    return valid, check.refused, errors


def call_with_repair(
    invoke: Callable[[list[Any]], Any],
    messages: list[Any],
    known_tools: Collection[str],
    validate: Validator,
) -> RepairOutcome:
    """Ask the model for tool calls; send malformed ones back once with the errors.

    ``invoke`` takes a list of LangChain messages and returns an ``AIMessage`` (a bound
    ``ChatOpenAI``). Unknown tools and duplicate ids are refused outright, not repaired:
    repairing a hallucinated tool name would invite another guess. Calls still invalid after
    the repair round are refused; a valid call repeated in the second answer runs once.
    """
    answer = invoke(list(messages))
    conversation = [*messages, answer]
    valid, refused, errors = _evaluate(answer, known_tools, validate)
    if not errors:
        return RepairOutcome(calls=valid, refused=refused, rounds=1, messages=conversation)
    conversation.append(
        HumanMessage(
            "Your tool call could not be used:\n"
            + "\n".join(f"- {e}" for e in errors)
            + "\nAnswer again with corrected JSON arguments, only for these calls."
        )
    )
    answer = invoke(conversation)
    conversation.append(answer)
    repaired, refused_again, still_bad = _evaluate(answer, known_tools, validate)
    seen = {(c["name"], json.dumps(c["parameters"], sort_keys=True)) for c in valid}
    for call in repaired:
        key = (call["name"], json.dumps(call["parameters"], sort_keys=True))
        if key not in seen:
            seen.add(key)
            valid.append(call)
    refused += refused_again + [f"{e} (after one repair)" for e in still_bad]
    return RepairOutcome(calls=valid, refused=refused, rounds=2, messages=conversation)


def model_view(cards: Iterable[Mapping[str, Any]]) -> list[ModelToolView]:
    """Turn ``{"name", "description", "parameters"}`` tool views into OpenAI ``tools`` entries."""
    return [
        {
            "type": "function",
            "function": {
                "name": card["name"],
                "description": card.get("description", ""),
                "parameters": card.get("parameters") or {"type": "object", "properties": {}},
            },
        }
        for card in cards
    ]


__all__ = [
    "CallCheck",
    "ParsedCall",
    "RepairOutcome",
    "call_with_repair",
    "calls_from_message",
    "check_calls",
    "check_results",
    "model_view",
    "parse_content_calls",
]
