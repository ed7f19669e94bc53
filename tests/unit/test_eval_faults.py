"""The fault injector: seeded, reproducible, and never mutating the shared cards."""

from __future__ import annotations

from eval.faults import FaultInjector
from tests.helpers import default_registry


def draws(injector: FaultInjector, n: int = 200) -> list[str | None]:
    return [injector.draw("query_order_status") for _ in range(n)]


def test_same_seed_same_faults_and_rate_roughly_holds():
    first = draws(FaultInjector(rate=0.2, seed=3, case="c", trial=1))
    again = draws(FaultInjector(rate=0.2, seed=3, case="c", trial=1))
    other = draws(FaultInjector(rate=0.2, seed=3, case="c", trial=2))
    assert first == again and first != other
    share = sum(d is not None for d in first) / len(first)
    assert 0.1 < share < 0.3


def test_wrapping_copies_the_cards():
    registry = default_registry()
    original = registry.get("urge_delivery")
    wrapped = FaultInjector(rate=0.5, seed=1).wrap(registry)
    assert registry.get("urge_delivery") is original
    assert wrapped.get("urge_delivery").handler is not original.handler
    assert wrapped.get("urge_delivery").timeout_s <= 0.3


def test_pinned_fault_applies_to_every_call():
    injector = FaultInjector(pinned={"query_weather": "down"})
    assert [injector.draw("query_weather") for _ in range(3)] == ["down"] * 3
    assert injector.draw("query_order_status") is None
