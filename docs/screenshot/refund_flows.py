"""Run the refund confirmation through agent-chat-ui four ways and check what a person sees.

Starts our ``langgraph dev`` (auth on, a throw-away data directory) and a built agent-chat-ui
(``next start``); ``flows.mjs`` drives headless Chromium: Approve, a typed 确认, a typed
correction, Reject, each on a thread of its own, photographed into ``docs/``. Then it checks,
per flow, the thread's stored messages and the confirmation questions: no tool name, no
``key=value``, no ``None``, no cents, no "Successfully handled tool call." stored, no tool
message sent by the page, and the business database (one refund, or none).

    uv run python docs/screenshot/refund_flows.py --ui /tmp/agent-chat-ui
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from refund_confirmation import ROOT, langgraph_dev, serve_ui  # noqa: E402

from config.settings import Settings  # noqa: E402
from security.tokens import issue_token  # noqa: E402
from tests.services.langgraph_server import TEST_AUTH_SECRET  # noqa: E402
from tests.services.redis_servers import free_port  # noqa: E402

STAND_IN = "Successfully handled tool call."
INTERNAL = re.compile(
    r"request_refund|order_id|amount_cents|\w+=\S|\bNone\b|cents|用户申请退款|submitted"
)
"""What no question or reply a person reads may hold."""
EXPECTED_REFUNDS = {"approve": 1, "typed_yes": 1, "typed_correction": 0, "reject": 0}


def _read(value: dict[str, Any]) -> list[str]:
    out = [str(value.get("question", ""))]
    for action in value.get("action_requests") or []:
        out += [str(action.get("name")), str(action.get("description", ""))]
        out += [f"{k} {v}" for k, v in (action.get("args") or {}).items()]
    return out


def check(flow: dict[str, Any], refunds: int) -> list[str]:
    """What went wrong in one flow (empty: it passed)."""
    problems: list[str] = []
    name = flow["flow"]
    for message in flow["messages"]:
        text = json.dumps(message.get("content"), ensure_ascii=False)
        if STAND_IN in text or str(message.get("id", "")).startswith("do-not-render-"):
            problems.append(f"a stand-in tool result is stored: {message.get('id')}")
        if message["type"] == "ai" and INTERNAL.search(text):
            problems.append(f"the agent said internals: {text[:120]}")
    for interrupt in flow["interrupts"]:
        problems += [f"the card says internals: {t}" for t in _read(interrupt["value"])
                     if INTERNAL.search(t)]  # fmt: skip
    for body in flow["sent"]:
        sent = (body or {}).get("input") or {}
        if any(m.get("type") == "tool" for m in sent.get("messages") or []):
            problems.append("the page sent a tool message (it was dropped at intake)")
    if refunds != EXPECTED_REFUNDS[name]:
        problems.append(f"{refunds} refund(s), expected {EXPECTED_REFUNDS[name]}")
    return problems


def main() -> None:
    """Run both servers and the four flows; print what each showed and whether it passed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ui", type=Path, required=True, help="a built agent-chat-ui checkout")
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    args = parser.parse_args()
    token = issue_token(
        "u_10001", "customer", 3600, settings=Settings(REACH_AUTH_SECRET=TEST_AUTH_SECRET)
    )
    failed = False
    with tempfile.TemporaryDirectory() as tmp, langgraph_dev(Path(tmp) / "data") as api_url:
        database = Path(tmp) / "data" / "business.db"
        ui = serve_ui(args.ui.resolve(), free_port())
        try:
            ui_url = f"http://127.0.0.1:{ui.args[3]}/"  # type: ignore[index]
            for name in EXPECTED_REFUNDS:
                done = subprocess.run(
                    ["node", str(HERE / "flows.mjs"), ui_url, api_url, token, str(args.out), name],
                    cwd=HERE,
                    check=True,
                    capture_output=True,
                    text=True,
                )
                (flow,) = [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]
                with sqlite3.connect(database) as conn:
                    refunds = conn.execute("SELECT COUNT(*) FROM refunds").fetchone()[0]
                    conn.execute("DELETE FROM refunds")  # the next flow starts with none
                problems = check(flow, refunds)
                failed |= bool(problems)
                verdict = "ok" if not problems else "FAILED"
                print(f"== {name}: {verdict} (thread {flow['thread_id']})")
                for body in flow["sent"]:
                    print(f"   page sent: {json.dumps(body, ensure_ascii=False)[:200]}")
                for message in flow["messages"][-4:]:
                    content = json.dumps(message.get("content"), ensure_ascii=False)[:150]
                    print(f"   stored {message['type']}: {content}")
                for problem in problems:
                    print(f"   problem: {problem}")
        finally:
            ui.terminate()
            ui.wait(timeout=20)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
