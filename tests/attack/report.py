"""Print attempts and breaches per attack category: ``uv run python -m tests.attack.report``.

Exits non-zero when any attack got through, so ``make attack`` can run it after the tests.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from tests.attack.corpus import CATEGORIES, attempts
from tests.helpers import open_database


def main() -> int:
    """Run the whole corpus and print the table, with every breach listed under it."""
    breaches: list[str] = []
    rows: list[tuple[str, int, int]] = []
    with tempfile.TemporaryDirectory() as folder:
        db = open_database(Path(folder) / "business.db")
        for category in CATEGORIES:
            tried = failed = 0
            for label, breach in attempts(category, db):
                tried += 1
                if breach is not None:
                    failed += 1
                    breaches.append(f"{category.name}: {label!r}: {breach}")
            rows.append((category.name, tried, failed))
        db.close()
    width = max(len(name) for name, _, _ in rows)
    print(f"{'category':<{width}}  attempts  breaches")
    for name, tried, failed in rows:
        print(f"{name:<{width}}  {tried:>8}  {failed:>8}")
    total_tried = sum(tried for _, tried, _ in rows)
    total_failed = sum(failed for _, _, failed in rows)
    print(f"{'total':<{width}}  {total_tried:>8}  {total_failed:>8}")
    for line in breaches:
        print("BREACH", line)
    return 1 if total_failed else 0


if __name__ == "__main__":
    sys.exit(main())
