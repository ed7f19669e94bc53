"""The tool registry: one card per tool, with a model view and an engineering view.

The model view (OpenAI ``tools`` format, accepted by ``bind_tools``) carries only what helps
the model choose and fill a call: name, description with when to use and when not, and the
JSON Schema of the parameters. Everything else on the card (handler, permission, risk,
idempotency, limits, ownership lookup) stays server-side and never reaches a prompt.
"""

from __future__ import annotations

import difflib
import json
import re
import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any, Literal

from langchain_core.tools import StructuredTool
from pydantic import BaseModel

from tools.db import Database
from tools.guards import TaskHistory
from tools.permissions import Permissions
from tools.settings import Settings, get_settings

VAGUE_VERBS = frozenset({"call", "do", "handle", "process", "invoke", "use", "make", "run"})
VAGUE_OBJECTS = frozenset(
    {
        "data",
        "info",
        "information",
        "api",
        "it",
        "thing",
        "things",
        "stuff",
        "result",
        "results",
        "something",
        "tool",
        "function",
        "request",
        "action",
    }
)
_NAME = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$")
MAX_TOOLS_PER_TURN = 8


class InvalidToolCardError(ValueError):
    """A card that would mislead the model or the executor is refused at registration."""


@dataclass(frozen=True, kw_only=True)
class ToolContext:
    """Runtime-only arguments a handler gets from the executor, never from the model."""

    user_id: str
    """The trusted caller, from ``Context``."""
    user_role: str
    """The caller's role, from ``Context``."""
    session_id: str = ""
    """The thread the call belongs to."""
    task_id: str = ""
    """The task the call belongs to."""
    resources: Any = None
    """Backends the handler needs (the business database), injected by the graph."""
    history: TaskHistory = field(default_factory=TaskHistory)
    """What the task has done so far, for prerequisites and guards."""
    settings: Settings = field(default_factory=get_settings)
    """Configuration (backend URLs, a fixed "today"), injected rather than read from env."""

    def today(self) -> date:
        """Return the business date: the configured one in demos and tests, else the real one."""
        return self.settings.today or date.today()

    def database(self) -> Database:
        """Return the business database the graph injected; its absence is a wiring bug."""
        if not isinstance(self.resources, Database):
            msg = "this tool needs the business Database in ToolContext.resources"
            raise TypeError(msg)
        return self.resources


Handler = Callable[[Any, ToolContext], Any]
OwnerLookup = Callable[[Any, ToolContext], str | None]
StatusLookup = Callable[[Any, ToolContext], dict[str, Any] | None]


@dataclass(frozen=True, kw_only=True)
class ToolCard:
    """Everything known about one tool. Only ``model_view`` is shown to a model."""

    name: str
    """verb_object, e.g. ``query_order_status``."""
    description: str
    """What the tool does, written for the model."""
    when_to_use: str
    """The situations that call for it."""
    when_not_to_use: str
    """The situations that look similar but must not use it."""
    parameters: type[BaseModel]
    """Pydantic model of the arguments; the JSON Schema is derived from it."""
    returns: str
    """What a successful result holds."""
    handler: Handler
    """``handler(args, ctx)``; sync or async."""
    idempotent: bool
    """Safe to run twice with the same arguments; only these are retried."""
    permission: str
    """``domain:action`` the caller's role must hold."""
    domain: str
    """Business domain, for tool selection and ownership rules."""
    risk: Literal["low", "high"] = "low"
    """High-risk tools need the user's confirmation before they run."""
    owner_of: OwnerLookup | None = None
    """Returns the owner of the resource the arguments name (``None``: no such resource)."""
    requires: tuple[str, ...] = ()
    """Tools that must have succeeded earlier in the task before this one may run."""
    status_lookup: StatusLookup | None = None
    """Finds out whether a side effect happened, after a timeout left it unknown."""
    timeout_s: float = 5.0
    """Deadline for one attempt."""
    rate_limit: str | None = None
    """Per-user limit such as ``10/minute``."""
    cache_ttl_s: float | None = None
    """Cache successful results this long; read-only idempotent tools only."""
    version: str = "1"
    """Card version, bumped when the contract changes."""
    deprecated: bool = False
    """Still callable, but not offered to the model."""
    summarize: Callable[[dict[str, Any]], str] | None = None
    """One-line summary of a result for the model and the audit log."""

    def __post_init__(self) -> None:
        """Refuse vague names and unsafe combinations, as the design's naming rule asks."""
        validate_tool_name(self.name)
        for attr in ("description", "when_to_use", "when_not_to_use", "returns"):
            if not getattr(self, attr).strip():
                msg = f"tool {self.name!r}: {attr} must not be empty"
                raise InvalidToolCardError(msg)
        if ":" not in self.permission:
            msg = f"tool {self.name!r}: permission must look like 'domain:action'"
            raise InvalidToolCardError(msg)
        if self.cache_ttl_s and not self.idempotent:
            msg = f"tool {self.name!r}: only idempotent tools may be cached"
            raise InvalidToolCardError(msg)

    def json_schema(self) -> dict[str, Any]:
        """Return the JSON Schema of the parameters, closed to unknown fields."""
        schema = self.parameters.model_json_schema()
        schema.setdefault("additionalProperties", False)
        schema.pop("title", None)
        return schema

    def model_view(self) -> dict[str, Any]:
        """Render the card for a model, in OpenAI ``tools`` format."""
        description = (
            f"{self.description}\nUse when: {self.when_to_use}\n"
            f"Do not use when: {self.when_not_to_use}\nReturns: {self.returns}"
        )
        if self.requires:
            description += f"\nCall only after: {', '.join(self.requires)} succeeded."
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": description,
                "parameters": self.json_schema(),
            },
        }

    def engineering_view(self) -> dict[str, Any]:
        """Render the server-side fields, for operators and audit, never for a prompt."""
        return {
            "name": self.name,
            "version": self.version,
            "domain": self.domain,
            "permission": self.permission,
            "risk": self.risk,
            "idempotent": self.idempotent,
            "timeout_s": self.timeout_s,
            "rate_limit": self.rate_limit,
            "cache_ttl_s": self.cache_ttl_s,
            "deprecated": self.deprecated,
            "checks_owner": self.owner_of is not None,
            "requires": list(self.requires),
            "has_status_lookup": self.status_lookup is not None,
        }


def validate_tool_name(name: str) -> None:
    """Raise ``InvalidToolCardError`` unless ``name`` is a specific verb_object."""
    if not _NAME.fullmatch(name):
        msg = f"tool name {name!r} must be verb_object in snake_case, e.g. query_order_status"
        raise InvalidToolCardError(msg)
    verb, *rest = name.split("_")
    if verb in VAGUE_VERBS or (len(rest) == 1 and rest[0] in VAGUE_OBJECTS):
        msg = f"tool name {name!r} is too vague: say what it acts on, e.g. query_order_status"
        raise InvalidToolCardError(msg)


@dataclass
class _Entry:
    card: ToolCard
    enabled: bool = True


@dataclass
class ToolRegistry:
    """Cards by name, changeable at run time (register, enable, disable, deprecate, remove)."""

    permissions: Permissions = field(default_factory=Permissions)
    """Which role may use which permission; the executor authorizes against it."""
    _entries: dict[str, _Entry] = field(default_factory=dict)
    _removed: dict[str, str | None] = field(default_factory=dict)
    _lock: threading.RLock = field(default_factory=threading.RLock)

    def register(self, card: ToolCard, *, replace_existing: bool = False) -> None:
        """Add a card; a name already taken is refused unless ``replace_existing``."""
        with self._lock:
            if card.name in self._entries and not replace_existing:
                msg = f"tool {card.name!r} is already registered"
                raise InvalidToolCardError(msg)
            self._entries[card.name] = _Entry(card)
            self._removed.pop(card.name, None)

    def remove(self, name: str, *, replaced_by: str | None = None) -> None:
        """Take a tool out; later calls get ``not_found`` naming ``replaced_by`` or the closest."""
        with self._lock:
            if self._entries.pop(name, None) is not None:
                self._removed[name] = replaced_by

    def enable(self, name: str) -> None:
        """Offer and run a disabled tool again."""
        self._require(name).enabled = True

    def disable(self, name: str) -> None:
        """Stop offering and running a tool, keeping its card."""
        self._require(name).enabled = False

    def deprecate(self, name: str) -> None:
        """Keep a tool callable but stop offering it to the model."""
        entry = self._require(name)
        entry.card = replace(entry.card, deprecated=True)

    def get(self, name: str) -> ToolCard | None:
        """Return the card of an enabled tool, or ``None``."""
        entry = self._entries.get(name)
        return entry.card if entry is not None and entry.enabled else None

    def names(self) -> list[str]:
        """Return the names of all enabled tools."""
        return sorted(name for name, entry in self._entries.items() if entry.enabled)

    def closest(self, name: str) -> str | None:
        """Suggest the declared replacement of a removed tool, else the closest enabled name."""
        replacement = self._removed.get(name)
        if replacement is not None and self.get(replacement) is not None:
            return replacement
        matches = difflib.get_close_matches(name, self.names(), n=1, cutoff=0.4)
        return matches[0] if matches else None

    def was_removed(self, name: str) -> bool:
        """Tell whether ``name`` was registered once and removed."""
        return name in self._removed

    def select(
        self,
        role: str,
        *,
        names: Collection[str] | None = None,
        domain: str | None = None,
        limit: int = MAX_TOOLS_PER_TURN,
    ) -> list[ToolCard]:
        """Choose this turn's tools: allowed for ``role``, relevant, not deprecated, ≤ limit.

        ``names`` narrows the choice to the tools a task uses (its scenario says which).
        """
        chosen = []
        for name in self.names():
            card = self._entries[name].card
            if card.deprecated or not self.permissions.allows(role, card.permission):
                continue
            if names is not None and name not in names:
                continue
            if domain is not None and card.domain != domain:
                continue
            chosen.append(card)
        return chosen[:limit]

    def model_view(self, cards: list[ToolCard] | None = None) -> list[dict[str, Any]]:
        """Render cards (all enabled, non-deprecated ones by default) for ``bind_tools``."""
        if cards is None:
            cards = [
                entry.card
                for entry in self._entries.values()
                if entry.enabled and not entry.card.deprecated
            ]
        return [card.model_view() for card in cards]

    def langchain_tools(
        self,
        run: Callable[[str, dict[str, Any]], dict[str, Any]],
        cards: list[ToolCard] | None = None,
    ) -> list[StructuredTool]:
        """Render cards as LangChain tools whose calls go through ``run(name, arguments)``.

        ``run`` is the executor bound to a trusted context, so a tool invoked by LangChain
        still passes every check; the tool itself never sees who the caller is.
        """
        chosen = (
            cards
            if cards is not None
            else [
                entry.card
                for entry in self._entries.values()
                if entry.enabled and not entry.card.deprecated
            ]
        )
        tools = []
        for card in chosen:
            view = card.model_view()["function"]

            def call(_name: str = card.name, **arguments: Any) -> str:
                return json.dumps(run(_name, arguments), ensure_ascii=False)

            tools.append(
                StructuredTool.from_function(
                    func=call,
                    name=card.name,
                    description=view["description"],
                    args_schema=card.parameters,
                )
            )
        return tools

    def _require(self, name: str) -> _Entry:
        entry = self._entries.get(name)
        if entry is None:
            msg = f"no tool named {name!r} is registered"
            raise KeyError(msg)
        return entry
