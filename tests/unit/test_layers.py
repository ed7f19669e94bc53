"""The layer contract (pyproject.toml ``[tool.importlinter]``, docs/architecture.md).

``make check`` runs ``lint-imports`` on the tree. These tests show that the contract would
notice: a copy of the project's packages, with one bad import added, breaks the contract that
forbids it. And they check ``state.py``, which import-linter cannot analyse (a top-level
module, not a package).
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.layer_contracts import private_parts

ROOT = Path(__file__).resolve().parents[2]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
LAYERS: list[str] = next(c for c in CONFIG["contracts"] if c["id"] == "layers")["layers"]
STATE_MAY_IMPORT = (
    "protocol", "jobs", "tools", "observability", "security", "storage", "language", "config",
)
"""The packages below ``state.py`` (``below-state`` in pyproject.toml)."""


def _copy_project(to: Path) -> None:
    for package in CONFIG["root_packages"]:
        shutil.copytree(ROOT / package, to / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "state.py", to / "state.py")
    (to / "tests").mkdir()
    shutil.copy(ROOT / "tests" / "__init__.py", to / "tests" / "__init__.py")
    shutil.copy(ROOT / "tests" / "layer_contracts.py", to / "tests" / "layer_contracts.py")
    shutil.copy(ROOT / "pyproject.toml", to / "pyproject.toml")


def _lint(project: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(project)}
    lint = Path(sys.executable).with_name("lint-imports")
    return subprocess.run(
        [str(lint), "--no-logo", "--no-cache"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


ADDED = {
    # (file, the line added, the contract it breaks, what the report names)
    # graph.builder imports graph.resume: resume importing builder closes a cycle
    "cycle": ("graph/resume.py", "import graph.builder", "No import cycle", ".resume -> .builder"),
    "private": (
        "graph/builder.py",
        "from langgraph._internal._constants import CONFIG_KEY_DURABILITY",
        "No private LangGraph",
        "_internal",
    ),
    # the business database importing a graph node: storage is four layers below nodes
    "upward": ("storage/db.py", "import nodes.intent", "Each package imports only", "storage.db"),
}


@pytest.mark.parametrize("case", sorted(ADDED))
def test_the_contract_breaks_when_a_bad_import_is_added(tmp_path, case):
    _copy_project(tmp_path)
    path, line, contract, named = ADDED[case]
    assert _lint(tmp_path).returncode == 0  # the copy keeps the contracts, as the tree does
    target = tmp_path / path
    target.write_text(target.read_text() + "\n" + line + "\n")
    result = _lint(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    broken = result.stdout.split("Broken contracts")[-1]
    assert f"{contract}" in broken
    assert named in broken


def test_state_imports_only_the_packages_below_it():
    tree = ast.parse((ROOT / "state.py").read_text())
    project = set(CONFIG["root_packages"])
    imported = {
        (node.module or "").split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level == 0
    } | {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    assert imported & project  # it does use the layers below it
    assert imported & project <= set(STATE_MAY_IMPORT)
    assert list(STATE_MAY_IMPORT) == LAYERS[LAYERS.index("protocol") :]


def test_state_imports_no_private_name():
    source = (ROOT / "state.py").read_text().splitlines()
    tree = ast.parse("\n".join(source))
    lines = [
        source[node.lineno - 1]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
    ]
    assert lines
    assert [line for line in lines if private_parts(line)] == []


def test_private_parts_reads_import_statements():
    assert private_parts("from langgraph._internal._constants import X") == [
        "_internal",
        "_constants",
    ]
    assert private_parts("from langgraph.pregel import _loop, Pregel") == ["_loop"]
    assert private_parts("import langgraph._internal as i") == ["_internal"]
    assert private_parts("from langgraph.graph import StateGraph") == []
    assert private_parts("from __future__ import annotations") == []
