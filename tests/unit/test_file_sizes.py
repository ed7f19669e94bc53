"""No source file over 500 lines, outside the tests, the data and the benchmarks.

A file that grows past it is a module doing two things: split it by concern (see
docs/architecture.md), do not raise the limit.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 500
SKIPPED = {"tests", "bench", ".venv", ".venv-aegra", ".reach", "node_modules"}
"""Tests and benchmarks may be long; data (cases, payloads, results) is not Python."""


def _sources() -> list[Path]:
    return [
        path
        for path in ROOT.rglob("*.py")
        if not SKIPPED & set(path.relative_to(ROOT).parts)
        and not any(part.startswith(".") for part in path.relative_to(ROOT).parts)
    ]


def test_the_walk_sees_the_project():
    found = {path.relative_to(ROOT).as_posix() for path in _sources()}
    assert {"state.py", "tools/executor/pipeline.py", "graph/builder.py"} <= found
    assert not any(name.startswith(("tests/", "bench/")) for name in found)


def test_no_source_file_is_over_500_lines():
    sizes = {
        path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in _sources()
    }
    assert {name: lines for name, lines in sizes.items() if lines > LIMIT} == {}
