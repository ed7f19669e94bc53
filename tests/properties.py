"""How many examples a property test draws: all of them in ``make test``, a tenth in ``make check``.

``make check`` is the tier a change is checked against in a minute; it sets
``HYPOTHESIS_PROFILE=check``, and each property then draws a tenth of its examples (at least
``CHECK_FLOOR``), and one without a count of its own ``CHECK_FLOOR`` instead of Hypothesis's
100. ``make test`` and ``.ci/run`` draw every example the test asks for. The properties and
their assertions are the same in both; only how many inputs are tried differs.
"""

from __future__ import annotations

import os

from hypothesis import settings

CHECK_FLOOR = 20
"""The fewest examples a property draws in ``make check``."""

QUICK = os.environ.get("HYPOTHESIS_PROFILE") == "check"
"""Whether this run is ``make check``'s."""

settings.register_profile("check", max_examples=CHECK_FLOOR)
if QUICK:
    settings.load_profile("check")


def examples(n: int) -> int:
    """Return ``n``, or a tenth of it (at least ``CHECK_FLOOR``) in ``make check``."""
    return max(CHECK_FLOOR, n // 10) if QUICK else n


__all__ = ["CHECK_FLOOR", "QUICK", "examples"]
