"""A pytest plugin: a run whose process does not exit soon after its tests fails, loudly.

After the last test, the interpreter's exit joins every non-daemon thread. A thread that waits
for something that will never come (once: a τ² tool call whose conversation had ended, waiting
its 900 s timeout) holds the exit, and CI sat idle for 15 minutes after "5 passed" with nothing
in the log to say why. Here, when pytest is done, a watchdog in C (``faulthandler``) is armed:
if the process is still alive ``REACH_TEST_EXIT_GRACE_S`` seconds later (default 60), it writes
every thread's stack to stderr and exits with status 1, so the run fails and names the thread.
Loaded for every run by ``addopts`` in ``pyproject.toml``.
"""

from __future__ import annotations

import faulthandler
import os
import sys

import pytest

DEFAULT_GRACE_S = 60.0


@pytest.hookimpl(trylast=True)
def pytest_unconfigure() -> None:
    """Arm the watchdog as the last thing pytest does; the exit disarms it by ending."""
    grace = float(os.environ.get("REACH_TEST_EXIT_GRACE_S", DEFAULT_GRACE_S))
    if grace <= 0:
        return
    stream = sys.__stderr__
    if stream is None:
        return
    faulthandler.dump_traceback_later(grace, exit=True, file=stream)
