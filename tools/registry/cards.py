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
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any, Literal

from langchain_core.tools import StructuredTool
from pydantic import BaseModel

from config.limits import JsonValue
from security.permissions import Permissions
from tools.registry.context import ToolContext
from tools.registry.lifecycle import SERVING, Effective, ToolLifecycle, version_key
from tools.registry.types import Arguments
from tools.registry.views import EngineeringView, ModelToolView, Unavailable

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


Handler = Callable[[Any, ToolContext], Any]
OwnerLookup = Callable[[Any, ToolContext], str | None]
StatusLookup = Callable[[Any, ToolContext], object | None]
"""Returns what the handler would have answered (its own result type), or ``None``."""


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
    side_effect: bool | None = None
    """Changes something outside (a write, a message sent); ``None``: inferred (``writes``)."""
    cache_ttl_s: float | None = None
    """Cache successful results this long; read-only idempotent tools only."""
    version: str = "1"
    """Card version, bumped when the contract changes."""
    deprecated: bool = False
    """Still callable, but not offered to the model."""
    summarize: Callable[[Any], str] | None = None
    """One-line summary of a result (the handler's own result type) for the model and the
    audit log."""
    result_model: type[BaseModel] | None = None
    """The shape a successful result must have; the executor turns a mismatch (a backend
    renaming a field) into a ``schema_drift`` failure instead of letting it reach a reply."""
    precondition: Callable[[Any, ToolContext], None] | None = None
    """Checks the backend before the call is put to the user (and before any call that needs
    no yes): ``precondition(args, ctx)`` raises a ``ToolError`` (a ``UserFixableError`` says
    why not) when the call would be refused, so nothing that will fail is confirmed first."""
    evidence_fields: tuple[str, ...] = ()
    """Arguments that prove a prerequisite but do not name the action (a risk ticket).

    They are left out of the request id and fingerprint: a ticket re-issued on every
    assessment must not make "move 500 to ACC-2001 in this task" a new action.
    """

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

    @property
    def writes(self) -> bool:
        """Whether a call changes something: as declared, else not idempotent or high risk."""
        if self.side_effect is not None:
            return self.side_effect
        return not self.idempotent or self.risk == "high"

    def json_schema(self) -> dict[str, JsonValue]:
        """Return the JSON Schema of the parameters, closed to unknown fields."""
        schema = self.parameters.model_json_schema()
        schema.setdefault("additionalProperties", False)
        schema.pop("title", None)
        return schema

    def model_view(self) -> ModelToolView:
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

    def engineering_view(self) -> EngineeringView:
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
            "checks_result": self.result_model is not None,
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


_MAX_OPEN_TASKS = 10_000
"""Tasks whose pins this process remembers; beyond, it forgets (their pins age out)."""


@dataclass
class ToolRegistry:
    """Cards by name and version; their run-time state lives in a ``ToolLifecycle``.

    The cards are code; enable, disable, deprecate, pins and retirement are state, kept in
    ``lifecycle`` (in memory by default, SQLite or Redis when shared by workers). Only
    serving tools (active, or deprecated before their sunset) are returned by ``get``; only
    active ones are offered to a model by ``select``, ``model_view`` and ``langchain_tools``.
    Several versions of one tool may be registered: new calls get the newest serving one,
    while a task (or intent) pinned to an older version keeps it until that is retired.
    """

    permissions: Permissions = field(default_factory=Permissions)
    """Which role may use which permission; the executor authorizes against it."""
    lifecycle: ToolLifecycle = field(default_factory=ToolLifecycle)
    """Enabled/disabled/deprecated state and version pins, shared by workers when stored."""
    _cards: dict[str, dict[str, ToolCard]] = field(default_factory=dict)
    _removed: dict[str, str | None] = field(default_factory=dict)
    _lock: threading.RLock = field(default_factory=threading.RLock)
    _task_pins: dict[str, set[str]] = field(default_factory=dict)
    """The tools this process pinned or read a pin of, per open task: what ``release`` drops."""

    def register(self, card: ToolCard, *, replace_existing: bool = False) -> None:
        """Add a card; a new version of a known tool is added beside the old one.

        The same name and version twice is refused unless ``replace_existing``.
        """
        with self._lock:
            versions = self._cards.setdefault(card.name, {})
            if card.version in versions and not replace_existing:
                msg = f"tool {card.name!r} version {card.version} is already registered"
                raise InvalidToolCardError(msg)
            versions[card.version] = card
            self._removed.pop(card.name, None)

    def remove(self, name: str, *, replaced_by: str | None = None) -> None:
        """Take a tool out; later calls get ``not_found`` naming ``replaced_by`` or the closest."""
        with self._lock:
            if self._cards.pop(name, None) is not None:
                self._removed[name] = replaced_by

    def enable(self, name: str, *, version: str | None = None, actor: str = "system") -> None:
        """Offer and run a disabled or deprecated tool (or one version) again."""
        self._require(name, version)
        self.lifecycle.set_status(name, "active", version=version, actor=actor)

    def disable(
        self, name: str, *, version: str | None = None, actor: str = "system", reason: str = ""
    ) -> None:
        """Stop offering and running a tool (or one version), keeping its card."""
        self._require(name, version)
        self.lifecycle.set_status(name, "disabled", version=version, actor=actor, reason=reason)

    def deprecate(
        self,
        name: str,
        *,
        version: str | None = None,
        sunset: date | None = None,
        actor: str = "system",
        reason: str = "",
    ) -> None:
        """Keep a tool callable but stop offering it to the model; refuse it from ``sunset``."""
        self._require(name, version)
        self.lifecycle.set_status(
            name, "deprecated", version=version, sunset=sunset, actor=actor, reason=reason
        )

    def retire(
        self, name: str, version: str, *, actor: str = "system", force: bool = False
    ) -> None:
        """Retire one version once no task or intent is pinned to it (see ``ToolLifecycle``)."""
        self._require(name, version)
        self.lifecycle.retire(name, version, actor=actor, force=force)

    def registered(self) -> list[str]:
        """Return the name of every registered tool, serving or not (for operators)."""
        return sorted(self._cards)

    def versions(self, name: str) -> list[str]:
        """Return the registered versions of ``name``, oldest first."""
        return sorted(self._cards.get(name, {}), key=version_key)

    def status(self, name: str, version: str | None = None) -> Effective:
        """Return the status that applies to ``name`` (or one version) now."""
        return self.lifecycle.effective(name, version)

    def get(
        self,
        name: str,
        *,
        version: str | None = None,
        task_id: str | None = None,
        intent: str | None = None,
    ) -> ToolCard | None:
        """Return the card that serves a call of ``name`` now, or ``None``.

        ``version`` asks for one version; otherwise a task's pin, then an intent's pin,
        then the newest serving version. Giving ``task_id`` pins the task to the version it
        gets, so a version registered mid-task does not change the task's contract.
        """
        versions = self._cards.get(name)
        if not versions:
            return None
        if version is not None:
            return self._serving(name, versions.get(version))
        card = None
        if intent:
            pinned = self.lifecycle.pinned(f"intent:{intent}", name)
            card = self._serving(name, versions.get(pinned)) if pinned is not None else None
        card = card or self._default(name, versions)
        if card is None or not task_id:
            return card
        # the task's pin, or the one made now: one round trip either way
        scope = f"task:{task_id}"
        with self._lock:
            if len(self._task_pins) > _MAX_OPEN_TASKS:  # tasks that never ended here
                self._task_pins.clear()
            self._task_pins.setdefault(task_id, set()).add(name)
        pinned = self.lifecycle.claim_pin(scope, name, card.version)
        if pinned == card.version:
            return card
        kept = self._serving(name, versions.get(pinned))
        if kept is not None:
            return kept
        self.lifecycle.pin(scope, name, card.version)  # the pinned version stopped serving
        return card

    def release(self, task_id: str) -> None:
        """Drop a finished task's pins: those this process made or used, in one round trip.

        A pin made by another worker for a tool this one never used ages out (``live_pins``
        ignores stale pins).
        """
        with self._lock:
            names = self._task_pins.pop(task_id, set())
        if names:
            self.lifecycle.unpin_names(f"task:{task_id}", sorted(names))

    def unavailable(self, name: str) -> Unavailable | None:
        """Explain why a registered tool does not serve (for a clear refusal), else ``None``."""
        versions = self._cards.get(name)
        if not versions or self.get(name) is not None:
            return None
        newest = max(versions, key=version_key)
        state = self.lifecycle.effective(name, newest)
        return {
            "tool": name,
            "state": state["status"],
            "reason": state["reason"],
            "sunset": state["sunset"],
            "message": f"tool {name!r} is {state['status']}"
            + (f" ({state['reason']})" if state["reason"] else "")
            + "; it cannot be used now.",
        }

    def names(self) -> list[str]:
        """Return the names of all serving tools."""
        return sorted(name for name in list(self._cards) if self.get(name) is not None)

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
        intent: str | None = None,
        limit: int = MAX_TOOLS_PER_TURN,
    ) -> list[ToolCard]:
        """Choose this turn's tools: active, allowed for ``role``, relevant, at most 8.

        ``names`` narrows the choice to the tools a task uses (its scenario says which); a
        list or tuple keeps its order (most relevant first), other collections are sorted.
        ``intent`` applies an intent's version pin. ``limit`` can only lower the cap.
        """
        if names is None:
            candidates: Sequence[str] = sorted(self._cards)
        elif isinstance(names, list | tuple):
            candidates = names
        else:
            candidates = sorted(names)
        chosen = []
        for name in candidates:
            card = self.get(name, intent=intent)
            if card is None or not self._offered(card):
                continue
            if not self.permissions.allows(role, card.permission):
                continue
            if domain is not None and card.domain != domain:
                continue
            chosen.append(card)
        return chosen[: min(limit, MAX_TOOLS_PER_TURN)]

    def active_cards(self) -> list[ToolCard]:
        """Return the card of every tool a model may be offered, in registration order."""
        cards = []
        for name in list(self._cards):
            card = self.get(name)
            if card is not None and self._offered(card):
                cards.append(card)
        return cards

    def model_view(self, cards: list[ToolCard] | None = None) -> list[ModelToolView]:
        """Render cards (all active ones by default) for ``bind_tools``; others are dropped."""
        chosen = self.active_cards() if cards is None else [c for c in cards if self._live(c)]
        return [card.model_view() for card in chosen]

    def langchain_tools(
        self,
        run: Callable[[str, Arguments], Mapping[str, object]],  # the executor's envelope
        cards: list[ToolCard] | None = None,
    ) -> list[StructuredTool]:
        """Render cards as LangChain tools whose calls go through ``run(name, arguments)``.

        ``run`` is the executor bound to a trusted context, so a tool invoked by LangChain
        still passes every check; the tool itself never sees who the caller is. Inactive
        cards are dropped, as in ``model_view``.
        """
        chosen = self.active_cards() if cards is None else [c for c in cards if self._live(c)]
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

    # ---- internals ----------------------------------------------------------------------

    def _serving(self, name: str, card: ToolCard | None) -> ToolCard | None:
        if card is None:
            return None
        state = self.lifecycle.effective(name, card.version)["status"]
        if state not in SERVING:
            return None
        if state == "deprecated" and not card.deprecated:
            return replace(card, deprecated=True)
        return card

    def _default(self, name: str, versions: dict[str, ToolCard]) -> ToolCard | None:
        fallback = None
        for version in sorted(versions, key=version_key, reverse=True):
            card = self._serving(name, versions[version])
            if card is None:
                continue
            if not card.deprecated:
                return card
            fallback = fallback or card
        return fallback

    def _offered(self, card: ToolCard) -> bool:
        return not card.deprecated

    def _live(self, card: ToolCard) -> bool:
        served = self.get(card.name, version=card.version)
        return served is not None and not served.deprecated

    def _require(self, name: str, version: str | None = None) -> None:
        versions = self._cards.get(name)
        if not versions:
            msg = f"no tool named {name!r} is registered"
            raise KeyError(msg)
        if version is not None and version not in versions:
            msg = f"tool {name!r} has no version {version!r} (has {', '.join(versions)})"
            raise KeyError(msg)
