"""Real Redis servers for the tests: started on free loopback ports, stopped afterwards."""

from __future__ import annotations

import contextlib
import random
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError

from storage import redis_direct

UNIX_PATH_MAX = 100
"""A unix socket's path must be shorter than 108 bytes (``sun_path``); keep a margin."""


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def free_port(*, cluster: bool = False) -> int:
    """Return a free loopback port; a cluster node also needs port + 10000 (≤ 65535) free."""
    if not cluster:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            return sock.getsockname()[1]
    rng = random.Random()
    for _ in range(200):
        port = rng.randint(20000, 50000)
        if _bindable(port) and _bindable(port + 10000):
            return port
    msg = "no free port pair for a cluster node"
    raise RuntimeError(msg)


def redis_binary() -> str:
    path = shutil.which("redis-server") or (
        "/usr/bin/redis-server" if Path("/usr/bin/redis-server").exists() else None
    )
    if path is None:
        msg = (
            "redis-server is not installed; `make test` installs it (apt-get install redis-server)"
        )
        raise RuntimeError(msg)
    return path


class RedisServer:
    """One private redis-server process."""

    def __init__(
        self, workdir: Path, *, port: int | None = None, aof: bool = False, cluster: bool = False
    ) -> None:
        self.workdir = workdir
        self.port = port or free_port(cluster=cluster)
        self.aof = aof
        self.cluster = cluster
        self.proc: subprocess.Popen[bytes] | None = None
        workdir.mkdir(parents=True, exist_ok=True)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def unix_socket(self) -> Path:
        path = self.workdir / f"redis-{self.port}.sock"
        if len(str(path)) < UNIX_PATH_MAX:
            return path
        # a deep tmp_path (a long test name under a worker's directory) is too long for a
        # socket: redis-server would refuse to start
        return Path(tempfile.gettempdir()) / f"reach-redis-{self.port}.sock"

    def start(self) -> RedisServer:
        args = [
            redis_binary(),
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(self.workdir),
            "--save",
            "",
            "--protected-mode",
            "no",
            "--appendonly",
            "yes" if self.aof else "no",
            "--appendfsync",
            "always",
            "--unixsocket",
            str(self.unix_socket),
            "--unixsocketperm",
            "700",
        ]
        if self.cluster:
            args += [
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                f"nodes-{self.port}.conf",
                "--cluster-node-timeout",
                "2000",
            ]
        log = (self.workdir / f"redis-{self.port}.log").open("ab")
        self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        client = Redis(port=self.port, socket_connect_timeout=0.2)
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                if client.ping():
                    client.close()
                    return self
            except RedisConnectionError:
                time.sleep(0.05)  # polling a process start-up, not timing a test
        self.stop()
        tail = (self.workdir / f"redis-{self.port}.log").read_text(errors="replace")[-1000:]
        msg = f"redis-server did not start on port {self.port}:\n{tail}"
        raise RuntimeError(msg)

    def stop(self) -> None:
        if self.proc is None:
            return
        self._confirm_owed_writes()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def _confirm_owed_writes(self) -> None:
        """Read the replies savers still owe from this server before it goes.

        A write returns once sent (``storage.redis_direct``); one whose reply is still unread
        when the server stops would be confirmed at the interpreter's exit, against nothing,
        and logged as lost. Tests that kill the server on purpose do so without ``stop``.
        """
        for direct in list(redis_direct._LIVE):
            kwargs = direct.client.connection_pool.connection_kwargs
            if kwargs.get("port") == self.port or kwargs.get("path") == str(self.unix_socket):
                with contextlib.suppress(Exception):
                    direct.flush(timeout=1.0)

    def restart(self) -> None:
        self.stop()
        self.start()


class RedisClusterSet:
    """Three master nodes on loopback, joined into a Redis Cluster."""

    def __init__(self, workdir: Path) -> None:
        self.nodes = [RedisServer(workdir / f"node{i}", cluster=True) for i in range(3)]

    @property
    def url(self) -> str:
        return self.nodes[0].url

    def start(self) -> RedisClusterSet:
        for node in self.nodes:
            node.start()
        cli = shutil.which("redis-cli") or "/usr/bin/redis-cli"
        addresses = [f"127.0.0.1:{node.port}" for node in self.nodes]
        subprocess.run(
            [cli, "--cluster", "create", *addresses, "--cluster-replicas", "0", "--cluster-yes"],
            check=True,
            capture_output=True,
            timeout=60,
        )
        deadline = time.monotonic() + 30
        client = Redis(port=self.nodes[0].port)
        while time.monotonic() < deadline:
            info = client.execute_command("CLUSTER", "INFO")
            text = info.decode() if isinstance(info, bytes) else str(info)
            if "cluster_state:ok" in text:
                client.close()
                return self
            time.sleep(0.05)
        msg = "redis cluster did not reach cluster_state:ok"
        raise RuntimeError(msg)

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()
