from __future__ import annotations

import dataclasses
from datetime import date
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.tools_cmd import tools_app
from config.settings import get_settings
from observability.audit import AuditLog
from storage.kv import SQLiteKV
from tests.helpers import default_registry
from tools.executor.failures import classify
from tools.executor.pipeline import ActionExecutor
from tools.registry.cards import ToolRegistry
from tools.registry.context import ToolContext
from tools.registry.lifecycle import (
    ToolLifecycle,
    TransitionRefusedError,
    read_audit_records,
    tool_coverage,
)


class Today:
    def __init__(self, day: date) -> None:
        self.day = day

    def __call__(self) -> date:
        return self.day


def shared_registries(tmp_path: Path, today: Today | None = None, audit: AuditLog | None = None):
    """Two workers' registries over one SQLite store."""
    out = []
    for _ in range(2):
        registry = default_registry()
        registry.lifecycle = ToolLifecycle(
            SQLiteKV(tmp_path / "storage.db", "tools"), audit=audit, today=today or date.today
        )
        out.append(registry)
    return out


def offered(registry: ToolRegistry, role: str = "customer") -> list[str]:
    return [c.name for c in registry.select(role)]


def test_a_change_by_one_worker_is_seen_by_another_and_audited(tmp_path):
    audit = AuditLog()
    ops, worker = shared_registries(tmp_path, audit=audit)
    ops.disable("urge_delivery", actor="alice", reason="carrier API down")
    assert worker.get("urge_delivery") is None
    assert "urge_delivery" not in worker.names()
    assert "urge_delivery" not in offered(worker)
    assert "urge_delivery" not in {v["function"]["name"] for v in worker.model_view()}
    assert "urge_delivery" not in {t.name for t in worker.langchain_tools(lambda n, a: {})}
    refusal = worker.unavailable("urge_delivery")
    assert refusal["state"] == "disabled" and "carrier API down" in refusal["message"]
    ops.enable("urge_delivery", actor="alice")
    assert worker.get("urge_delivery") is not None
    audit.flush()
    changes = [(r["tool_name"], r["before"], r["change"], r["actor"]) for r in audit.records]
    assert changes == [
        ("urge_delivery", "active", "disabled", "alice"),
        ("urge_delivery", "disabled", "active", "alice"),
    ]


def test_deprecation_hides_a_tool_then_refuses_it_from_its_date(tmp_path):
    today = Today(date(2026, 6, 1))
    ops, worker = shared_registries(tmp_path, today=today)
    ops.deprecate("urge_delivery", sunset=date(2026, 7, 1))
    card = worker.get("urge_delivery")
    assert card is not None and card.deprecated  # still callable
    assert "urge_delivery" not in offered(worker)  # but not offered
    assert worker.status("urge_delivery")["sunset"] == "2026-07-01"
    today.day = date(2026, 7, 1)
    assert worker.get("urge_delivery") is None
    assert worker.unavailable("urge_delivery")["reason"] == "sunset on 2026-07-01"


def test_a_disabled_tool_call_is_refused_not_crashed(tmp_path, db):
    (registry,) = shared_registries(tmp_path)[:1]
    registry.disable("query_order_status")
    ctx = ToolContext(user_id="u_10001", user_role="customer", resources=db)
    result = ActionExecutor(registry).execute(
        {"name": "query_order_status", "parameters": {"order_id": "OD-20240618-001"}}, ctx
    )
    assert result["status"] == "failed" and result["error_type"] == "disabled"
    assert classify(result) == "disabled"
    assert "query_order_status" not in result["data"]["available"]


def test_versions_new_traffic_moves_while_pinned_tasks_keep_the_old(tmp_path):
    ops, worker = shared_registries(tmp_path)
    v1 = worker.get("urge_delivery", task_id="task-old")
    assert v1.version == "1"
    v2 = dataclasses.replace(v1, version="2", description="Urge the courier (v2).")
    for registry in (ops, worker):
        registry.register(v2)
    assert worker.get("urge_delivery").version == "2"  # new traffic
    assert worker.get("urge_delivery", task_id="task-new").version == "2"
    assert worker.get("urge_delivery", task_id="task-old").version == "1"  # pinned
    ops.lifecycle.pin("intent:URGE_DELIVERY", "urge_delivery", "1")
    assert worker.get("urge_delivery", intent="URGE_DELIVERY").version == "1"
    with pytest.raises(TransitionRefusedError, match="task:task-old"):
        ops.retire("urge_delivery", "1")
    ops.lifecycle.unpin("task:task-old")
    ops.lifecycle.unpin("intent:URGE_DELIVERY")
    ops.retire("urge_delivery", "1")
    assert worker.get("urge_delivery", version="1") is None
    assert worker.get("urge_delivery", task_id="task-old").version == "2"
    ops.disable("urge_delivery", version="2")
    assert worker.get("urge_delivery") is None  # v1 retired, v2 disabled


def test_select_offers_at_most_eight_in_the_scenarios_order(tmp_path):
    registry = default_registry()
    for i in range(12):
        base = registry.get("query_order_status")
        registry.register(dataclasses.replace(base, name=f"query_order_part{i}"))
    assert len(registry.select("customer", limit=50)) == 8
    scenario = ["urge_delivery", "query_order_status", "request_refund"]
    assert [c.name for c in registry.select("customer", names=scenario)] == scenario
    registry.disable("query_order_status")
    assert [c.name for c in registry.select("customer", names=scenario)] == [
        "urge_delivery",
        "request_refund",
    ]


def test_coverage_reports_tools_never_chosen(tmp_path):
    audit = tmp_path / "audit.jsonl"
    audit.write_text(
        '{"tool": "query_order_status", "status": "success"}\n'
        '{"tool": "query_order_status", "status": "failed"}\n'
        '{"tool": "urge_delivery", "status": "success"}\n'
        '{"event": "tool_lifecycle", "tool": "request_refund"}\n'
        '{"tool": "query_weath',  # a torn last line
        encoding="utf-8",
    )
    report = tool_coverage(
        ["query_order_status", "urge_delivery", "request_refund"], read_audit_records(audit)
    )
    assert report["used"] == {"query_order_status": 2, "urge_delivery": 1}
    assert report["never_chosen"] == ["request_refund"]
    assert report["coverage"] == pytest.approx(2 / 3, abs=1e-3)


def test_cli_changes_the_shared_store(tmp_path, monkeypatch):
    monkeypatch.setenv("REACH_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("REDIS_URL", raising=False)
    get_settings.cache_clear()
    try:
        cli = CliRunner()
        out = cli.invoke(tools_app, ["disable", "urge_delivery", "--reason", "outage"])
        assert out.exit_code == 0, out.output
        out = cli.invoke(tools_app, ["deprecate", "request_refund", "--date", "2099-01-01"])
        assert out.exit_code == 0 and "refused from 2099-01-01" in out.output
        listing = cli.invoke(tools_app, ["list"]).output
        assert "urge_delivery  v1:disabled  serves none, not offered" in listing
        assert "request_refund  v1:deprecated until 2099-01-01  serves v1, not offered" in listing
        assert "query_order_status  v1:active  serves v1, offered" in listing
        assert cli.invoke(tools_app, ["enable", "no_such_tool"]).exit_code == 2
        assert cli.invoke(tools_app, ["deprecate", "urge_delivery", "--date", "x"]).exit_code == 2
        # Another process (a worker) sees the change through the store.
        (worker,) = shared_registries(tmp_path)[:1]
        assert worker.get("urge_delivery") is None
        records = read_audit_records(tmp_path / "audit.jsonl")
        assert [(r["tool_name"], r["change"]) for r in records] == [
            ("urge_delivery", "disabled"),
            ("request_refund", "deprecated"),
        ]
        cover = cli.invoke(tools_app, ["coverage"]).output
        assert "never chosen" in cover and "query_order_status" in cover
    finally:
        get_settings.cache_clear()


def test_executor_refusal_names_the_state(tmp_path, db):
    (registry,) = shared_registries(tmp_path)[:1]
    registry.deprecate("urge_delivery", sunset=date(2000, 1, 1), reason="replaced")
    ctx = ToolContext(user_id="u_10001", user_role="customer", resources=db)
    result = ActionExecutor(registry).execute(
        {"name": "urge_delivery", "parameters": {"order_id": "202506001"}}, ctx
    )
    assert result["status"] == "failed" and result["error_type"] == "disabled"
    assert result["data"]["state"] == "disabled"
    assert "sunset on 2000-01-01" in result["message"]
    assert classify(result) == "sunset" and result["data"]["sunset"] == "2000-01-01"
    assert "urge_delivery" not in result["data"]["available"]


def test_a_cached_snapshot_sees_other_workers_changes_within_its_ttl(tmp_path):
    t = [100.0]
    ops, worker = shared_registries(tmp_path)
    worker.lifecycle.cache_ttl_s = 1.0
    worker.lifecycle.now = lambda: t[0]
    assert worker.get("urge_delivery") is not None
    ops.disable("urge_delivery")
    assert worker.get("urge_delivery") is not None  # the snapshot is 0 s old
    t[0] += 1.0
    assert worker.get("urge_delivery") is None
    worker.enable("urge_delivery")  # its own change shows at once
    assert worker.get("urge_delivery") is not None
