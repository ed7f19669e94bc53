"""The transfer scenario's tables and demo accounts."""

from __future__ import annotations

import hashlib
import sqlite3

from contract.scenario import Seed

SCHEMA = """
CREATE TABLE IF NOT EXISTS accounts (
    account_id   TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL,
    holder_name  TEXT NOT NULL,
    balance_cents INTEGER NOT NULL CHECK (balance_cents >= 0),
    pin_hash     TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS transfers (
    transfer_id  TEXT PRIMARY KEY,
    from_account TEXT NOT NULL,
    to_account   TEXT NOT NULL,
    amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
    status       TEXT NOT NULL,
    risk_score   REAL NOT NULL,
    note         TEXT,
    created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
"""


def pin_hash(account_id: str, pin: str) -> str:
    """Hash a payment PIN with its account as salt; PINs are never stored."""
    return hashlib.sha256(f"reach-pin|{account_id}|{pin}".encode()).hexdigest()


SEED_ACCOUNTS = [  # account, owner, holder, balance (cents), PIN
    ("ACC-1001", "u_10001", "张三", 500_000, "123456"),
    ("ACC-2001", "u_10002", "李四", 200_000, "654321"),
    ("ACC-3001", "merchant", "鲜味餐饮有限公司", 1_000_000, "000000"),
]


def insert_rows(conn: sqlite3.Connection) -> None:
    """Insert the demo accounts, PINs hashed."""
    conn.executemany(
        "INSERT INTO accounts (account_id, user_id, holder_name, balance_cents,"
        " pin_hash) VALUES (?, ?, ?, ?, ?)",
        [(a, u, h, b, pin_hash(a, p)) for a, u, h, b, p in SEED_ACCOUNTS],
    )


SEED = Seed(schema=SCHEMA, rows=insert_rows)
