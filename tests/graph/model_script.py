"""A scripted model over the real Chat Completions wire format, by request kind.

Understanding and critique requests carry a ``json_schema`` response format named
``commands`` / ``critique``, a planning request carries ``tools``, a reply request neither.
"""

from __future__ import annotations

import dataclasses
import json
from collections import defaultdict
from typing import Any

from tests.fakes.openai_server import Scripted, label_logprobs

CONFIG = {"configurable": {"thread_id": "t1"}}


def kind_of(body: dict[str, Any]) -> str:
    if body.get("tools"):
        return "plan"
    schema = (body.get("response_format") or {}).get("json_schema") or {}
    return schema.get("name") or "reply"


class Script:
    """Scripted answers per request kind, and every request seen per kind."""

    def __init__(self, server: Any) -> None:
        self.queues: dict[str, list[Scripted]] = defaultdict(list)
        self.defaults: dict[str, Scripted] = {}
        self.seen: dict[str, list[dict[str, Any]]] = defaultdict(list)
        server.match(self)

    def __call__(self, body: dict[str, Any]) -> Scripted | None:
        kind = kind_of(body)
        self.seen[kind].append(body)
        if self.queues[kind]:
            return self.queues[kind].pop(0)
        return self.defaults.get(kind, Scripted(status=500, content=f"no answer for {kind}"))

    def add(self, kind: str, *answers: Scripted) -> Script:
        self.queues[kind].extend(answers)
        return self


def command(kind: str, task: str = "none", **slots: str) -> dict[str, Any]:
    return {
        "kind": kind,
        "task": task,
        "slots": [{"name": k, "value": v} for k, v in slots.items()],
    }


def commands(*items: dict[str, Any], logprob: float = -0.05) -> Scripted:
    """A command list as the model answers it, the first task's label at ``logprob``."""
    content = json.dumps({"commands": list(items)}, ensure_ascii=False)
    label = next((i["task"] for i in items if i["task"] != "none"), None)
    tokens = label_logprobs(content, label, logprob) if label else None
    return Scripted(content=content, logprobs=tokens)


def intent(name: str, logprob: float = -0.05, **slots: str) -> Scripted:
    """The model starts one task (or can't tell, for ``UNKNOWN``)."""
    if name == "UNKNOWN":
        return commands(command("cannot_tell"))
    return commands(command("start", name, **slots), logprob=logprob)


def content_call(name: str, **arguments: Any) -> Scripted:
    return Scripted(content=json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False))


def recording(registry, name, handled):
    """Wrap one card's handler so that every call that reaches it is recorded."""
    card = registry.get(name)

    def handler(args, ctx):
        handled.append((name, args.model_dump() if hasattr(args, "model_dump") else dict(args)))
        return card.handler(args, ctx)

    registry.register(dataclasses.replace(card, handler=handler), replace_existing=True)
