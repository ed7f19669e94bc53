"""The exit watchdog (``tests/exit_watchdog.py``): a thread that holds the exit fails the run."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HOLDS = """
import threading

def wait_for_an_answer_that_never_comes():
    threading.Event().wait()

def test_leaves_a_thread_behind():
    threading.Thread(target=wait_for_an_answer_that_never_comes).start()
"""


def run(tmp_path: Path, test: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run ``test`` (a test module's text) in a pytest of its own, with a 1 s grace."""
    (tmp_path / "test_it.py").write_text(test)
    env = {**os.environ, "REACH_TEST_EXIT_GRACE_S": "1", "PYTHONPATH": str(ROOT)}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"]
        + ["-p", "tests.exit_watchdog", "test_it.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done, time.monotonic() - started


def test_a_thread_holding_the_exit_fails_the_run_and_is_named(tmp_path):
    done, took = run(tmp_path, HOLDS)
    assert "1 passed" in done.stdout  # the test itself passed ...
    assert done.returncode == 1  # ... and the run fails, within the grace, not 60 s later
    assert took < 30
    assert "wait_for_an_answer_that_never_comes" in done.stderr  # the culprit, named


def test_a_run_that_exits_is_untouched(tmp_path):
    done, _ = run(tmp_path, "def test_fine():\n    pass\n")
    assert done.returncode == 0, done.stderr
    assert "Timeout" not in done.stderr
