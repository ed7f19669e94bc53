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

import json
import re
import sqlite3
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


class Lives:
    """Process lives, each forked from one ``python -m tests.crash.child --serve``.

    The server imports the agent once; every life is a fork of it that runs one phase and is
    killed with SIGKILL at its crash point, so a life costs its run, not a fresh
    interpreter's imports (seconds each, 65 lives for the five scenarios).
    """

    def __init__(self) -> None:
        self.proc = subprocess.Popen(  # noqa: S603 - our own interpreter and module
            [sys.executable, "-m", "tests.crash.child", "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        ready = self._answer()
        if not ready.get("ready"):
            raise RuntimeError(f"the crash-life server did not start: {ready}")

    def _answer(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the crash-life server exited ({self.proc.wait()})")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def life(self, data_dir: Path, scenario: str, phase: str, point: str) -> tuple[int, int]:
        """Run one process life; return (exit code, node updates it saw)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{data_dir} {scenario} {phase} {point}\n")
        self.proc.stdin.flush()
        done = self._answer()
        if done["code"] not in (0, -9):
            raise RuntimeError(f"{scenario}/{phase}/{point} failed:\n{done['stderr'][-3000:]}")
        found = re.search(r"updates=(\d+)", done["stdout"])
        return done["code"], int(found.group(1)) if found else 0

    def close(self) -> None:
        """Stop the server."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)

    def __enter__(self) -> Lives:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


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


def crash_points(lives: Lives, scenario: str) -> list[str]:
    """Every node boundary of a clean run, plus the two points inside the executor."""
    with tempfile.TemporaryDirectory() as folder:
        _, updates = lives.life(Path(folder), scenario, "run", "none")
    return [f"node:{k}" for k in range(1, updates + 1)] + ["after_handler", "after_record"]


def try_point(lives: Lives, scenario: str, point: str) -> Outcome:
    """Kill at ``point``, resume, count."""
    with tempfile.TemporaryDirectory() as folder:
        data_dir = Path(folder)
        code, _ = lives.life(data_dir, scenario, "run", point)
        lives.life(data_dir, scenario, "resume", "none")
        count, balance_ok = effects(data_dir, scenario)
    return Outcome(scenario, point, code == -9, count, balance_ok)


def run(scenario: str, lives: Lives) -> list[Outcome]:
    """Try every crash point of one scenario, printing a line for each."""
    outcomes = []
    for point in crash_points(lives, scenario):
        outcome = try_point(lives, scenario, point)
        outcomes.append(outcome)
        print(
            f"  {scenario:<12} {point:<14} killed={outcome.killed!s:<5} effects={outcome.effects}",
            flush=True,
        )
    return outcomes


def main(scenarios: list[str]) -> int:
    """Try every crash point of every scenario and print the table."""
    outcomes: list[Outcome] = []
    with Lives() as lives:
        for scenario in scenarios:
            outcomes.extend(run(scenario, lives))
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
