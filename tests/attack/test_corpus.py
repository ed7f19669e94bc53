"""Every attack in the corpus is stopped: a fast slice, and the rest (marked ``attack``), which
``make test`` and ``make attack`` run and ``-m "not attack"`` leaves out."""

from __future__ import annotations

from pathlib import Path

import pytest

from storage.db import Database
from tests.attack.corpus import CATEGORIES, Category
from tests.helpers import open_database


def _cases(full: bool) -> list[object]:
    cases = []
    for category in CATEGORIES:
        payloads = category.payloads()
        chosen = payloads[category.fast :] if full else payloads[: category.fast]
        for index, (label, payload) in enumerate(chosen):
            offset = category.fast if full else 0
            marks = [UNSEEN_LIFECYCLE] if _unseen(category.name, label) else []
            cases.append(
                pytest.param(
                    category,
                    payload,
                    id=f"{category.name}-{index + offset}-{label[:30]}",
                    marks=marks,
                )
            )
    return cases


UNSEEN_LIFECYCLE = pytest.mark.xfail(
    strict=True,
    reason="open: the failure matrix's lifecycle rows of notify_booking "
    "(tests/graph/test_failure_matrix.py, same rows)",
)


def _unseen(category: str, label: str) -> bool:
    return category == "failure_matrix" and label.startswith(
        ("notify_booking:disabled", "notify_booking:retired", "notify_booking:sunset")
    )


@pytest.fixture(scope="module")
def attack_db(tmp_path_factory: pytest.TempPathFactory) -> Database:
    return open_database(Path(tmp_path_factory.mktemp("attack")) / "business.db")


def _run(category: Category, payload: object, db: Database) -> str | None:
    if category.needs_db:
        return category.check(payload, db)
    return category.check(payload)


@pytest.mark.parametrize(("category", "payload"), _cases(full=False))
def test_fast_slice_is_stopped(category: Category, payload: object, attack_db: Database) -> None:
    assert _run(category, payload, attack_db) is None


@pytest.mark.attack
@pytest.mark.parametrize(("category", "payload"), _cases(full=True))
def test_full_corpus_is_stopped(category: Category, payload: object, attack_db: Database) -> None:
    assert _run(category, payload, attack_db) is None
