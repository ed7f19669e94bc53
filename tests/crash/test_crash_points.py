"""The crash harness in the suite: every crash point of every scenario, killed and resumed.

``make crash`` prints the table; here each scenario is one test, so the workers share them.
A life is killed with SIGKILL at each node boundary and at the two points inside the
executor, and the next life resumes the thread: the side effect happens exactly once.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.crash.child import SCENARIOS_UNDER_TEST
from tests.crash.harness import Lives, run

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def lives() -> Iterator[Lives]:
    with Lives() as server:
        yield server


@pytest.mark.parametrize("scenario", list(SCENARIOS_UNDER_TEST))
def test_every_crash_point_leaves_exactly_one_side_effect(lives: Lives, scenario: str) -> None:
    outcomes = run(scenario, lives)
    points = [o.point for o in outcomes]
    assert "after_handler" in points and "after_record" in points
    assert sum(p.startswith("node:") for p in points) >= 2, points  # a clean run has nodes
    assert [o.point for o in outcomes if not o.killed] == []  # each life died where told
    assert [o.point for o in outcomes if o.duplicated] == []
    assert [o.point for o in outcomes if o.lost] == []
