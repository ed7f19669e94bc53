"""Time, injectable: today's date for relative dates, and clocks for expiry and cool-downs.

Everything that expires or cools down (idempotency records, cached results, circuit
breakers, rate windows) reads a ``Clock`` given to it, ``time.time`` or ``time.monotonic``
by default, so a test moves time with ``FakeClock.advance`` instead of sleeping.
"""

from __future__ import annotations

import os
import threading
from datetime import date
from typing import Protocol

TODAY_ENV = "REACH_TODAY"


def today() -> date:
    """Return today, or ``REACH_TODAY`` (YYYY-MM-DD) when set."""
    fixed = os.environ.get(TODAY_ENV)
    return date.fromisoformat(fixed) if fixed else date.today()


class Clock(Protocol):
    """A source of seconds: ``time.time``, ``time.monotonic`` or a ``FakeClock``."""

    def __call__(self) -> float:
        """Return the current time in seconds."""
        ...


class FakeClock:
    """A clock that moves only when told to, for tests of expiry and cool-downs."""

    def __init__(self, start: float = 1_000_000.0) -> None:
        """Start at ``start`` seconds (far from zero, as real clocks are)."""
        self._now = start
        self._lock = threading.Lock()

    def __call__(self) -> float:
        """Return the current fake time."""
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        """Move time forward by ``seconds``."""
        if seconds < 0:
            msg = "a clock does not go backwards"
            raise ValueError(msg)
        with self._lock:
            self._now += seconds
