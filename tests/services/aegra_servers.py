"""A private PostgreSQL cluster and Aegra replicas, started for the served-replica tests.

PostgreSQL comes from Debian (``apt-get install -y postgresql`` when missing and we are root);
the cluster is private (``initdb`` into a temporary directory, its own port, trust auth on
loopback) and runs as the ``postgres`` user when the tests run as root (``initdb`` refuses
root). Aegra serves the project's graph and auth; each replica is a uvicorn process, started
one after another because concurrent starts race on Aegra's migrations.

Aegra 0.11 needs Python 3.12 and the project runs on 3.11, so the replicas run from their own
environment, ``.venv-aegra`` (``make aegra-env``: the project and the ``aegra`` group, synced
from the same ``uv.lock`` on Python 3.12+), or the interpreter ``REACH_AEGRA_PYTHON`` names;
the tests talk to them over HTTP from the project's environment.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from tests.services.redis_servers import free_port

ROOT = Path(__file__).resolve().parents[2]


class Unavailable(RuntimeError):
    """PostgreSQL or Aegra cannot be had here; the tests skip with this message."""


def postgres_bin() -> Path:
    """Return PostgreSQL's bin directory, installing the Debian package if it is missing."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if not found and os.geteuid() == 0 and shutil.which("apt-get"):
        subprocess.run(
            ["apt-get", "install", "-y", "-q", "postgresql"],
            check=False,
            capture_output=True,
            timeout=900,
            env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
        )
        found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if not found:
        msg = "PostgreSQL is not installed and could not be (needs root and apt-get postgresql)"
        raise Unavailable(msg)
    return found[-1].parent


def _as_postgres(args: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return args
    runner = shutil.which("runuser")
    if runner is None:
        msg = "running as root without runuser: cannot start PostgreSQL as the postgres user"
        raise Unavailable(msg)
    return [runner, "-u", "postgres", "--", *args]


class Postgres:
    """One private PostgreSQL cluster with a database ``aegra``."""

    def __init__(self, workdir: Path) -> None:
        self.bin = postgres_bin()
        if os.geteuid() == 0:
            # the postgres user cannot enter pytest's root-only temp tree: use a fresh dir
            workdir = Path(tempfile.mkdtemp(prefix="reach-pg-"))
        self.workdir = workdir
        self.port = free_port()
        self.data = workdir / "data"

    @property
    def url(self) -> str:
        return f"postgresql://postgres:postgres@127.0.0.1:{self.port}/aegra"

    def start(self) -> Postgres:
        self.workdir.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            shutil.chown(self.workdir, "postgres")
        run = {"check": True, "capture_output": True, "timeout": 300}
        subprocess.run(
            _as_postgres(
                [str(self.bin / "initdb"), "-D", str(self.data), "--auth=trust", "-U", "postgres"]
            ),
            **run,  # type: ignore[call-overload]
        )
        options = f"-p {self.port} -k {self.workdir} -c listen_addresses=127.0.0.1"
        subprocess.run(
            _as_postgres(
                [
                    str(self.bin / "pg_ctl"),
                    "-D",
                    str(self.data),
                    "-o",
                    options,
                    "-l",
                    str(self.workdir / "log"),
                    "-w",
                    "start",
                ]
            ),
            **run,  # type: ignore[call-overload]
        )
        psql = [str(self.bin / "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres"]
        subprocess.run([*psql, "-c", "CREATE DATABASE aegra"], **run)  # type: ignore[call-overload]
        return self

    def dump(self) -> bytes:
        """Return every row of every table (``pg_dump --data-only``; bytea shows as hex)."""
        return subprocess.run(
            [
                str(self.bin / "pg_dump"),
                "--data-only",
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-U",
                "postgres",
                "aegra",
            ],
            check=True,
            capture_output=True,
            timeout=120,
        ).stdout

    def stop(self) -> None:
        subprocess.run(
            _as_postgres([str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "stop"]),
            check=False,
            capture_output=True,
            timeout=120,
        )
        if os.geteuid() == 0:
            shutil.rmtree(self.workdir, ignore_errors=True)


def aegra_config(workdir: Path) -> Path:
    """Return the config Aegra serves: the project's ``langgraph.json``, unchanged.

    Aegra resolves the graph, auth and ``http.app`` paths against the config file's
    directory, and ``graph/http_app.py`` is a FastAPI app when FastAPI is installed (the
    ``aegra`` group installs it; Aegra 0.6.0 and 0.11 refuse any other app). ``workdir`` is
    unused: kept so callers need not change.
    """
    return ROOT / "langgraph.json"


def aegra_python() -> str:
    """Return the interpreter of Aegra's environment, checked to import ``aegra_api``."""
    python = os.environ.get("REACH_AEGRA_PYTHON") or str(ROOT / ".venv-aegra" / "bin" / "python")
    if not Path(python).exists():
        msg = f"Aegra's environment is missing ({python}): make aegra-env (Python 3.12+)"
        raise Unavailable(msg)
    found = subprocess.run(
        [python, "-c", "import aegra_api, importlib.metadata as m; print(m.version('aegra-api'))"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if found.returncode != 0:
        msg = f"Aegra is not installed in {python}: make aegra-env\n{found.stderr[-1000:]}"
        raise Unavailable(msg)
    return python


@contextlib.contextmanager
def aegra_replicas(workdir: Path, env: dict[str, str], count: int = 2) -> Iterator[list[str]]:
    """Start ``count`` Aegra replicas one after another; yield their base URLs."""
    python = aegra_python()
    config = aegra_config(workdir)
    procs: list[subprocess.Popen[bytes]] = []
    urls: list[str] = []
    try:
        for index in range(count):
            port = free_port()
            log = (workdir / f"aegra-{index}.log").open("ab")
            full = {**os.environ, **env, "AEGRA_CONFIG": str(config), "PYTHONPATH": str(ROOT)}
            procs.append(
                subprocess.Popen(
                    [
                        python,
                        "-m",
                        "uvicorn",
                        "aegra_api.main:app",
                        "--host",
                        "127.0.0.1",
                        "--port",
                        str(port),
                    ],
                    cwd=workdir,
                    env=full,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
            )
            url = f"http://127.0.0.1:{port}"
            _wait_up(url, procs[-1], workdir / f"aegra-{index}.log")  # migrations: one at a time
            urls.append(url)
        yield urls
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()


def _wait_up(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            msg = f"Aegra exited ({proc.returncode}):\n{log.read_text(errors='replace')[-3000:]}"
            raise RuntimeError(msg)
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{url}/info", timeout=2).status_code == 200:
                return
        time.sleep(0.1)  # polling a process start-up, not timing a test
    msg = f"Aegra did not come up at {url}"
    raise RuntimeError(msg)
