"""The sales scenario's table and three months of demo sales."""

from __future__ import annotations

import sqlite3

from contract.scenario import Seed

SCHEMA = """
CREATE TABLE IF NOT EXISTS sales (
    sale_id      INTEGER PRIMARY KEY,
    product      TEXT NOT NULL,
    month        TEXT NOT NULL,
    day          INTEGER NOT NULL,
    quantity     INTEGER NOT NULL,
    amount_cents INTEGER NOT NULL,
    cost_cents   INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS sales_by_month ON sales(month, product);
"""

SALES_PRODUCTS = [  # product, unit price (cents), unit cost (cents; hidden from reports)
    ("黄焖鸡米饭", 2500, 1100),
    ("麻辣香锅", 3600, 1700),
    ("酸菜鱼", 5800, 3100),
    ("蓝牙耳机", 12900, 8200),
    ("机械键盘", 8800, 5900),
]
SALES_MONTHS = {"2024-05": 31, "2024-06": 30, "2024-07": 31}


def seed_sales() -> list[tuple[str, str, int, int, int, int]]:
    """A month of daily sales per product (three months in all), deterministic."""
    rows = []
    for m_index, (month, days) in enumerate(SALES_MONTHS.items()):
        for day in range(1, days + 1):
            for p_index, (product, price, cost) in enumerate(SALES_PRODUCTS):
                quantity = (day * 7 + p_index * 3 + m_index * 5) % 6 + 1
                rows.append((product, month, day, quantity, quantity * price, quantity * cost))
    return rows


def insert_rows(conn: sqlite3.Connection) -> None:
    """Insert the demo sales."""
    conn.executemany(
        "INSERT INTO sales (product, month, day, quantity, amount_cents, cost_cents)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        seed_sales(),
    )


SEED = Seed(schema=SCHEMA, rows=insert_rows)
