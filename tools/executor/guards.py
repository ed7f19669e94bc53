"""Limits on how tools are called: rate limits, circuit breakers and per-task guards.

Rate limits are per user and tool, breakers per tool, guards per task against loops.

Rate limits are moving windows over an injected clock (rules parsed by ``limits``); with
Redis, ``tools.executor.admission.RedisAdmission`` keeps them instead. Breakers and the per-task
guards read the task's own history and are hand-written: no library knows what a task is.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field

from limits import parse

from config.clock import Clock
from tools.registry.context import TaskGuards


class RateLimiter:
    """Per user and tool, as each card's ``rate_limit`` says (e.g. ``10/minute``).

    A moving window, as ``limits``' ``MovingWindowRateLimiter`` counts: a call is allowed
    when fewer than the rule's amount were allowed in the last window, and a refused call
    is not counted. It is kept here, not in ``limits``' memory storage, so that it reads an
    injected clock (that storage reads ``time.time`` and runs its own expiry timer thread).
    """

    SWEEP_EVERY = 1024
    """Hits between sweeps that forget users whose window has passed."""

    def __init__(self, *, clock: Clock = time.monotonic) -> None:
        """Count in memory against ``clock`` (Redis mode uses ``RedisAdmission``)."""
        self._clock = clock
        self._hits: dict[tuple[str, str, str], tuple[float, deque[float]]] = {}
        self._since_sweep = 0
        self._lock = threading.Lock()

    def hit(self, rule: str | None, user_id: str, tool: str) -> bool:
        """Record one call; return False when it is over the limit."""
        if not rule:
            return True
        limit = parse(rule)
        window_s = float(limit.get_expiry())
        now = self._clock()
        with self._lock:
            self._sweep(now)
            _, hits = self._hits.setdefault((rule, user_id, tool), (window_s, deque()))
            while hits and hits[0] < now - window_s:
                hits.popleft()
            if len(hits) >= limit.amount:
                return False
            hits.append(now)
            return True

    def _sweep(self, now: float) -> None:
        self._since_sweep += 1
        if self._since_sweep < self.SWEEP_EVERY:
            return
        self._since_sweep = 0
        for key, (window_s, hits) in list(self._hits.items()):
            if not hits or hits[-1] < now - window_s:
                del self._hits[key]


class CircuitOpenError(Exception):
    """The tool's circuit is open: it failed too often and is cooling down."""


@dataclass
class CircuitBreaker:
    """Closed → open after ``fail_max`` consecutive failures → half-open after the cool-down.

    In half-open, one probe call goes through: success closes the circuit, failure opens it
    again. The lock guards only the state, never the call, so calls run concurrently.
    """

    fail_max: int
    """Consecutive failures that open the circuit."""
    reset_timeout_s: float
    """Cool-down before a probe is let through."""
    failures: int = 0
    """Consecutive failures so far."""
    opened_at: float | None = None
    """When the circuit opened, by ``clock``."""
    probing: bool = False
    """A half-open probe is in flight."""
    clock: Clock = field(default=time.monotonic, repr=False)
    """Where ``opened_at`` and the cool-down are read from."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def state(self) -> str:
        """Return ``closed``, ``open`` or ``half-open``."""
        with self._lock:
            return self._state()

    def _state(self) -> str:
        if self.opened_at is None:
            return "closed"
        if self.clock() - self.opened_at >= self.reset_timeout_s:
            return "half-open"
        return "open"

    def before_call(self) -> None:
        """Raise ``CircuitOpenError`` unless a call may go through now."""
        with self._lock:
            state = self._state()
            if state == "open" or (state == "half-open" and self.probing):
                msg = f"circuit open after {self.failures} consecutive failures"
                raise CircuitOpenError(msg)
            if state == "half-open":
                self.probing = True

    def record_success(self) -> None:
        """Close the circuit."""
        with self._lock:
            self.failures, self.opened_at, self.probing = 0, None, False

    def record_failure(self) -> None:
        """Count a failure; open (or re-open) the circuit when the limit is reached."""
        with self._lock:
            self.failures += 1
            if self.probing or self.failures >= self.fail_max:
                self.opened_at = self.clock()
            self.probing = False


class CircuitBreakers:
    """One breaker per tool; each counts only system failures (not user-fixable ones).

    ``pybreaker`` was the first choice, but it holds one lock for the whole guarded call,
    which serialized concurrent calls of a tool (eight 200 ms calls took 1.6 s).
    """

    def __init__(
        self, fail_max: int = 5, reset_timeout_s: float = 30.0, *, clock: Clock = time.monotonic
    ) -> None:
        """Open after ``fail_max`` consecutive failures; probe after ``reset_timeout_s``."""
        self.fail_max = fail_max
        self.reset_timeout_s = reset_timeout_s
        self.clock = clock
        self._breakers: dict[str, CircuitBreaker] = {}
        self._lock = threading.Lock()

    def get(self, tool: str) -> CircuitBreaker:
        """Return the breaker of ``tool``, creating it on first use."""
        with self._lock:
            breaker = self._breakers.get(tool)
            if breaker is None:
                breaker = CircuitBreaker(self.fail_max, self.reset_timeout_s, clock=self.clock)
                self._breakers[tool] = breaker
            return breaker

    def state(self, tool: str) -> str:
        """Return ``closed``, ``open`` or ``half-open``."""
        return self.get(tool).state

    def states(self) -> dict[str, str]:
        """Return the state of every breaker used so far, by tool."""
        with self._lock:
            breakers = list(self._breakers.items())
        return {tool: breaker.state for tool, breaker in breakers}


@dataclass(frozen=True)
class ExecutorSettings:
    """Retry and guard settings; the defaults suit interactive use."""

    max_attempts: int = 3
    """Attempts of an idempotent tool on transient failure (1 = no retry)."""
    backoff_initial_s: float = 0.2
    """First backoff; doubles each retry."""
    backoff_max_s: float = 2.0
    """Longest backoff."""
    backoff_jitter_s: float = 0.1
    """Random jitter added to each backoff."""
    guards: TaskGuards = field(default_factory=TaskGuards)
    """Per-task ceilings."""
