"""The attack categories of issue 28: failures told truthfully, instructions found, none invented.

- ``failure_matrix``: every row of ``tests/failure_matrix.py`` (every tool × every failure
  the executor makes): a row whose reply misnames the class, writes where nothing may be
  written, or leaves the next turn broken is a breach.
- ``injection_family``: the "forget / disregard / override everything above" family in zh
  and en, spaced out, upper-cased and full-width: each is flagged in tool output (and
  comes back without links or HTML) and in user text.
- ``benign_seeded`` and ``benign_eval``: every text of the seeded business data and every
  utterance of the evaluation set (``eval/*.jsonl`` and the cases' turns, the cases about
  injection left out): a flag on any of them is a false positive. The report's breaches
  for these two are the measured false-positive counts.
"""

from __future__ import annotations

import functools
import json
import tempfile
from pathlib import Path
from typing import Any

from eval.backends import start_weather_server
from eval.case_set import load_cases
from security.untrusted import looks_like_instruction
from tests.helpers import open_database

EVAL = Path(__file__).resolve().parents[2] / "eval"


@functools.cache
def _weather_url() -> str:
    """The demo weather API, started once for the process on a free loopback port."""
    _server, url = start_weather_server()
    return url


def matrix_payloads() -> list[tuple[str, Any]]:
    """Every row of the failure matrix."""
    from tests.failure_matrix import rows  # noqa: PLC0415 - graph imports only when needed

    return [
        (f"{tool}:{fault}:{language}", (tool, fault, language)) for tool, fault, language in rows()
    ]


def check_matrix_row(row: tuple[str, str, str]) -> str | None:
    """Run one row on its own database; a problem found is the breach."""
    from tests.failure_matrix import run_row  # noqa: PLC0415

    tool, fault, language = row
    with tempfile.TemporaryDirectory(prefix="reach-matrix-") as folder:
        verdict = run_row(tool, fault, Path(folder), _weather_url(), language)
    return "; ".join(verdict.problems) or None


def check_family(text: str) -> str | None:
    """Flagged both as a tool's output and as a user's message."""
    from tests.attack.corpus import check_tool_injection  # noqa: PLC0415 - corpus imports us

    found = check_tool_injection(text)
    if found is not None:
        return f"tool output: {found}"
    return None if looks_like_instruction(text) else "user text: not flagged"


def seeded_texts() -> list[tuple[str, str]]:
    """Every distinct text value of the seeded business database."""
    texts: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="reach-seed-") as folder:
        db = open_database(Path(folder) / "business.db")
        tables = [r["name"] for r in db.query("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            for row in db.query(f"SELECT * FROM {table}"):  # noqa: S608 - names from the schema
                for column, value in row.items():
                    if isinstance(value, str) and value.strip():
                        texts.setdefault(value, f"{table}.{column}")
        db.close()
    return [(f"{where}: {text[:40]}", text) for text, where in texts.items()]


def eval_texts() -> list[tuple[str, str]]:
    """Every utterance of the evaluation set, but those of the cases about injection."""
    texts: dict[str, str] = {}
    for path in sorted(EVAL.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                texts.setdefault(json.loads(line)["text"], path.name)
    for case in load_cases():
        if "injection" in case.tags:
            continue
        for turn in case.turns:
            if isinstance(turn, str):
                texts.setdefault(turn, case.id)
    return [(f"{where}: {text[:40]}", text) for text, where in texts.items()]


def check_not_flagged(text: str) -> str | None:
    """Ordinary text must not be flagged."""
    return "flagged (false positive)" if looks_like_instruction(text) else None
