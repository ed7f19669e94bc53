"""The delivery scenario's tables and demo orders."""

from __future__ import annotations

import sqlite3

from contract.scenario import Seed

SCHEMA = """
CREATE TABLE IF NOT EXISTS orders (
    order_id     TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users(user_id),
    status       TEXT NOT NULL,
    eta_minutes  INTEGER,
    eta_date     TEXT,
    amount_cents INTEGER NOT NULL,
    item         TEXT NOT NULL,
    created_at   TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS orders_by_user ON orders(user_id);
CREATE TABLE IF NOT EXISTS refunds (
    refund_id    TEXT PRIMARY KEY,
    order_id     TEXT NOT NULL UNIQUE REFERENCES orders(order_id),
    user_id      TEXT NOT NULL,
    amount_cents INTEGER NOT NULL,
    reason       TEXT NOT NULL,
    status       TEXT NOT NULL,
    created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE TABLE IF NOT EXISTS delivery_urges (
    urge_id      INTEGER PRIMARY KEY AUTOINCREMENT,
    order_id     TEXT NOT NULL REFERENCES orders(order_id),
    user_id      TEXT NOT NULL,
    created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
"""

SEED_ORDERS = [
    (
        "OD-20240618-001",
        "u_10001",
        "delivering",
        15,
        None,
        4250,
        "黄焖鸡米饭",
        "2024-06-18T11:40:00Z",
    ),
    (
        "OD-20240618-002",
        "u_10001",
        "delivered",
        None,
        None,
        3600,
        "麻辣香锅",
        "2024-06-18T10:05:00Z",
    ),
    (
        "202506001",
        "u_10001",
        "shipped",
        None,
        "2025-06-01",
        12900,
        "蓝牙耳机",
        "2025-05-28T09:00:00Z",
    ),
    ("OD-20240619-003", "u_10002", "delivering", 25, None, 5800, "酸菜鱼", "2024-06-19T12:10:00Z"),
    (
        "OD-20240619-004",
        "u_10002",
        "cancelled",
        None,
        None,
        2100,
        "煎饼果子",
        "2024-06-19T08:30:00Z",
    ),
    (
        "202506002",
        "u_10002",
        "pending_payment",
        None,
        None,
        8800,
        "机械键盘",
        "2025-06-02T15:00:00Z",
    ),
]


ITEM_EN = {
    "黄焖鸡米饭": "braised chicken rice",
    "麻辣香锅": "spicy stir-fry pot",
    "蓝牙耳机": "bluetooth earphones",
    "酸菜鱼": "pickled cabbage fish",
    "煎饼果子": "jianbing pancake",
    "机械键盘": "mechanical keyboard",
}
"""The catalog's items as English speakers name them: how "did my bluetooth earphones ship
yet?" finds order 202506001."""


def insert_rows(conn: sqlite3.Connection) -> None:
    """Insert the demo orders."""
    conn.executemany(
        "INSERT INTO orders (order_id, user_id, status, eta_minutes, eta_date,"
        " amount_cents, item, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        SEED_ORDERS,
    )


SEED = Seed(schema=SCHEMA, rows=insert_rows)
