"""The scenario contract: everything a capability brings, declared in one place.

A scenario folder exports ``SCENARIO``, a ``Scenario``: its tasks, tool cards, role grants,
example requests (what the recognizer learns each task from), slot extractor, wording and
result describers, and optionally sub-agents and seed data. The generic nodes read a
``ScenarioSet`` built from the scenarios a graph was given and never name an intent, slot or
tool themselves, so adding a tool touches one folder and a new scenario is one new folder.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from graphlib import TopologicalSorter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from contract.text_match import normalize
from language import read_yaml
from state import SlotValues
from tools.executor.envelope import CallRequest

if TYPE_CHECKING:
    import sqlite3

    from state import AgentState, ToolResult
    from tools.executor.failures import Outcome
    from tools.registry.cards import ToolCard
    from tools.registry.context import ToolContext

UNKNOWN = "UNKNOWN"
LANGUAGES = ("zh", "en")

Text = Mapping[str, str]
"""One sentence in each language: ``{"zh": ..., "en": ...}``."""
Wording = Mapping[str, Text]
"""Sentences by key. Conventions the generic nodes read:

- ``intent.<INTENT>``: how the task is named to the user ("查询订单状态");
- ``ask.<slot>``: the question when only that slot is missing (may use ``{task}``);
- ``slot.<slot>``: the slot's name in a list of missing details;
- ``invalid.<slot>`` / ``multiple.<slot>``: a value that is not usable (``{value}``,
  ``{reason}``) or several candidates (``{value}``);
- ``reason.<code>``: a reason code of an invalid value, said to the user.
Every other key is the scenario's own, used by its describers and agents.
"""

Examples = Mapping[str, Mapping[str, tuple[str, ...]]]
"""Intent → language → example requests, as users say them: what the recognizer is trained on
(``scenarios/<name>/examples.yaml``; a pack's come from its functions' docstrings)."""


@dataclass(frozen=True)
class SlotResult:
    """Slot values found in one message."""

    slots: SlotValues = field(default_factory=dict)
    """Valid values by slot name."""
    invalid: dict[str, str] = field(default_factory=dict)
    """Slot name → ``"<value>: <reason>"`` for a value the user gave that is not usable."""
    either: tuple[SlotValues, ...] = ()
    """Readings of a message that could answer more than one question ("100000": a PIN or an
    amount), the likelier first. Understanding takes the first that fills only slots still
    missing, else the first: an answer never overwrites what the user already said."""
    several: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    """A slot the message names more than one value for, each a request of its own ("北京和
    上海", two order numbers): understanding starts one task per value."""


@dataclass(frozen=True)
class Offer:
    """What the user's own records say about the slots still missing."""

    filled: SlotValues = field(default_factory=dict)
    """Slot → the one record the message named ("我点的黄焖鸡" → that order's id)."""
    offered: dict[str, str] = field(default_factory=dict)
    """Slot → a sentence naming the records it may be, which the question adds."""
    closing: str | None = None
    """A sentence that answers the request instead of asking: the user has nothing it could
    be about ("您目前没有待就诊的预约"). The task ends; asking which one would lead nowhere."""


HINT_CHARS = 500
"""How much of the message a suggester gets, to match it against the user's records."""


class Suggester(Protocol):
    """Looks up the user's own records for missing slots, through read-only tools."""

    def __call__(
        self,
        missing: Sequence[str],
        text: str,
        run: Callable[[CallRequest], ToolResult],
        speaker: Speaker,
    ) -> Offer:
        """Return what ``text`` names among the records, or what to offer.

        ``text`` is at most ``HINT_CHARS`` long; ``run`` is the executor: every check
        applies, identity from the trusted context.
        """
        ...


class SlotExtractor(Protocol):
    """Finds a task's slots in a message; never invents a value."""

    def __call__(self, text: str, intent: str, *, today: date) -> SlotResult:
        """Return the slots of ``intent`` present in ``text``."""
        ...


class Speaker(Protocol):
    """Wording in the user's language, as describers and agents need it."""

    @property
    def language(self) -> str:
        """``zh`` or ``en``."""
        ...

    def say(self, key: str, **values: Any) -> str:
        """Fill the sentence ``key`` (scenario wording first, then the generic prompts)."""
        ...

    def label(self, intent: str) -> str:
        """Name an intent for the user."""
        ...

    def failure(
        self, outcome: Outcome, result: Mapping[str, Any], *, task: str, known: Iterable[Any] = ()
    ) -> str:
        """Say what a failed call means: the one generic sentence of its class."""
        ...


class Describer(Protocol):
    """Says what one of its tool's results means for the user.

    It gets successes and the failures that are about the scenario's own data (not found,
    a domain refusal: ``tools.executor.failures``, ``scenario_words``); every other failure is
    worded once, generically, and never reaches it.
    """

    def __call__(self, result: ToolResult, state: AgentState, speaker: Speaker) -> str | None:
        """Return the sentence, or ``None`` for a failure it does not know (said generically)."""
        ...


class Confirmer(Protocol):
    """Says what a high-risk call will do, in the scenario's own words, before it runs.

    The confirmation question and the HITL card's ``description`` are this sentence: what
    will happen, to what, for how much (yuan, not cents), dates and names as people write
    them, IDs masked; never a tool name, ``key=value`` or ``None``.
    """

    def __call__(self, arguments: Mapping[str, Any], ctx: ToolContext, speaker: Speaker) -> str:
        """Return the sentence for a call with ``arguments`` (as a person may see them).

        ``ctx`` is the caller's trusted context: a confirmer may read what it names (the
        order's item and amount) from the business database, the call having passed its
        owner check already.
        """
        ...


AgentFactory = Callable[[Any], Callable[..., Any]]
"""Builds a sub-agent node (a compiled subgraph behind a hand-off node) from the graph's
``nodes.services.Services``. Typed ``Any`` here because the contract sits below the nodes: a
scenario's factory is typed precisely where it is written (``scenarios/*/agent.py``)."""


CommandsFactory = Callable[..., Any]
"""Builds a scenario's own command generator: ``commands(llm, rules)`` with the configured chat
model (``None`` without one) and the default reader (``understanding.reader``). Typed ``Any``
here because the contract sits below understanding."""


@dataclass(frozen=True, kw_only=True)
class TaskSpec:
    """How the graph serves one intent."""

    intent: str
    """The intent label."""
    tool: str
    """The tool (or, with ``agent``, the final tool of the agent's chain) that fulfils it."""
    required_slots: tuple[str, ...]
    """Slots that must be known before the tool runs."""
    sensitive_slots: tuple[str, ...] = ()
    """Slots kept in the identity vault: state holds a token and a masked form only."""
    optional_slots: tuple[str, ...] = ()
    """Slots the tool takes when the user gave them, never asked for ("下午那班CA1858")."""
    on_request: tuple[tuple[str, str], ...] = ()
    """(slot, tool): a tool added to the plan only when the user asked for it (the slot)."""
    handoff_on_failure: bool = True
    """When the tool keeps failing, hand over to a human (orders, money) or just say so."""
    agent: str | None = None
    """The sub-agent that carries the task out; ``None``: the generic tool node."""
    reask: Callable[[Sequence[ToolResult]], str | None] | None = None
    """Given the task's results, the slot the reply asks for again ("that day is full: which
    day?"), so the user's answer continues the task; ``None`` (or no hook): the task ends."""
    offer: Callable[[Sequence[ToolResult]], Mapping[str, Any]] | None = None
    """Given the same results, the one value the reopened question offers for its slot
    ("最近有号的日子：2024-06-20"): a plain yes to the question takes it."""
    suggest: Suggester | None = None
    """Looks the user's own records up for a missing slot: one the message names fills it
    ("我点的黄焖鸡怎么还没到"), else the question offers them; ``None``: just ask."""
    takes_from: tuple[str, ...] = ()
    """Intents whose request, answered last, gives this task the slots the message did not
    say: a flight searched, then "订CA1858" books it on the route and day searched."""


@dataclass(frozen=True)
class Beyond:
    """A request a scenario knows of but cannot carry out here: a person takes it over.

    "帮我退掉这张机票" is about flights, but no tool refunds a ticket; read as the nearest
    task, it started a booking and asked for a passenger's ID number. Said plainly, it is
    handed to a person with a sentence that says why (wording ``beyond.<name>``). How it is
    said is data: the examples of ``beyond.<name>`` in the scenario's ``examples``.
    """

    name: str
    """Names its sentence, ``beyond.<name>``, its examples and the hand-off's ``request``."""


@dataclass(frozen=True)
class Seed:
    """Demo schema and rows a scenario adds to the business database."""

    schema: str
    """``CREATE TABLE IF NOT EXISTS`` statements."""
    rows: Callable[[sqlite3.Connection], None]
    """Inserts the demo rows; runs once, when the database is first created."""


@dataclass(frozen=True, kw_only=True)
class Scenario:
    """One capability: its tasks, tools, grants, understanding data, wording and agents."""

    name: str
    """Short name: ``delivery``, ``weather`` ..."""
    tasks: tuple[TaskSpec, ...]
    """The intents it serves."""
    cards: tuple[ToolCard, ...]
    """Tool cards for the main agent's registry."""
    grants: Mapping[str, frozenset[str]]
    """Role → the permissions this scenario's tools need (``domain:action``)."""
    extract: SlotExtractor
    """The slot extractor for its intents."""
    wording: Wording
    """Its sentences, zh and en (see ``Wording`` for the keys the generic nodes read)."""
    describe: Mapping[str, Describer]
    """Tool → describer of its results."""
    agents: Mapping[str, AgentFactory] = field(default_factory=dict)
    """Sub-agents by node name; each becomes one node of the graph."""
    agent_cards: Mapping[str, tuple[ToolCard, ...]] = field(default_factory=dict)
    """Agent name → the tools only that agent has (its own registry)."""
    beyond: tuple[Beyond, ...] = ()
    """Requests about this scenario it cannot serve here, which a person takes over."""
    bare: Mapping[str, re.Pattern[str]] = field(default_factory=dict)
    """Intent → a message that is nothing but one of its values, asking for it ("OD-…呢":
    the order's status), matched whole against the normalized message. Read only when no
    task waits for an answer: then a bare value is that answer."""
    confirm: Mapping[str, Confirmer] = field(default_factory=dict)
    """Tool → the sentence its confirmation says (``Confirmer``); every high-risk tool of a
    shipped scenario has one. Without it the question is built from the card."""
    shown: Mapping[str, Callable[[Any, str], str]] = field(default_factory=dict)
    """Slot → how its value is said to a person in a language (``amount_cents`` 5000, "zh"
    → "50.00 元"), when the stored value is not what they said (a change is stated so)."""
    seed: Seed | None = None
    """Demo schema and rows."""
    examples: Examples = field(default_factory=dict)
    """Example requests per intent and language (``load_examples``): the recognizer's data."""
    commands: CommandsFactory | None = None
    """Reads messages for this scenario its own way (a pack: ``packs.understanding``), used
    when a graph serves this scenario alone; ``None``: the shared rule and model generators."""


class ScenarioSet:
    """The scenarios one graph serves, indexed for the generic nodes."""

    def __init__(self, scenarios: Sequence[Scenario]) -> None:
        """Index ``scenarios``; names, intents, tools and agents must be unique."""
        self.scenarios = tuple(scenarios)
        self.tasks: dict[str, TaskSpec] = {}
        self.scenario_of: dict[str, Scenario] = {}
        self.describers: dict[str, Describer] = {}
        self.tool_scenario: dict[str, Scenario] = {}
        self.agents: dict[str, AgentFactory] = {}
        self.agent_cards: dict[str, tuple[ToolCard, ...]] = {}
        self.confirmers: dict[str, Confirmer] = {}
        names: set[str] = set()
        for scenario in self.scenarios:
            _unique(names, scenario.name, "scenario")
            for task in scenario.tasks:
                _unique(self.tasks, task.intent, "intent")
                self.tasks[task.intent] = task
                self.scenario_of[task.intent] = scenario
            for tool, describer in scenario.describe.items():
                _unique(self.describers, tool, "describer for tool")
                self.describers[tool] = describer
                self.tool_scenario[tool] = scenario
            for agent, factory in scenario.agents.items():
                _unique(self.agents, agent, "agent")
                self.agents[agent] = factory
            self.agent_cards.update(scenario.agent_cards)
            agent_cards = (c for cards in scenario.agent_cards.values() for c in cards)
            for card in (*scenario.cards, *agent_cards):
                self.tool_scenario.setdefault(card.name, scenario)
            for tool, confirmer in scenario.confirm.items():
                _unique(self.confirmers, tool, "confirmer for tool")
                self.confirmers[tool] = confirmer

    @property
    def intents(self) -> list[str]:
        """Every intent, in declaration order."""
        return list(self.tasks)

    def task(self, intent: str | None) -> TaskSpec | None:
        """Return the task of ``intent``, or ``None`` for an unknown one."""
        return self.tasks.get(intent or "")

    def bare_request(self, text: str) -> str | None:
        """Return the intent a message that is only a value asks for (``Scenario.bare``)."""
        lowered = normalize(text)
        for scenario in self.scenarios:
            for intent, pattern in scenario.bare.items():
                if pattern.fullmatch(lowered):
                    return intent
        return None

    def intents_for(self, allows: Callable[[str], bool]) -> list[str]:
        """Return the intents whose tool needs a permission ``allows`` grants, in order.

        A greeting or a "what do you mean?" lists what the agent can do; listing staff
        tasks (bulk notices, sales figures) to a customer promises what the executor will
        refuse. A task whose tool has no card here is listed: nothing says it is closed.
        """
        cards = self.cards_by_name()
        return [
            intent
            for intent, task in self.tasks.items()
            if task.tool not in cards or allows(cards[task.tool].permission)
        ]

    def cards(self) -> list[ToolCard]:
        """Return the main agent's tool cards."""
        return [card for scenario in self.scenarios for card in scenario.cards]

    def cards_by_name(self) -> dict[str, ToolCard]:
        """Return every tool card by name: the main agent's and each sub-agent's."""
        cards = {card.name: card for card in self.cards()}
        for agent_cards in self.agent_cards.values():
            cards.update({card.name: card for card in agent_cards})
        return cards

    def grants(self) -> dict[str, set[str]]:
        """Return role → permissions, merged over the scenarios."""
        merged: dict[str, set[str]] = {}
        for scenario in self.scenarios:
            for role, permissions in scenario.grants.items():
                merged.setdefault(role, set()).update(permissions)
        return merged

    def wording(self, key: str, language: str, *, prefer: Scenario | None = None) -> str | None:
        """Return a scenario sentence, or ``None`` when no scenario has ``key``.

        ``prefer`` is looked in first: two scenarios may both ask for a ``city``, each in
        its own words.
        """
        order = (prefer, *self.scenarios) if prefer is not None else self.scenarios
        for scenario in order:
            text = scenario.wording.get(key)
            if text is not None:
                return text.get(language) or text.get("zh")
        return None

    def extract(self, text: str, intent: str, *, today: date) -> SlotResult:
        """Extract the slots of ``intent`` with its scenario's extractor."""
        scenario = self.scenario_of.get(intent)
        if scenario is None:
            return SlotResult()
        return scenario.extract(text, intent, today=today)

    def chain_to(self, agent: str, target: str) -> tuple[str, ...]:
        """Order the agent's tools that ``target`` needs, each after what it ``requires``."""
        cards = {card.name: card for card in self.agent_cards.get(agent, ())}
        needed: set[str] = set()
        pending = [target]
        while pending:
            name = pending.pop()
            if name in cards and name not in needed:
                needed.add(name)
                pending.extend(cards[name].requires)
        graph = {name: set(cards[name].requires) & needed for name in needed}
        return tuple(TopologicalSorter(graph).static_order())


def load_examples(path: Path) -> dict[str, dict[str, tuple[str, ...]]]:
    """Read a scenario's ``examples.yaml``: ``{INTENT: {zh: [...], en: [...]}}``."""
    raw = read_yaml(path)
    out: dict[str, dict[str, tuple[str, ...]]] = {}
    for intent, by_language in raw.items():
        if not isinstance(by_language, dict):
            msg = f"{path}: {intent} must map languages to lists of examples"
            raise ValueError(msg)
        out[str(intent)] = {
            str(language): tuple(str(text) for text in texts or ())
            for language, texts in by_language.items()
        }
    return out


def _unique(seen: Mapping[str, Any] | set[str], key: str, what: str) -> None:
    if key in seen:
        msg = f"{what} {key!r} is declared by two scenarios"
        raise ValueError(msg)


__all__ = [
    "LANGUAGES",
    "UNKNOWN",
    "AgentFactory",
    "Beyond",
    "CommandsFactory",
    "Confirmer",
    "Describer",
    "Examples",
    "Scenario",
    "ScenarioSet",
    "Seed",
    "SlotExtractor",
    "SlotResult",
    "Speaker",
    "TaskSpec",
    "Text",
    "Wording",
    "load_examples",
]
