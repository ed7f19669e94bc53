"""The backends nodes depend on, injected by ``build_graph`` so tests can swap any of them."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from functools import cached_property
from typing import Any

from langchain_core.language_models import BaseChatModel
from redis import Redis

from config.settings import Settings, get_settings
from contract.scenario import UNKNOWN, CommandsFactory, Scenario, ScenarioSet
from observability.audit import AuditLog
from planning.plans import PlanCache, plan_cache
from security.permissions import Permissions
from storage.db import Database, data_dir
from tools.executor.admission import RedisAdmission
from tools.executor.guards import CircuitBreakers, RateLimiter
from tools.executor.pipeline import ActionExecutor, ExecutorSettings
from tools.executor.stores import MemoryResultCache, SQLiteIdempotencyStore
from tools.registry.cards import ToolCard, ToolRegistry
from tools.registry.lifecycle import lifecycle_from_settings
from understanding.chat import chat_model_for, node_choice, parse_choice
from understanding.embeddings import shared_embeddings
from understanding.generator import CommandGenerator
from understanding.model_recognizer import build_understanding
from understanding.reader import Reader
from understanding.recognizer import CONFIDENCE_THRESHOLD, Recognizer, Understanding

MAIN_AGENT = "main"


class TaskRules:
    """The tasks as the command engine sees them: their slots, and which must run alone."""

    def __init__(self, services: Services) -> None:
        """Read the tasks and tool cards of ``services``."""
        self._services = services
        self._alone: dict[str, bool] = {}

    def required(self, intent: str) -> tuple[str, ...]:
        """The slots the task's tool needs."""
        task = self._services.catalog.task(intent)
        return task.required_slots if task is not None else ()

    def known(self, intent: str) -> bool:
        """The intent is a task here."""
        return intent != UNKNOWN and self._services.catalog.task(intent) is not None

    def runs_alone(self, intent: str) -> bool:
        """A confirmation, a sub-agent or a secret: never batched with other tasks."""
        if intent not in self._alone:
            task = self._services.catalog.task(intent)
            card = self._services.tools.get(task.tool) if task is not None else None
            self._alone[intent] = (
                task is None
                or task.agent is not None
                or bool(task.sensitive_slots)
                or card is None
                or card.risk == "high"
            )
        return self._alone[intent]


"""The registry and executor of the conversation's own tools (sub-agents have their own)."""


def default_executor(
    registry: ToolRegistry,
    settings: Settings | None = None,
    executor_settings: ExecutorSettings | None = None,
) -> ActionExecutor:
    """Build the executor with the configured stores.

    With ``redis_url`` set, idempotency records, cached results and rate-limit counters are
    shared in Redis (two round trips per call); otherwise idempotency is in SQLite in the
    data directory and the rest in-process. The audit trail goes to ``audit.jsonl`` in the
    data directory.
    """
    settings = settings or get_settings()
    retention = settings.idempotency_retention_s
    audit = AuditLog(data_dir(settings) / "audit.jsonl")
    if settings.redis_url:
        return ActionExecutor(
            registry,
            admission=RedisAdmission(Redis.from_url(settings.redis_url), retention_s=retention),
            breakers=CircuitBreakers(),
            audit=audit,
            settings=executor_settings,
        )
    return ActionExecutor(
        registry,
        idempotency=SQLiteIdempotencyStore(
            data_dir(settings) / "executor.db", retention_s=retention
        ),
        cache=MemoryResultCache(),
        rate_limiter=RateLimiter(),
        breakers=CircuitBreakers(),
        audit=audit,
        settings=executor_settings,
    )


@dataclass(kw_only=True)
class Services:
    """Scenarios, understanding, tools and data for one compiled graph."""

    scenarios: ScenarioSet | Sequence[Scenario]
    """The capabilities this graph serves."""
    settings: Settings = field(default_factory=get_settings)
    """Configuration, read once."""
    understanding: Understanding | None = None
    """Intent and slot recognition; built from the settings when omitted: the rules over the
    scenarios' cues (``REACH_MODEL=rules``), a model over the rules, or ``mixed``."""
    registry: ToolRegistry | None = None
    """The main agent's tool cards; built from the scenarios when omitted."""
    database_factory: Callable[[], Database] | None = None
    """Opens the business database on first use, so importing the graph touches no file."""
    executor_factory: Callable[[ToolRegistry], ActionExecutor] | None = None
    """Builds an action executor and its stores on first use; ``None``: ``default_executor``
    with these settings (its idempotency records and audit log in their data directory)."""
    max_tool_retries: int = 2
    """Retries of a transiently failing idempotent tool before handing over to a human."""
    confidence_threshold: float = CONFIDENCE_THRESHOLD
    """Below this, the intent goes to reflect-refine."""
    rules: Understanding | None = None
    """The example recognizer every model falls back on; trained on the scenarios' examples
    and the languages' dialogue acts when omitted."""
    plan_cache: PlanCache | None = None
    """Learned action plans (``nodes.plan_cache``); built from the settings when omitted."""
    commands: CommandGenerator | None = None
    """Dialogue understanding as commands (``understanding``); built from the settings when
    omitted: the rules, a model (one structured call a turn) or ``mixed``."""
    _generators: dict[str, CommandGenerator] = field(default_factory=dict, init=False, repr=False)
    _models: dict[str, BaseChatModel | None] = field(default_factory=dict, init=False, repr=False)
    _understandings: dict[str, Understanding] = field(default_factory=dict, init=False, repr=False)
    _database: Database | None = field(default=None, init=False, repr=False)
    _executors: dict[str, ActionExecutor] = field(default_factory=dict, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        """Index the scenarios and fill in what was not given from them."""
        if not isinstance(self.scenarios, ScenarioSet):
            self.scenarios = ScenarioSet(self.scenarios)
        if self.rules is None:
            self.rules = self.recognizer
        if self.understanding is None:
            self.understanding = self.understand_for(node_choice(self.settings, "intent"))
        if self.registry is None:
            self.registry = self.registry_of(self.scenarios.cards())

    @property
    def catalog(self) -> ScenarioSet:
        """The scenarios, indexed (typed for callers; ``scenarios`` is one after init)."""
        assert isinstance(self.scenarios, ScenarioSet)
        return self.scenarios

    @property
    def understand(self) -> Understanding:
        """The recognizer (always set after init)."""
        assert self.understanding is not None
        return self.understanding

    def understand_for(self, model: str | None) -> Understanding:
        """Return the recognizer for a run's ``Context.model`` (``None``: the configured one).

        ``rules`` is the rule-based recognizer, a model name (or ``local``) that model over
        the rules, ``mixed``/``mixed:<model>`` the rules first and the model below 0.6. Each
        choice is built once and reused.
        """
        if model is None and self.understanding is not None:
            return self.understanding
        assert self.rules is not None
        choice = model or "rules"
        with self._lock:
            if choice not in self._understandings:
                self._understandings[choice] = build_understanding(
                    choice,
                    self.settings,
                    self.catalog,
                    self.rules,
                    today=self.today,
                    llm=self._chat_model_unlocked(choice),
                )
            return self._understandings[choice]

    def chat_model(self, node: str, model: str | None = None) -> Any | None:
        """Return the chat model ``node`` uses on this run, or ``None`` for the rules.

        ``node`` is ``tool`` (planning calls), ``reflect`` (critique) or ``reply``; ``model``
        is the run's ``Context.model``. ``mixed`` keeps these steps on the rules: only
        understanding consults the model there.
        """
        choice = node_choice(self.settings, node, model)
        name, mixed = parse_choice(choice)
        if name is None or mixed:
            return None
        with self._lock:
            return self._chat_model_unlocked(choice)

    def _chat_model_unlocked(self, choice: str) -> Any | None:
        if choice not in self._models:
            self._models[choice] = chat_model_for(choice, self.settings)
        return self._models[choice]

    def commands_for(self, model: str | None) -> CommandGenerator:
        """Return the command generator for a run's ``Context.model`` (``None``: configured).

        ``rules`` reads with the scenarios' cues and extractors, a model name (or ``local``)
        makes one structured model call a turn, ``mixed`` asks the model only when the rules
        are unsure. Each choice is built once and reused.
        """
        if model is None and self.commands is not None:
            return self.commands
        choice = model or node_choice(self.settings, "intent")
        with self._lock:
            if choice not in self._generators:
                self._generators[choice] = self._generator_unlocked(choice)
            return self._generators[choice]

    def _generator_unlocked(self, choice: str) -> CommandGenerator:
        from understanding.model import build_generator  # noqa: PLC0415 - builds a client

        rules = self.rule_commands
        name, _ = parse_choice(choice)
        own = self.own_commands
        if own is not None:  # a scenario that reads its messages its own way (a pack)
            return own(self._chat_model_unlocked(choice) if name else None, rules)
        if name is None:
            return rules
        return build_generator(
            choice, self.settings, self.catalog, rules, llm=self._chat_model_unlocked(choice)
        )

    @property
    def own_commands(self) -> CommandsFactory | None:
        """The command generator factory of the one scenario served, if it has its own."""
        scenarios = self.catalog.scenarios
        return scenarios[0].commands if len(scenarios) == 1 else None

    @cached_property
    def recognizer(self) -> Recognizer:
        """Tasks and dialogue acts, learned from the examples when the graph is built."""
        settings = self.settings
        key = settings.api_key.get_secret_value() if settings.api_key else None
        embeddings = shared_embeddings(
            settings.embeddings,
            url=settings.embeddings_url,
            api_key=key,
            cache_dir=settings.cache_dir,
            threads=settings.embedding_threads,
            keep_messages=settings.embeddings_keep_messages,
        )
        return Recognizer(
            self.catalog,
            embeddings,
            cache_dir=settings.cache_dir,
            threshold=self.confidence_threshold,
            today=self.today,
        )

    @cached_property
    def rule_commands(self) -> Reader:
        """The default reader (no model), which every model generator falls back on."""
        return Reader(
            self.catalog, self.recognizer, threshold=self.confidence_threshold, today=self.today
        )

    @cached_property
    def required_slots(self) -> dict[str, tuple[str, ...]]:
        """Intent → the slots its tool needs."""
        return {intent: task.required_slots for intent, task in self.catalog.tasks.items()}

    @cached_property
    def sensitive_slot_names(self) -> frozenset[str]:
        """Every slot some task keeps in the vault (never shown in a command record)."""
        return frozenset(s for task in self.catalog.tasks.values() for s in task.sensitive_slots)

    @cached_property
    def task_rules(self) -> TaskRules:
        """What the engine reads of the tasks (``understanding.engine.TaskRules``)."""
        return TaskRules(self)

    @property
    def tools(self) -> ToolRegistry:
        """The main agent's registry (always set after init)."""
        assert self.registry is not None
        return self.registry

    @property
    def plans(self) -> PlanCache:
        """Return the learned-plan cache, opening the configured store on first use."""
        with self._lock:
            if self.plan_cache is None:
                self.plan_cache = plan_cache(self.settings)
            return self.plan_cache

    @cached_property
    def permissions(self) -> Permissions:
        """Role grants merged over the scenarios."""
        return Permissions.merged(self.catalog.grants())

    def offered_intents(self, role: str) -> list[str]:
        """Return the intents ``role`` may carry out, to list to a caller of that role."""
        return self.catalog.intents_for(
            lambda permission: self.permissions.allows(role, permission)
        )

    def registry_of(self, cards: Sequence[ToolCard]) -> ToolRegistry:
        """Build a registry of ``cards`` under the scenarios' grants."""
        registry = ToolRegistry(permissions=self.permissions)
        registry.lifecycle = lifecycle_from_settings(self.settings)  # shared with `reach tools`
        for card in cards:
            registry.register(card)
        return registry

    def today(self) -> date:
        """Return the business date: the configured one in demos and tests, else today."""
        return self.settings.today or date.today()

    @property
    def database(self) -> Database:
        """Return the business database, opening it on first use."""
        with self._lock:
            if self._database is None:
                if self.database_factory is not None:
                    self._database = self.database_factory()
                else:
                    seeds = [s.seed for s in self.catalog.scenarios if s.seed is not None]
                    path = data_dir(self.settings) / "business.db"
                    self._database = Database(path, seeds=seeds)
            return self._database

    @property
    def executor(self) -> ActionExecutor:
        """Return the main agent's action executor, building it on first use."""
        return self.executor_for(MAIN_AGENT)

    def executor_for(self, agent: str) -> ActionExecutor:
        """Return an agent's executor over its own tools, building it on first use."""
        with self._lock:
            if agent not in self._executors:
                if agent == MAIN_AGENT:
                    registry = self.tools
                else:
                    registry = self.registry_of(self.catalog.agent_cards.get(agent, ()))
                if self.executor_factory is not None:
                    self._executors[agent] = self.executor_factory(registry)
                else:
                    self._executors[agent] = default_executor(registry, self.settings)
            return self._executors[agent]
