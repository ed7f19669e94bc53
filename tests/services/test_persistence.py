from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]

TURN = textwrap.dedent(
    """
    import sys
    from graph.builder import build_graph
    from graph.checkpoint import make_checkpointer
    from state import Context

    app = build_graph(checkpointer=make_checkpointer("sqlite"))
    out = app.invoke(
        {"messages": [("user", sys.argv[1])]},
        {"configurable": {"thread_id": "restart-thread"}},
        context=Context(user_id="u_10001", user_role="customer"),
    )
    print(out["messages"][-1].content)
    print("MESSAGES", len(out["messages"]))
    """
)


def run_turn(text: str, data_dir: Path) -> str:
    env = {**os.environ, "REACH_DATA_DIR": str(data_dir)}
    done = subprocess.run(
        [sys.executable, "-c", TURN, text],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout


def test_state_survives_a_process_restart_with_the_sqlite_saver(tmp_path):
    first = run_turn("我的订单怎么还没到？", tmp_path)
    assert "订单号" in first
    second = run_turn("OD-20240618-001", tmp_path)  # a new process, same data directory
    assert "配送中" in second and "15 分钟" in second
    assert "MESSAGES 6" in second  # both turns are in the thread
    assert (tmp_path / "checkpoints.db").exists()
    assert (tmp_path / "business.db").exists()


def reach(*args: str, data_dir=None, stdin: str | None = None, check: bool = True):
    """Run the ``reach`` console script as a user would, in its own process."""
    env = {**os.environ, "COLUMNS": "200"}
    if data_dir is not None:
        env["REACH_DATA_DIR"] = str(data_dir)
    return subprocess.run(
        [str(Path(sys.executable).parent / "reach"), *args],
        input=stdin,
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=check,
    )


def test_reach_chat_resumes_a_thread_after_restart(tmp_path):
    chat = ("chat", "--thread", "cli-1", "--user", "u_10001")
    first = reach(*chat, data_dir=tmp_path, stdin="我的订单怎么还没到？\n/quit\n")
    assert "订单号" in first.stdout
    second = reach(*chat, data_dir=tmp_path, stdin="OD-20240618-001\n")
    assert "resuming thread cli-1" in second.stdout
    assert "配送中" in second.stdout


def test_reach_demo_runs_on_embedded_defaults(tmp_path):
    out = reach("demo", "--data-dir", str(tmp_path)).stdout
    for node in (
        "[intent]",
        "[slot_filling]",
        "[tool]",
        "[reply]",
        "[clarify]",
        "[reflect_refine]",
        "[finance]",
        "[appointment]",
    ):
        assert node in out
    assert "配送中" in out and "15 分钟" in out
    assert "北京现在晴" in out  # weather, from the demo's local weather API
    assert "2024年6月销售额最高的产品是「蓝牙耳机」" in out  # sales, on the design's June 2024
    assert "FL-20240621001" in out and "预约成功" in out and "已转交财务处理" in out


def test_reach_demo_starts_from_the_seeded_world_every_time(tmp_path):
    # the first run books the clinic's only dermatology slot; the second still can
    for _ in range(2):
        out = reach("demo", "--scenario", "appointment", data_dir=tmp_path).stdout
        assert "预约成功：2024-06-20 15:00 皮肤科赵医生" in out
        assert f"demo data: {tmp_path / 'demo'}" in out.replace("\n", "")
    booked = sqlite3.connect(tmp_path / "demo" / "business.db")
    assert booked.execute("SELECT count(*) FROM appointments").fetchone() == (1,)
    own = tmp_path / "business.db"  # the user's own world is left alone
    if own.exists():
        assert sqlite3.connect(own).execute("SELECT count(*) FROM appointments").fetchone() == (0,)


def test_reach_demo_runs_one_scenario_and_refuses_an_unknown_one(tmp_path):
    one = reach("demo", "--scenario", "weather", "--data-dir", str(tmp_path))
    assert "杭州现在小雨" in one.stdout and "配送中" not in one.stdout
    bad = reach("demo", "--scenario", "nope", check=False)
    assert bad.returncode == 2 and "unknown scenario" in bad.stdout


def test_reach_chat_asks_before_a_refund_and_the_next_message_answers(tmp_path):
    chat = ("chat", "--thread", "refund", "--user", "u_10001")
    asked = reach(*chat, data_dir=tmp_path, stdin="我要退款 OD-20240618-002\n")
    assert "请确认是否继续" in asked.stdout
    done = reach(*chat, data_dir=tmp_path, stdin="确认\n")
    assert "提交退款申请" in done.stdout
    audit = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert any(r.get("tool") == "request_refund" and r.get("status") == "success" for r in audit)
