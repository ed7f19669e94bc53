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
text, a number the user typed, a secret) is not cached at all.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from redis import Redis

from tools.kv import KeyValueStore, MemoryKV, RedisKV, SQLiteKV
from tools.settings import Settings

_CONSTANT = re.compile(r"^[a-z][a-z_]{0,19}$")
"""Enum-like literals (channel names, modes) are structure, not user data."""


class PlanStep(TypedDict):
    """One call of a plan."""

    name: str
    arguments: dict[str, Any]
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
    parameters: dict[str, Any]
    result: Mapping[str, Any]
    """The executor's envelope (``status``, ``data``)."""


class PlanInstantiationError(ValueError):
    """The slots (or earlier results) lack what a template refers to."""


def slot_shape(slots: Mapping[str, Any]) -> list[str]:
    """Return the names of the filled slots, sorted: the shape, never the values."""
    return sorted(name for name, value in slots.items() if value not in (None, "", [], {}))


def plan_key(scenario: str, intent: str, slots: Mapping[str, Any]) -> str:
    """Return the cache key of a request."""
    return f"{scenario}|{intent}|{','.join(slot_shape(slots))}"


def templatize(
    arguments: Mapping[str, Any],
    slots: Mapping[str, Any],
    earlier: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any] | None:
    """Turn concrete arguments into templates, or ``None`` if any value has no safe source.

    ``earlier`` holds the ``data`` of the steps before this one.
    """
    out: dict[str, Any] = {}
    for arg, value in arguments.items():
        ref = _reference(value, slots, earlier)
        if ref is None:
            return None
        out[arg] = ref
    return out


def _reference(value: Any, slots: Mapping[str, Any], earlier: Sequence[Mapping[str, Any]]) -> Any:
    for name in slot_shape(slots):
        if slots[name] == value:
            return f"$slots.{name}"
    for index in range(len(earlier) - 1, -1, -1):
        for field_name, field_value in earlier[index].items():
            if field_value == value and not isinstance(value, bool):
                return f"$steps.{index}.{field_name}"
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str) and _CONSTANT.fullmatch(value):
        return value
    return None


@dataclass
class PlanCache:
    """Plans in a shared store (memory, SQLite or Redis)."""

    store: KeyValueStore = field(default_factory=MemoryKV)
    now: Callable[[], float] = time.time
    enabled: bool = True
    """Off: ``lookup`` finds nothing and ``record`` keeps nothing (to measure the gain)."""

    def record(
        self,
        scenario: str,
        intent: str,
        slots: Mapping[str, Any],
        sequence: Sequence[PlanCall],
    ) -> Plan | None:
        """Keep the sequence of a completed task as a plan; ``None`` if it cannot be kept.

        Only fully successful sequences of two or more calls are kept, and only when every
        argument can be expressed as a template.
        """
        if not self.enabled or len(sequence) < 2:
            return None
        steps: list[PlanStep] = []
        earlier: list[Mapping[str, Any]] = []
        for call in sequence:
            if call["result"].get("status") != "success":
                return None
            arguments = templatize(call["parameters"], slots, earlier)
            if arguments is None:
                return None
            steps.append(PlanStep(name=call["name"], arguments=arguments))
            data = call["result"].get("data")
            earlier.append(data if isinstance(data, Mapping) else {})
        key = plan_key(scenario, intent, slots)
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
        self.store.put(key, dict(plan))
        return plan

    def lookup(self, scenario: str, intent: str, slots: Mapping[str, Any]) -> Plan | None:
        """Return the plan for this kind of request, if one was proven."""
        if not self.enabled:
            return None
        raw = self.store.get(plan_key(scenario, intent, slots))
        return None if raw is None else Plan(**raw)  # type: ignore[typeddict-item]

    def evict(self, key: str) -> bool:
        """Forget a plan (it failed: the tools or the data changed)."""
        return self.store.delete(key)

    def plans(self) -> list[Plan]:
        """Return every stored plan."""
        return [Plan(**raw) for raw in self.store.items().values()]  # type: ignore[typeddict-item]


def instantiate_step(
    plan: Plan,
    index: int,
    slots: Mapping[str, Any],
    results: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """Return step ``index`` as a call ``{"name", "parameters"}`` for ``executor.prepare``.

    ``results`` holds the ``data`` of the steps already run.
    """
    step = plan["steps"][index]
    parameters = {arg: _fill(t, slots, results) for arg, t in step["arguments"].items()}
    return {"name": step["name"], "parameters": parameters}


def instantiate(plan: Plan, slots: Mapping[str, Any]) -> list[dict[str, Any]]:
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


def plan_cache(settings: Settings) -> PlanCache:
    """Return the configured cache: Redis with ``redis_url``, else SQLite in the data dir."""
    store: KeyValueStore
    if settings.redis_url and settings.tools_store != "sqlite":
        store = RedisKV(Redis.from_url(settings.redis_url), "plans")
    else:
        store = SQLiteKV(settings.data_dir / "tools.db", "plans")
    return PlanCache(store, enabled=settings.plan_cache)
