"""Tool lifecycle: enable, disable, deprecate (with a sunset date), version pins, retirement.

The registry holds the cards (code); this module holds their *state*, which operators change
at run time and which every worker must see the same way, so it lives in a shared store
(SQLite for one host, Redis for several). Each change is written to the audit trail.

State is recorded per tool name (all versions) or per ``name@version``; a version's own
record wins over the name's. ``deprecated`` tools still run but are not offered to a model;
from their sunset date on they are refused like disabled ones. ``retired`` versions never
serve again. Pins keep a task (or an intent) on the version it started with while a new
version takes new traffic; a version is retired once no live pin uses it.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Literal, TypeAlias, TypedDict, cast

from redis import Redis

from config.limits import JsonObject
from config.settings import Settings
from observability.audit import AuditLog
from observability.records import LifecycleRecord
from storage.kv import KeyValueStore, MemoryKV, RedisKV, SQLiteKV

ToolStatus = Literal["active", "deprecated", "disabled", "retired"]
STATUSES: tuple[ToolStatus, ...] = ("active", "deprecated", "disabled", "retired")
SERVING: frozenset[str] = frozenset({"active", "deprecated"})
DEFAULT_PIN_MAX_AGE_S = 24 * 3600.0


class StatusRecord(TypedDict):
    """What an operator set for a tool (or one version of it)."""

    status: ToolStatus
    sunset: str | None
    """ISO date from which a deprecated tool is refused."""
    actor: str
    reason: str
    ts: float


class PinRecord(TypedDict):
    """A task or intent kept on one version of a tool (``pin``), and since when."""

    version: str
    ts: float


LifecycleValue: TypeAlias = StatusRecord | PinRecord
"""What the lifecycle's store holds: status records under ``state:``, pins under ``pin:``."""


class Effective(TypedDict):
    """The status that applies now, after sunset dates, and where it came from."""

    status: ToolStatus
    sunset: str | None
    reason: str
    scope: str
    """``name`` or ``name@version``: which record decided."""


class TransitionRefusedError(ValueError):
    """A lifecycle change that would break live traffic (retiring a pinned version)."""


def version_key(version: str) -> tuple[int, ...] | tuple[float, str]:
    """Sort versions numerically when they are dotted numbers, else as text after them."""
    try:
        return tuple(int(part) for part in version.split("."))
    except ValueError:
        return (float("inf"), version)


@dataclass
class ToolLifecycle:
    """Tool states and version pins in a shared store, with an audit record per change."""

    store: KeyValueStore[LifecycleValue] = field(default_factory=MemoryKV)
    audit: AuditLog | None = None
    today: Callable[[], date] = date.today
    now: Callable[[], float] = time.time
    cache_ttl_s: float = 0.0
    """Read states from a snapshot at most this old (one listing instead of a read per
    lookup); other workers' changes show up within it. 0: always read the store."""
    _snapshot: dict[str, LifecycleValue] = field(default_factory=dict, repr=False)
    _snapshot_at: float = field(default=float("-inf"), repr=False)

    def _state(self, scope: str) -> StatusRecord | None:
        if self.cache_ttl_s <= 0:
            return _status(self.store.get(f"state:{scope}"))
        now = self.now()
        if now - self._snapshot_at >= self.cache_ttl_s:
            self._snapshot = self.store.items("state:")
            self._snapshot_at = now
        return _status(self._snapshot.get(f"state:{scope}"))

    # ---- status -----------------------------------------------------------------------

    def set_status(
        self,
        name: str,
        status: ToolStatus,
        *,
        version: str | None = None,
        sunset: date | None = None,
        actor: str = "system",
        reason: str = "",
    ) -> StatusRecord:
        """Record ``status`` for a tool (or one version) and audit the change."""
        if status not in STATUSES:
            msg = f"unknown status {status!r}; one of {', '.join(STATUSES)}"
            raise ValueError(msg)
        scope = _scope(name, version)
        before = _status(self.store.get(f"state:{scope}"))
        record = StatusRecord(
            status=status,
            sunset=sunset.isoformat() if sunset else None,
            actor=actor,
            reason=reason,
            ts=self.now(),
        )
        self.store.put(f"state:{scope}", record)
        self._snapshot_at = float("-inf")  # this worker sees its own change at once
        if self.audit is not None:
            change: LifecycleRecord = {
                "ts": record["ts"],
                "event": "tool_lifecycle",
                "tool_name": name,
                "version": version,
                "change": status,
                "before": before.get("status", "active") if before else "active",
                "sunset": record["sunset"],
                "actor": actor,
                "reason": reason,
            }
            self.audit.write(change)
        return record

    def record(self, name: str, version: str | None = None) -> StatusRecord | None:
        """Return the record that decides for ``name``/``version`` (version first)."""
        for scope in (_scope(name, version), name) if version else (name,):
            raw = _status(self.store.get(f"state:{scope}"))
            if raw is not None:
                return StatusRecord(**raw)
        return None

    def effective(self, name: str, version: str | None = None) -> Effective:
        """Return the status that applies today; a deprecation past its sunset is disabled."""
        scope = name
        raw: StatusRecord | None = None
        if version is not None:
            raw = self._state(_scope(name, version))
            scope = _scope(name, version)
        if raw is None:
            raw = self._state(name)
            scope = name
        if raw is None:
            return Effective(status="active", sunset=None, reason="", scope=name)
        status: ToolStatus = raw["status"]
        sunset = raw.get("sunset")
        reason = str(raw.get("reason", ""))
        if status == "deprecated" and sunset and date.fromisoformat(sunset) <= self.today():
            return Effective(
                status="disabled", sunset=sunset, reason=f"sunset on {sunset}", scope=scope
            )
        return Effective(status=status, sunset=sunset, reason=reason, scope=scope)

    def states(self) -> dict[str, StatusRecord]:
        """Return every recorded state by scope (``name`` or ``name@version``)."""
        return {
            key.removeprefix("state:"): StatusRecord(**value)
            for key, value in _statuses(self.store.items("state:")).items()
        }

    # ---- pins -------------------------------------------------------------------------

    def pin(self, scope: str, name: str, version: str) -> None:
        """Keep ``scope`` (``task:<id>`` or ``intent:<INTENT>``) on ``version`` of ``name``."""
        self.store.put(f"pin:{scope}|{name}", {"version": version, "ts": self.now()})

    def claim_pin(self, scope: str, name: str, version: str) -> str:
        """Pin ``scope`` to ``version`` of ``name`` unless it is pinned; return its version.

        One round trip where ``pinned`` then ``pin`` took two.
        """
        stored = self.store.put_if_absent(
            f"pin:{scope}|{name}", {"version": version, "ts": self.now()}
        )
        return str(_pin(stored)["version"])

    def unpin_names(self, scope: str, names: Iterable[str]) -> int:
        """Drop ``scope``'s pins on ``names`` in one round trip."""
        return self.store.delete_many([f"pin:{scope}|{name}" for name in names])

    def pinned(self, scope: str, name: str) -> str | None:
        """Return the version ``scope`` is pinned to, if any."""
        raw = self.store.get(f"pin:{scope}|{name}")
        return None if raw is None else str(_pin(raw)["version"])

    def unpin(self, scope: str, name: str | None = None) -> int:
        """Drop ``scope``'s pin on ``name`` (all its pins with ``None``), e.g. at task end."""
        keys = (
            [f"pin:{scope}|{name}"]
            if name is not None
            else list(self.store.items(f"pin:{scope}|").keys())
        )
        return sum(self.store.delete(key) for key in keys)

    def live_pins(
        self, name: str, version: str, *, max_age_s: float = DEFAULT_PIN_MAX_AGE_S
    ) -> list[str]:
        """Return the scopes still pinned to ``name@version`` (stale pins are ignored)."""
        horizon = self.now() - max_age_s
        scopes = []
        for key, value in self.store.items("pin:").items():
            scope, _, tool = key.removeprefix("pin:").rpartition("|")
            pin = _pin(value)
            if tool == name and pin["version"] == version and float(pin["ts"]) >= horizon:
                scopes.append(scope)
        return scopes

    def retire(
        self,
        name: str,
        version: str,
        *,
        actor: str = "system",
        force: bool = False,
        max_age_s: float = DEFAULT_PIN_MAX_AGE_S,
    ) -> StatusRecord:
        """Retire one version once traffic has moved off it (no live pins), or ``force``."""
        pins = self.live_pins(name, version, max_age_s=max_age_s)
        if pins and not force:
            msg = (
                f"{name}@{version} still serves {len(pins)} pinned task(s) or intent(s): "
                f"{', '.join(sorted(pins)[:5])}; retire after they finish, or force"
            )
            raise TransitionRefusedError(msg)
        return self.set_status(
            name, "retired", version=version, actor=actor, reason="traffic moved"
        )


def _scope(name: str, version: str | None) -> str:
    return f"{name}@{version}" if version else name


def _status(value: LifecycleValue | None) -> StatusRecord | None:
    """A value stored under ``state:``: a status record (the key says so, not the value)."""
    return cast("StatusRecord | None", value)


def _statuses(values: dict[str, LifecycleValue]) -> dict[str, StatusRecord]:
    """The values of a ``state:`` listing: status records."""
    return cast("dict[str, StatusRecord]", values)


def _pin(value: LifecycleValue) -> PinRecord:
    """A value stored under ``pin:``: a pin."""
    return cast("PinRecord", value)


def lifecycle_store(settings: Settings) -> KeyValueStore[LifecycleValue]:
    """Return the configured shared store: Redis with ``redis_url``, else SQLite on disk."""
    if settings.redis_url and settings.tools_store != "sqlite":
        return RedisKV(Redis.from_url(settings.redis_url), "tools")
    return SQLiteKV(settings.data_dir / "storage.db", "tools")


def lifecycle_from_settings(settings: Settings, audit: AuditLog | None = None) -> ToolLifecycle:
    """Return the lifecycle every worker shares, on the configured store."""
    return ToolLifecycle(
        lifecycle_store(settings), audit=audit, cache_ttl_s=settings.tools_state_ttl_s
    )


# ---- tool coverage ------------------------------------------------------------------------


class CoverageReport(TypedDict):
    """The design's tool-coverage metric: which tools the model never chose."""

    tools: int
    used: dict[str, int]
    """Calls per tool, from the audit trail."""
    never_chosen: list[str]
    """Registered, offered tools with no call: usually a poor description."""
    coverage: float
    """Share of tools chosen at least once."""


def tool_coverage(
    tool_names: Iterable[str], records: Iterable[Mapping[str, object]]
) -> CoverageReport:
    """Count tool calls in executor audit records; lifecycle events are not calls."""
    names = sorted(set(tool_names))
    used = Counter(
        str(record["tool"])
        for record in records
        if "tool" in record and "event" not in record and record.get("tool") in names
    )
    never = [name for name in names if used[name] == 0]
    return CoverageReport(
        tools=len(names),
        used=dict(sorted(used.items())),
        never_chosen=never,
        coverage=round((len(names) - len(never)) / len(names), 4) if names else 1.0,
    )


def read_audit_records(path: str | Path) -> list[JsonObject]:  # lines read back: free-form
    """Read an ``audit.jsonl`` file (skipping torn last lines); missing file: none."""
    target = Path(path)
    if not target.exists():
        return []
    records = []
    for line in target.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def coverage_lines(report: CoverageReport) -> list[str]:
    """Render the report for ``reach stats``."""
    lines = [
        f"tool coverage: {report['coverage']:.0%} of {report['tools']} tools chosen at least once"
    ]
    if report["never_chosen"]:
        never = ", ".join(report["never_chosen"])
        lines.append(f"never chosen (check their descriptions): {never}")
    return lines
