"""Learned action plans: reuse a tool sequence that completed the same kind of task.

When a multi-step task succeeds (hold → book → notify, or a refund handed to finance), its
calls are recorded as a *plan*: tool names and argument templates, keyed by scenario,
intent and slot shape (which slots were filled, not their values). The next request of the
same kind skips the trial and error: ``lookup`` finds the plan and ``instantiate`` fills it
from the new slots. The output is plain ``{"name", "parameters"}`` calls, so a cached plan
still goes through ``ActionExecutor.prepare``'s every check; a plan whose call fails is
``evict``-ed.

A template never holds a value: each argument is ``$slots.<name>`` (a slot of the task),
``$steps.<i>.<field>`` (a field of an earlier step's result, such as a hold id), or a
short enum-like constant (``"sms"``, ``true``). A sequence with any other literal (a free
text, a number the user typed, a secret) is not cached at all. A caller that learns from a
model's plan passes ``constants=False``: a constant the slots do not explain came from the
user's words, and a plan keyed on the slot shape must not replay words the next user never said.

The graph wiring (look up before the model plans, record on success, evict on failure) is in
``nodes.plan_cache``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, TypedDict

from redis import Redis

from config.settings import Settings
from storage.kv import KeyValueStore, MemoryKV, RedisKV, SQLiteKV
from tools.executor.envelope import CallRequest
from tools.registry.types import Arguments

_CONSTANT = re.compile(r"^[a-z][a-z_]{0,19}$")
"""Enum-like literals (channel names, modes) are structure, not user data."""


Template: TypeAlias = str | bool | None
"""One argument of a plan: ``$slots.x``, ``$steps.i.field``, an enum-like constant, a
boolean, or ``None`` (an unset argument)."""


class PlanStep(TypedDict):
    """One call of a plan."""

    name: str
    arguments: dict[str, Template]
    """Argument name → template (``$slots.x``, ``$steps.i.field``, or an enum constant)."""


class Plan(TypedDict):
    """A proven sequence for one kind of request."""

    key: str
    scenario: str
    intent: str
    slot_shape: list[str]
    steps: list[PlanStep]
    successes: int
    recorded_at: float


class PlanCall(TypedDict):
    """A completed call, as the task history has it."""

    name: str
    parameters: Arguments
    result: Mapping[str, Any]
    """The executor's envelope (``status``, ``data``)."""


class PlanInstantiationError(ValueError):
    """The slots (or earlier results) lack what a template refers to."""


def slot_shape(slots: Mapping[str, Any]) -> list[str]:
    """Return the names of the filled slots, sorted: the shape, never the values."""
    return sorted(name for name, value in slots.items() if value not in (None, "", [], {}))


def plan_key(scenario: str, intent: str, slots: Mapping[str, Any], role: str = "") -> str:
    """Return the cache key of a request.

    ``role`` (the caller's) keeps plans apart whose tools one role may use and another not,
    so a customer's request never evicts the plan an agent proved.
    """
    key = f"{scenario}|{intent}|{','.join(slot_shape(slots))}"
    return f"{key}|{role}" if role else key


def templatize(
    arguments: Mapping[str, Any],
    slots: Mapping[str, Any],
    earlier: Sequence[Mapping[str, Any]] = (),
    *,
    constants: bool = True,
) -> dict[str, Template] | None:
    """Turn concrete arguments into templates, or ``None`` if any value has no safe source.

    ``earlier`` holds the ``data`` of the steps before this one. ``constants=False`` refuses
    enum-like literals and booleans too: every argument must come from a slot or a result.
    """
    out: dict[str, Template] = {}
    for arg, value in arguments.items():
        ref = _reference(value, slots, earlier, constants=constants)
        if ref is _NO_SOURCE:
            return None
        out[arg] = ref
    return out


_NO_SOURCE = object()
"""A value with no safe source (``None`` itself is a fine template: an unset argument)."""


def _reference(
    value: Any,
    slots: Mapping[str, Any],
    earlier: Sequence[Mapping[str, Any]],
    *,
    constants: bool,
) -> Any:
    for name in slot_shape(slots):
        if slots[name] == value:
            return f"$slots.{name}"
    for index in range(len(earlier) - 1, -1, -1):
        for field_name, field_value in earlier[index].items():
            if field_value == value and not isinstance(value, bool):
                return f"$steps.{index}.{field_name}"
    if value is None:
        return None
    if constants and isinstance(value, bool):
        return value
    if constants and isinstance(value, str) and _CONSTANT.fullmatch(value):
        return value
    return _NO_SOURCE


@dataclass
class PlanCache:
    """Plans in a shared store (memory, SQLite or Redis)."""

    store: KeyValueStore[Plan] = field(default_factory=MemoryKV)
    now: Callable[[], float] = time.time
    enabled: bool = True
    """Off: ``lookup`` finds nothing and ``record`` keeps nothing (to measure the gain)."""

    def record(
        self,
        scenario: str,
        intent: str,
        slots: Mapping[str, Any],
        sequence: Sequence[PlanCall],
        *,
        min_steps: int = 2,
        constants: bool = True,
        role: str = "",
    ) -> Plan | None:
        """Keep the sequence of a completed task as a plan; ``None`` if it cannot be kept.

        Only fully successful sequences of ``min_steps`` or more calls are kept (1 when the
        sequence cost a model call to plan: reusing even one call saves that call), and only
        when every argument can be expressed as a template (see ``templatize``).
        """
        if not self.enabled or not sequence or len(sequence) < min_steps:
            return None
        steps: list[PlanStep] = []
        earlier: list[Mapping[str, Any]] = []
        for call in sequence:
            if call["result"].get("status") != "success":
                return None
            arguments = templatize(call["parameters"], slots, earlier, constants=constants)
            if arguments is None:
                return None
            steps.append(PlanStep(name=call["name"], arguments=arguments))
            data = call["result"].get("data")
            earlier.append(data if isinstance(data, Mapping) else {})
        key = plan_key(scenario, intent, slots, role)
        previous = self.store.get(key)
        successes = 1
        if previous is not None and previous.get("steps") == steps:
            successes = int(previous.get("successes", 0)) + 1
        plan = Plan(
            key=key,
            scenario=scenario,
            intent=intent,
            slot_shape=slot_shape(slots),
            steps=steps,
            successes=successes,
            recorded_at=self.now(),
        )
        self.store.put(key, plan)
        return plan

    def lookup(
        self, scenario: str, intent: str, slots: Mapping[str, Any], role: str = ""
    ) -> Plan | None:
        """Return the plan for this kind of request, if one was proven."""
        if not self.enabled:
            return None
        raw = self.store.get(plan_key(scenario, intent, slots, role))
        return None if raw is None else Plan(**raw)

    def evict(self, key: str) -> bool:
        """Forget a plan (it failed: the tools or the data changed)."""
        return self.store.delete(key)

    def plans(self) -> list[Plan]:
        """Return every stored plan."""
        return [Plan(**raw) for raw in self.store.items().values()]


def instantiate_step(
    plan: Plan,
    index: int,
    slots: Mapping[str, Any],
    results: Sequence[Mapping[str, Any]] = (),
) -> CallRequest:
    """Return step ``index`` as a call ``{"name", "parameters"}`` for ``executor.prepare``.

    ``results`` holds the ``data`` of the steps already run.
    """
    step = plan["steps"][index]
    parameters = {arg: _fill(t, slots, results) for arg, t in step["arguments"].items()}
    return {"name": step["name"], "parameters": parameters}


def instantiate(plan: Plan, slots: Mapping[str, Any]) -> list[CallRequest]:
    """Return all calls of a plan that depends only on slots (else use ``instantiate_step``)."""
    return [instantiate_step(plan, i, slots) for i in range(len(plan["steps"]))]


def _fill(template: Any, slots: Mapping[str, Any], results: Sequence[Mapping[str, Any]]) -> Any:
    if not isinstance(template, str) or not template.startswith("$"):
        return template
    parts = template.split(".")
    if parts[0] == "$slots" and len(parts) == 2:
        if slots.get(parts[1]) in (None, ""):
            msg = f"slot {parts[1]!r} is not filled"
            raise PlanInstantiationError(msg)
        return slots[parts[1]]
    if parts[0] == "$steps" and len(parts) == 3:
        index = int(parts[1])
        if index >= len(results) or parts[2] not in results[index]:
            msg = f"step {index} has not produced {parts[2]!r} yet"
            raise PlanInstantiationError(msg)
        return results[index][parts[2]]
    msg = f"bad template {template!r}"
    raise PlanInstantiationError(msg)


PlanStoreKind = Literal["memory", "sqlite", "redis"]


def plan_store_kind(settings: Settings) -> PlanStoreKind:
    """Return where plans live: ``REACH_PLAN_STORE``, else Redis with ``redis_url``, else memory.

    Memory is the default because a plan is only an optimisation: losing it on restart costs
    one model call per kind of request. Several workers share plans in Redis, several
    processes on one host in SQLite (``<data dir>/storage.db``).
    """
    if settings.plan_store is not None:
        return settings.plan_store
    return "redis" if settings.redis_url else "memory"


def plan_cache(settings: Settings) -> PlanCache:
    """Return the configured cache (``plan_store_kind``); ``REACH_PLAN_CACHE=off`` disables it."""
    kind = plan_store_kind(settings)
    store: KeyValueStore[Plan]
    if kind == "redis":
        if not settings.redis_url:
            msg = "REACH_PLAN_STORE=redis needs REDIS_URL"
            raise ValueError(msg)
        store = RedisKV(Redis.from_url(settings.redis_url), "plans")
    elif kind == "sqlite":
        store = SQLiteKV(settings.data_dir / "storage.db", "plans")
    else:
        store = MemoryKV()
    return PlanCache(store, enabled=settings.plan_cache)
