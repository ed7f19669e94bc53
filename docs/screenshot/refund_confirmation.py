"""Take ``docs/refund-confirmation.png``: the refund confirmation in agent-chat-ui.

Starts our ``langgraph dev`` (auth on, a throw-away data directory), asks for a refund as
u_10001 the way agent-chat-ui would (content blocks, token as ``x-api-key``), serves a built
agent-chat-ui checkout with ``next start`` and photographs that thread with headless Chromium
(``shot.mjs``, playwright-core). The front-end's code is not part of this repository: build
it yourself (see ``docs/screenshot/README.md``) and pass its folder with ``--ui``.

    uv run python docs/screenshot/refund_confirmation.py --ui /tmp/agent-chat-ui
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from langgraph_sdk import get_sync_client  # noqa: E402

from config.settings import Settings  # noqa: E402
from security.tokens import issue_token  # noqa: E402
from tests.services.langgraph_server import TEST_AUTH_SECRET  # noqa: E402
from tests.services.redis_servers import free_port  # noqa: E402

HERE = Path(__file__).resolve().parent
REQUEST = "订单 OD-20240618-002 送到了但是洒了，我要退款"


@contextmanager
def langgraph_dev(data_dir: Path, *, wait_s: float = 600) -> Iterator[str]:
    """Run our ``langgraph dev`` (auth on, keyed with ``TEST_AUTH_SECRET``); yield its URL.

    Like ``tests.services.langgraph_server`` but patient: on a loaded machine the server can
    take minutes to import the graph.
    """
    data_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    env = {
        **os.environ,
        "REACH_DATA_DIR": str(data_dir),
        "REACH_AUTH_SECRET": TEST_AUTH_SECRET,
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    }
    langgraph = Path(sys.executable).parent / "langgraph"
    command = [str(langgraph), "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1"]
    with (data_dir / "dev.log").open("w") as log:
        proc = subprocess.Popen(
            [*command, "--port", str(port)], cwd=ROOT, env=env, stdout=log, stderr=log
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + wait_s
            while not _answers(f"{url}/ok"):
                if proc.poll() is not None or time.monotonic() > deadline:
                    sys.exit(f"langgraph dev did not start; see {data_dir / 'dev.log'}")
                time.sleep(0.5)  # waiting for a process to come up
            yield url
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code < 500
    except httpx.HTTPError:
        return False


def start_thread(api_url: str, token: str) -> str:
    """Ask for the refund as agent-chat-ui sends it; return the thread, now paused."""
    client = get_sync_client(url=api_url, api_key=token)
    thread_id = client.threads.create()["thread_id"]
    message = {"type": "human", "content": [{"type": "text", "text": REQUEST}]}
    client.runs.wait(thread_id, "agent", input={"messages": [message]})
    state = client.threads.get_state(thread_id)
    if not state.get("interrupts"):
        sys.exit(f"the thread did not pause for a confirmation: {state['values']}")
    return thread_id


def serve_ui(ui: Path, port: int) -> subprocess.Popen[bytes]:
    """Run the built front-end (``next start``) on ``port``; wait until it answers."""
    next_bin = ui / "node_modules" / ".bin" / "next"
    env = {**os.environ, "NEXT_TELEMETRY_DISABLED": "1"}
    proc = subprocess.Popen(
        [str(next_bin), "start", "-p", str(port), "-H", "127.0.0.1"],
        cwd=ui,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit("next start exited; was the front-end built (next build)?")
        if _answers(f"http://127.0.0.1:{port}/"):
            return proc
        time.sleep(0.5)  # waiting for a process to come up
    proc.terminate()
    sys.exit("next start did not answer within 300 s")


def main() -> None:
    """Parse arguments, run both servers, take the picture."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--ui", type=Path, help="a built agent-chat-ui checkout")
    source.add_argument(
        "--fallback",
        action="store_true",
        help="no agent-chat-ui: draw a minimal SDK page instead (fallback.mjs), labelled as such",
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    settings = Settings(REACH_AUTH_SECRET=TEST_AUTH_SECRET)
    token = issue_token("u_10001", "customer", 3600, settings=settings)
    with tempfile.TemporaryDirectory() as tmp, langgraph_dev(Path(tmp) / "data") as api_url:
        thread_id = start_thread(api_url, token)
        if args.fallback:
            out = args.out or ROOT / "docs" / "refund-confirmation-minimal-page.png"
            subprocess.run(
                ["node", str(HERE / "fallback.mjs"), api_url, thread_id, token, str(out)],
                cwd=HERE,
                check=True,
            )
            return
        args.out = args.out or ROOT / "docs" / "refund-confirmation.png"
        ui = serve_ui(args.ui.resolve(), free_port())
        try:
            ui_url = f"http://127.0.0.1:{ui.args[3]}/"  # type: ignore[index]
            subprocess.run(
                ["node", str(HERE / "shot.mjs"), ui_url, api_url, thread_id, token, str(args.out)],
                cwd=HERE,
                check=True,
            )
        finally:
            ui.terminate()
            ui.wait(timeout=20)


if __name__ == "__main__":
    main()
