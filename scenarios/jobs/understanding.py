"""Cues and slots of "is my export / bulk send done?" (zh and en)."""

from __future__ import annotations

from datetime import date

from contract.scenario import Cues, SlotResult

CUES: dict[str, Cues] = {
    "CHECK_JOB": (
        ("导出好了吗", 2.0),
        ("导出好了没", 2.0),
        ("导出完成了吗", 2.0),
        ("发完了吗", 1.6),
        ("发送完了吗", 1.6),
        ("任务进度", 1.4),
        ("任务好了吗", 1.6),
        ("好了吗", 0.6),
        ("is the export done", 2.4),
        ("is the export ready", 2.4),
        ("export done", 2.0),
        ("export finished", 2.0),
        ("export ready", 2.0),
        ("job status", 1.6),
        ("is the job", 1.4),
        ("notifications sent", 1.4),
        ("done yet", 0.8),
    ),
}


def extract(text: str, intent: str, *, today: date) -> SlotResult:
    """Nothing to extract: the job is the user's latest one (its id is never typed)."""
    return SlotResult()
