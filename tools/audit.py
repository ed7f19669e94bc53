"""The audit trail: one structured record per tool call, written off the hot path.

Records go onto a queue; a background thread appends them as JSON lines. The executor
never waits for the disk.
"""

from __future__ import annotations

import json
import queue
import threading
from pathlib import Path
from typing import Any

from tools.pii import mask_pii


class AuditLog:
    """Append-only JSONL audit log with a background writer."""

    def __init__(self, path: str | Path | None = None) -> None:
        """Write to ``path``; with ``None`` records are kept in memory only (tests)."""
        self.path = Path(path) if path is not None else None
        self.records: list[dict[str, Any]] = []
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, name="reach-audit", daemon=True)
        self._thread.start()

    def write(self, record: dict[str, Any]) -> None:
        """Queue a record; masking happens here so no identifier reaches the file."""
        self._queue.put(mask_pii(record))

    def flush(self, timeout_s: float = 5.0) -> None:
        """Wait until every queued record is written."""
        done = threading.Event()
        self._queue.put({"__flush__": done})
        done.wait(timeout_s)

    def _drain(self) -> None:
        while True:
            record = self._queue.get()
            if record is None:
                return
            marker = record.get("__flush__")
            if isinstance(marker, threading.Event):
                marker.set()
                continue
            with self._lock:
                self.records.append(record)
                if len(self.records) > 10_000:
                    del self.records[:5_000]
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with self.path.open("a", encoding="utf-8") as out:
                    out.write(json.dumps(record, ensure_ascii=False) + "\n")
