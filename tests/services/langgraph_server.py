"""A real ``langgraph dev`` for tests: started on a free port, stopped afterwards."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.services.redis_servers import free_port

ROOT = Path(__file__).resolve().parents[2]
TEST_AUTH_SECRET = "test-secret-for-langgraph-dev-0123456789abcdef"
"""The key the test server verifies tokens with (tests sign with it too)."""


def served_config(data_dir: Path) -> Path:
    """Write the repository's ``langgraph.json`` into ``data_dir`` with absolute paths.

    ``langgraph dev`` keeps its threads, runs and store in ``.langgraph_api/`` under its
    working directory; each test server runs in its own ``data_dir`` so that servers running
    at once (one per pytest worker) never share, and none reads an earlier run's files.
    """
    config = json.loads((ROOT / "langgraph.json").read_text())

    def absolute(spec: str) -> str:
        return str(ROOT / spec) if spec.startswith("./") else spec

    config["dependencies"] = [str(ROOT / dep) for dep in config.get("dependencies", [])]
    config["graphs"] = {name: absolute(spec) for name, spec in config["graphs"].items()}
    for section in ("auth", "http"):
        for key in ("path", "app"):
            if key in config.get(section, {}):
                config[section][key] = absolute(config[section][key])
    path = data_dir / "langgraph.json"
    path.write_text(json.dumps(config, indent=2))
    return path


@contextmanager
def langgraph_dev(data_dir: Path, **env: str) -> Iterator[str]:
    """Run ``langgraph dev`` on the repository's graph in ``data_dir``; yield its URL.

    Its data (``REACH_DATA_DIR``) and the server's own files (``.langgraph_api/``) are in
    ``data_dir``. Auth is on (``langgraph.json``), keyed with ``TEST_AUTH_SECRET`` unless
    ``env`` says otherwise. Readiness is polled on ``/ok``, which needs no token.
    """
    data_dir.mkdir(parents=True, exist_ok=True)
    config = served_config(data_dir)
    port = free_port()
    langgraph = Path(sys.executable).parent / "langgraph"
    environment = {
        **os.environ,
        "REACH_DATA_DIR": str(data_dir),
        "REACH_AUTH_SECRET": TEST_AUTH_SECRET,
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        **env,
    }
    log_path = data_dir / "dev.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [
                str(langgraph),
                "dev",
                "--no-browser",
                "--no-reload",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--config",
                str(config),
            ],
            cwd=data_dir,
            env=environment,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                if proc.poll() is not None:
                    pytest.fail(f"langgraph dev exited: {log_path.read_text()[-2000:]}")
                try:
                    if httpx.get(f"{url}/ok", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                time.sleep(0.1)  # polling a process start-up, not timing a test
            else:
                pytest.fail(
                    f"langgraph dev did not start within 120 s: {log_path.read_text()[-2000:]}"
                )
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
