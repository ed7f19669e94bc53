"""Start embedded graph workers (``graph_worker.py``) as real processes and talk to them."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


class Worker:
    """One ``tests.services.graph_worker`` process; commands in, JSON answers out."""

    def __init__(self, name: str, env: dict[str, str], *flags: str) -> None:
        self.name = name
        full = {**os.environ, **env, "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.services.graph_worker", *flags],
            cwd=ROOT,
            env=full,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr: list[str] = []
        threading.Thread(target=self._pump, daemon=True).start()
        threading.Thread(target=self._pump_err, daemon=True).start()
        assert self.next_line(120)["event"] == "ready", self.name

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _pump_err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._stderr.append(line)

    def next_line(self, timeout: float = 60) -> dict[str, Any]:
        """Return the next JSON line the worker printed."""
        while True:
            try:
                line = self._lines.get(timeout=timeout)
            except queue.Empty:
                msg = f"{self.name} said nothing in {timeout}s; stderr:\n{self.stderr()}"
                raise AssertionError(msg) from None
            if line is None:
                msg = f"{self.name} exited; stderr:\n{self.stderr()}"
                raise AssertionError(msg)
            if line.startswith("{"):
                return json.loads(line)

    def stderr(self) -> str:
        return "".join(self._stderr[-60:])

    def send(self, command: dict[str, Any]) -> None:
        """Send a command without waiting for its answer."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(command, ensure_ascii=False) + "\n")
        self.proc.stdin.flush()

    def ask(self, command: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
        """Send a command and return its answer."""
        self.send(command)
        return self.next_line(timeout)

    def say(self, thread: str, text: str, user: str = "u_10001") -> dict[str, Any]:
        return self.ask({"op": "say", "thread": thread, "text": text, "user": user})

    def resume(self, thread: str, value: str, user: str = "u_10001") -> dict[str, Any]:
        return self.ask({"op": "resume", "thread": thread, "value": value, "user": user})

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()
