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
            cases.append(
                pytest.param(
                    category,
                    payload,
                    id=f"{category.name}-{index + offset}-{label[:30]}",
                )
            )
    return cases


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
