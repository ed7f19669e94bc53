"""The audit file: lines appended, a moved or removed file started again, no record lost."""

from __future__ import annotations

import json
import os
import shutil

from observability.audit import AuditLog


def _lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_records_are_appended_as_json_lines(tmp_path):
    path = tmp_path / "audit.jsonl"
    audit = AuditLog(path, sinks=[])
    audit.write({"kind": "turn", "session_id": "s1", "note": "第一轮"})
    audit.write_many([{"kind": "turn", "n": i} for i in range(3)])
    audit.flush()
    assert [r.get("note", r.get("n")) for r in _lines(path)] == ["第一轮", 0, 1, 2]
    assert "第一轮" in path.read_text(encoding="utf-8")  # UTF-8, not \\u escapes
    audit.close()


def test_a_rotated_file_is_started_again_and_the_old_one_keeps_its_lines(tmp_path):
    path = tmp_path / "audit.jsonl"
    audit = AuditLog(path, sinks=[])
    audit.write({"kind": "turn", "n": 1})
    audit.flush()
    os.rename(path, tmp_path / "audit.jsonl.1")  # what logrotate does
    audit.write({"kind": "turn", "n": 2})
    audit.flush()
    assert [r["n"] for r in _lines(tmp_path / "audit.jsonl.1")] == [1]
    assert [r["n"] for r in _lines(path)] == [2]
    audit.close()


def test_a_removed_directory_is_made_again(tmp_path):
    path = tmp_path / "logs" / "audit.jsonl"
    audit = AuditLog(path, sinks=[])
    audit.write({"kind": "turn", "n": 1})
    audit.flush()
    shutil.rmtree(tmp_path / "logs")
    audit.write({"kind": "turn", "n": 2})
    audit.flush()
    assert [r["n"] for r in _lines(path)] == [2]
    audit.close()


def test_two_logs_on_one_file_never_split_a_line(tmp_path):
    path = tmp_path / "audit.jsonl"
    first, second = AuditLog(path, sinks=[]), AuditLog(path, sinks=[])
    for i in range(200):
        (first if i % 2 else second).write_many([{"kind": "turn", "n": i, "pad": "x" * 3000}])
    first.flush()
    second.flush()
    assert sorted(r["n"] for r in _lines(path)) == list(range(200))
    first.close()
    second.close()


def test_closing_lets_go_of_the_file(tmp_path):
    audit = AuditLog(tmp_path / "audit.jsonl", sinks=[])
    audit.write({"kind": "turn"})
    audit.flush()
    assert audit._fd is not None
    audit.close()
    assert audit._fd is None
