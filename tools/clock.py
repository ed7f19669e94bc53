"""Today's date, overridable so that relative dates ("上月", "明天") are testable."""

from __future__ import annotations

import os
from datetime import date

TODAY_ENV = "REACH_TODAY"


def today() -> date:
    """Return today, or ``REACH_TODAY`` (YYYY-MM-DD) when set."""
    fixed = os.environ.get(TODAY_ENV)
    return date.fromisoformat(fixed) if fixed else date.today()
