"""The evaluation's cases: loaded from ``eval/cases/*.yaml``, and the slices run against a model.

A ``Case`` is one conversation with what it must leave in the database, the calls it must and
must not make, and tags; ``model_slice`` picks the cases a slow real-model run covers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from eval.db_state import DbChanges

CASES_DIR = Path(__file__).parent / "cases"
FRESH_DIR = Path(__file__).parent / "fresh"
"""Rounds of conversations written blind and frozen before their first run (issue 37's
generalization measure); after their first run they are kept as cases like the others."""


DEFAULT_TODAY = "2024-06-18"


@dataclass(frozen=True)
class Case:
    """One scripted conversation and what it must leave behind."""

    id: str
    scenario: str
    user: str
    lang: str
    turns: tuple[Any, ...]
    """Strings are user messages; ``{"resume": answer}`` answers a confirmation."""
    intent: str | None
    calls: tuple[str, ...]
    """Tools that must reach a backend (as a set); empty: none may."""
    db: DbChanges
    """Expected changes to the seed snapshot (see ``snapshot``)."""
    tags: tuple[str, ...] = ()
    today: str = DEFAULT_TODAY
    backend: dict[str, str] = field(default_factory=dict)
    """Faults pinned to tools for this case (backend failures, injection)."""


def load_cases(path: Path | None = None) -> list[Case]:
    """Load every ``*.yaml`` under ``path`` (default ``eval/cases`` and ``eval/fresh``)."""
    if path is None:
        files = sorted(CASES_DIR.glob("*.yaml")) + sorted(FRESH_DIR.glob("*.yaml"))
    else:
        files = [path] if path.is_file() else sorted(path.glob("*.yaml"))
    cases: list[Case] = []
    for file in files:
        for raw in yaml.safe_load(file.read_text(encoding="utf-8")) or []:
            cases.append(
                Case(
                    id=raw["id"],
                    scenario=raw.get("scenario", file.stem),
                    user=raw.get("user", "u_10001"),
                    lang=raw.get("lang", "zh"),
                    turns=tuple(raw["turns"]),
                    intent=raw.get("intent"),
                    calls=tuple(raw.get("calls") or ()),
                    db=DbChanges(**(raw.get("db") or {})),
                    tags=tuple(raw.get("tags") or ()),
                    today=str(raw.get("today", DEFAULT_TODAY)),
                    backend=raw.get("backend") or {},
                )
            )
    ids = Counter(case.id for case in cases)
    dupes = [case_id for case_id, n in ids.items() if n > 1]
    if dupes:
        msg = f"duplicate case ids: {dupes}"
        raise ValueError(msg)
    return cases


SLICE_TAGS = (
    "typical",
    "missing_slot",
    "invalid_value",
    "correction",
    "permission",
    "rejected",
    "backend_failure",
    "injection",
    "small_talk",
)
"""The kinds of case the model slice must represent."""


SLICE_STRATA: tuple[tuple[str, ...], ...] = (
    ("typical",),
    ("missing_slot", "invalid_value", "correction"),
    ("permission", "rejected"),
    ("backend_failure", "injection"),
    ("small_talk",),
)
"""Groups of ``SLICE_TAGS``: the slice covers each group, and each language, per scenario."""


def model_slice(cases: Sequence[Case]) -> list[Case]:
    """Return the fixed slice used for model modes (a full model run takes hours here).

    Rule: walk the cases in load order (files sorted by name, cases in file order) and keep
    a case when it brings its scenario a stratum of ``SLICE_STRATA`` or a language that no
    kept case of that scenario has. Then, for each tag of ``SLICE_TAGS`` still absent, add
    the first case carrying it. The rule reads tags and languages only, never an outcome.
    """
    strata = {tag: str(i) for i, group in enumerate(SLICE_STRATA) for tag in group}
    covered: set[tuple[str, str]] = set()
    kept: set[str] = set()
    for case in cases:
        keys = {(case.scenario, strata[tag]) for tag in case.tags if tag in strata}
        keys.add((case.scenario, f"lang:{case.lang}"))
        if keys - covered:
            kept.add(case.id)
            covered |= keys
    for tag in SLICE_TAGS:
        if not any(tag in case.tags for case in cases if case.id in kept):
            first = next((case for case in cases if tag in case.tags), None)
            if first is not None:
                kept.add(first.id)
    return [case for case in cases if case.id in kept]


SLICES: dict[str, Callable[[Sequence[Case]], list[Case]]] = {"model": model_slice}
"""Named, fixed selections for ``reach eval --slice``."""
