"""Kill the agent at every crash point, restart it, and count side effects.

``uv run python -m tests.crash.harness [scenario ...]`` prints the table: crash points tried,
duplicated side effects, lost actions (a confirmed action that never happened). For each
scenario a clean run counts the node boundaries; then, for every boundary and the two
points inside the executor, a fresh data directory, a first life killed with SIGKILL at that
point, and a second life that resumes the thread (re-sending the text when nothing was
saved or when the resumed run asks for a slot again, confirming whatever is still waiting).
Exactly one side effect must exist.
"""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.crash.child import SCENARIOS_UNDER_TEST

EFFECTS = {
    "urge": "SELECT COUNT(*) FROM delivery_urges WHERE order_id = 'OD-20240618-001'",
    "refund": "SELECT COUNT(*) FROM refunds WHERE order_id = 'OD-20240618-002'",
    "cancel_order": "SELECT COUNT(*) FROM business_writes WHERE tool = 'cancel_order'",
    "transfer": "SELECT COUNT(*) FROM transfers WHERE status = 'completed'",
    "appointment": "SELECT COUNT(*) FROM appointments",
}
"""How many times the scenario's side effect happened."""
MONEY = "SELECT balance_cents FROM accounts WHERE account_id = 'ACC-1001'"


@dataclass
class Outcome:
    """One crash point of one scenario."""

    scenario: str
    point: str
    killed: bool
    effects: int
    balance_ok: bool

    @property
    def duplicated(self) -> bool:
        """The side effect happened more than once (or money moved twice)."""
        return self.effects > 1 or not self.balance_ok

    @property
    def lost(self) -> bool:
        """The confirmed action never happened."""
        return self.effects == 0


def life(data_dir: Path, scenario: str, phase: str, point: str) -> tuple[int, int]:
    """Run one process life; return (exit code, node updates it saw)."""
    done = subprocess.run(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-m", "tests.crash.child", str(data_dir), scenario, phase, point],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode not in (0, -9):
        raise RuntimeError(f"{scenario}/{phase}/{point} failed:\n{done.stderr[-3000:]}")
    found = re.search(r"updates=(\d+)", done.stdout)
    return done.returncode, int(found.group(1)) if found else 0


def effects(data_dir: Path, scenario: str) -> tuple[int, bool]:
    """Count the side effect; check the payer's balance moved at most once."""
    conn = sqlite3.connect(data_dir / "business.db")
    try:
        count = int(conn.execute(EFFECTS[scenario]).fetchone()[0])
        balance = int(conn.execute(MONEY).fetchone()[0])
    finally:
        conn.close()
    moved = 500_000 - balance
    return count, moved in (0, 50_000) if scenario == "transfer" else moved == 0


def crash_points(scenario: str) -> list[str]:
    """Every node boundary of a clean run, plus the two points inside the executor."""
    with tempfile.TemporaryDirectory() as folder:
        _, updates = life(Path(folder), scenario, "run", "none")
    return [f"node:{k}" for k in range(1, updates + 1)] + ["after_handler", "after_record"]


def try_point(scenario: str, point: str) -> Outcome:
    """Kill at ``point``, resume, count."""
    with tempfile.TemporaryDirectory() as folder:
        data_dir = Path(folder)
        code, _ = life(data_dir, scenario, "run", point)
        life(data_dir, scenario, "resume", "none")
        count, balance_ok = effects(data_dir, scenario)
    return Outcome(scenario, point, code == -9, count, balance_ok)


def main(scenarios: list[str]) -> int:
    """Try every crash point of every scenario and print the table."""
    outcomes: list[Outcome] = []
    for scenario in scenarios:
        for point in crash_points(scenario):
            outcome = try_point(scenario, point)
            outcomes.append(outcome)
            print(
                f"  {scenario:<12} {point:<14} killed={outcome.killed!s:<5} "
                f"effects={outcome.effects}",
                flush=True,
            )
    print(f"{'scenario':<12}  points  killed  duplicates  lost")
    for scenario in scenarios:
        rows = [o for o in outcomes if o.scenario == scenario]
        print(
            f"{scenario:<12}  {len(rows):>6}  {sum(o.killed for o in rows):>6}  "
            f"{sum(o.duplicated for o in rows):>10}  {sum(o.lost for o in rows):>4}"
        )
    bad = [o for o in outcomes if o.duplicated or o.lost]
    print(
        f"{'total':<12}  {len(outcomes):>6}  {sum(o.killed for o in outcomes):>6}  "
        f"{sum(o.duplicated for o in outcomes):>10}  {sum(o.lost for o in outcomes):>4}"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or list(SCENARIOS_UNDER_TEST)))
