"""``reach eval`` counts, per failure class, how often the reply named the true cause."""

from __future__ import annotations

from eval.backends import start_weather_server
from eval.case_set import load_cases
from eval.harness import run_case, summarize
from eval.truth import named, told_by_class, truth_rows, turn_cause
from tools.executor.pipeline import envelope


def test_a_turn_is_decided_by_its_failure_or_by_a_review_and_only_when_it_ran_a_tool():
    failed = envelope(tool="t", status="failed", error_type="system", request_id="r")
    held = envelope(tool="t", status="success", data={"status": "pending_review"}, request_id="r")
    assert turn_cause({"error": failed}, ["intent", "tool"]) == "unavailable"
    assert turn_cause({"error": None, "tool_results": [held]}, ["finance"]) == "pending_review"
    assert turn_cause({"error": failed}, ["intent", "clarify"]) is None  # no tool this turn


def test_a_reply_names_a_cause_by_its_words_and_a_refusal_by_naming_no_other():
    assert named("disabled", "抱歉，暂时无法查询天气：这项功能已停用，没有执行任何操作。", "zh")
    assert not named("disabled", "没有找到订单 OD-20240618-001。", "zh")
    assert named("refused", "订单 OD-20240618-002 当前为“已送达”状态，已无法取消。", "zh")
    assert not named("refused", "服务暂时不可用", "zh")


def test_counts_and_the_printed_rows():
    told = told_by_class([("unknown", True), ("unknown", False), ("timeout", True)])
    assert told == {"timeout": {"told": 1, "of": 1}, "unknown": {"told": 1, "of": 2}}
    rows = truth_rows(told)
    assert rows[-1] == ("all classes", "2 / 3", "66.7%")


def test_an_evaluation_run_records_the_cause_its_reply_named(tmp_path):
    server, url = start_weather_server()
    try:
        case = next(c for c in load_cases() if c.id == "bf-status-down")
        run = run_case(case, workdir=tmp_path, weather_url=url)
    finally:
        server.shutdown()
    assert run.told == [("unavailable", True)]
    assert summarize([run], 1)["told_by_class"] == {"unavailable": {"told": 1, "of": 1}}
