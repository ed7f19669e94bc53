from __future__ import annotations

import os
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


def test_reach_chat_resumes_a_thread_after_restart(tmp_path):
    reach = Path(sys.executable).parent / "reach"
    env = {**os.environ, "REACH_DATA_DIR": str(tmp_path), "COLUMNS": "200"}
    args = [str(reach), "chat", "--thread", "cli-1", "--user", "u_10001"]
    first = subprocess.run(
        args,
        input="我的订单怎么还没到？\n/quit\n",
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "订单号" in first.stdout
    second = subprocess.run(
        args,
        input="OD-20240618-001\n",
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "resuming thread cli-1" in second.stdout
    assert "配送中" in second.stdout


def test_reach_demo_runs_on_embedded_defaults(tmp_path):
    reach = Path(sys.executable).parent / "reach"
    env = {**os.environ, "COLUMNS": "200"}
    done = subprocess.run(
        [str(reach), "demo", "--data-dir", str(tmp_path)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    out = done.stdout
    for node in (
        "[intent]",
        "[slot_filling]",
        "[tool]",
        "[reply]",
        "[clarify]",
        "[reflect_refine]",
    ):
        assert node in out
    assert "配送中" in out and "15 分钟" in out
    assert "北京现在晴" in out  # weather, from the demo's local weather API
    assert "2024年6月销售额最高的产品是「蓝牙耳机」" in out  # sales, on the design's June 2024


def test_reach_demo_runs_one_scenario_and_refuses_an_unknown_one(tmp_path):
    reach = Path(sys.executable).parent / "reach"
    env = {**os.environ, "COLUMNS": "200"}
    one = subprocess.run(
        [str(reach), "demo", "--scenario", "weather", "--data-dir", str(tmp_path)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "杭州现在小雨" in one.stdout and "配送中" not in one.stdout
    bad = subprocess.run(
        [str(reach), "demo", "--scenario", "nope"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and "unknown scenario" in bad.stdout


def test_reach_chat_asks_before_a_refund_and_the_next_message_answers(tmp_path):
    reach = Path(sys.executable).parent / "reach"
    env = {**os.environ, "REACH_DATA_DIR": str(tmp_path), "COLUMNS": "200"}
    args = [str(reach), "chat", "--thread", "refund", "--user", "u_10001"]
    asked = subprocess.run(
        args,
        input="我要退款 OD-20240618-002\n",
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "请确认是否继续" in asked.stdout
    done = subprocess.run(
        args,
        input="确认\n",
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "提交退款申请" in done.stdout
    audit = (tmp_path / "audit.jsonl").read_text()
    assert '"tool": "request_refund"' in audit and '"status": "success"' in audit
