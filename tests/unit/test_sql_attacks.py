"""Every SQL attack in the corpus is refused by the guard itself, before any database."""

from __future__ import annotations

import pytest

from scenarios.sales.tools import SALES_POLICY
from security.sql_guard import UnsafeQueryError, check_query
from tests.attack.corpus import lines

PAYLOADS = lines("sql.txt")
HIDDEN = frozenset({"cost_cents"})


def test_the_corpus_has_at_least_fifty_attacks():
    assert len(PAYLOADS) >= 50


@pytest.mark.parametrize("sql", PAYLOADS, ids=[sql[:50] for sql in PAYLOADS])
def test_attack_is_refused_by_the_guard(sql):
    with pytest.raises(UnsafeQueryError):
        check_query(sql, SALES_POLICY, hidden=HIDDEN)
