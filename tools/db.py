"""The business database: a real SQLite file, created and seeded on first use.

Every query is parameterized. The data directory defaults to ``./.reach`` and is set with
``REACH_DATA_DIR``, so tests and deployments each get their own.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

DATA_DIR_ENV = "REACH_DATA_DIR"
DEFAULT_DATA_DIR = ".reach"

SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    user_id      TEXT PRIMARY KEY,
    display_name TEXT NOT NULL,
    role         TEXT NOT NULL DEFAULT 'customer'
);
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
CREATE TABLE IF NOT EXISTS pii_vault (
    token        TEXT PRIMARY KEY,
    owner_id     TEXT NOT NULL,
    value        TEXT NOT NULL,
    masked       TEXT NOT NULL,
    created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE TABLE IF NOT EXISTS flights (
    flight_no    TEXT NOT NULL,
    origin       TEXT NOT NULL,
    destination  TEXT NOT NULL,
    flight_date  TEXT NOT NULL,
    depart_time  TEXT NOT NULL,
    arrive_time  TEXT NOT NULL,
    seats_left   INTEGER NOT NULL CHECK (seats_left >= 0),
    price_cents  INTEGER NOT NULL,
    PRIMARY KEY (flight_no, flight_date)
);
CREATE TABLE IF NOT EXISTS flight_bookings (
    booking_id   TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL,
    flight_no    TEXT NOT NULL,
    flight_date  TEXT NOT NULL,
    passenger_name TEXT NOT NULL,
    passenger_token TEXT NOT NULL,
    passenger_masked TEXT NOT NULL,
    created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    UNIQUE (flight_no, flight_date, passenger_token)
);
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
CREATE TABLE IF NOT EXISTS departments (
    dept_id      TEXT PRIMARY KEY,
    name_zh      TEXT NOT NULL,
    name_en      TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS doctors (
    doctor_id    TEXT PRIMARY KEY,
    dept_id      TEXT NOT NULL REFERENCES departments(dept_id),
    name         TEXT NOT NULL,
    title        TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS appointment_slots (
    slot_id      TEXT PRIMARY KEY,
    doctor_id    TEXT NOT NULL REFERENCES doctors(doctor_id),
    slot_date    TEXT NOT NULL,
    slot_time    TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('free', 'held', 'booked')),
    held_by      TEXT,
    held_until   REAL
);
CREATE TABLE IF NOT EXISTS appointments (
    appointment_id TEXT PRIMARY KEY,
    slot_id      TEXT NOT NULL UNIQUE REFERENCES appointment_slots(slot_id),
    user_id      TEXT NOT NULL,
    patient_name TEXT NOT NULL,
    created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE TABLE IF NOT EXISTS notifications (
    notification_id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id      TEXT NOT NULL,
    channel      TEXT NOT NULL,
    content      TEXT NOT NULL,
    created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE TABLE IF NOT EXISTS payloads (
    sha256       TEXT PRIMARY KEY,
    body         BLOB NOT NULL,
    created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
"""

SEED_USERS = [
    ("u_10001", "张三", "customer"),
    ("u_10002", "李四", "customer"),
    ("u_90001", "客服小王", "agent"),
    ("u_80001", "分析师老周", "analyst"),
]

SEED_FLIGHTS = [  # the design's Shanghai → Beijing flight on 2024-06-20, and neighbours
    ("MU5101", "Shanghai", "Beijing", "2024-06-20", "08:00", "10:15", 12, 98000),
    ("CA1858", "Shanghai", "Beijing", "2024-06-20", "13:30", "15:45", 1, 105000),
    ("MU5101", "Shanghai", "Beijing", "2024-06-21", "08:00", "10:15", 20, 88000),
    ("CA1501", "Beijing", "Shanghai", "2024-06-20", "09:00", "11:10", 30, 96000),
    ("CZ3101", "Guangzhou", "Beijing", "2024-06-20", "07:30", "10:40", 8, 112000),
]


def pin_hash(account_id: str, pin: str) -> str:
    """Hash a payment PIN with its account as salt; PINs are never stored."""
    return hashlib.sha256(f"reach-pin|{account_id}|{pin}".encode()).hexdigest()


SEED_ACCOUNTS = [  # account, owner, holder, balance (cents), PIN
    ("ACC-1001", "u_10001", "张三", 500_000, "123456"),
    ("ACC-2001", "u_10002", "李四", 200_000, "654321"),
    ("ACC-3001", "merchant", "鲜味餐饮有限公司", 1_000_000, "000000"),
]

SEED_DEPARTMENTS = [
    ("D-INT", "内科", "internal medicine"),
    ("D-PED", "儿科", "pediatrics"),
    ("D-DER", "皮肤科", "dermatology"),
]
SEED_DOCTORS = [
    ("DR-01", "D-INT", "王医生", "主任医师"),
    ("DR-02", "D-INT", "陈医生", "主治医师"),
    ("DR-03", "D-PED", "刘医生", "副主任医师"),
    ("DR-04", "D-DER", "赵医生", "主治医师"),
]
SEED_SLOTS = [  # the dermatology clinic has one slot left on 2024-06-20
    ("S-001", "DR-01", "2024-06-20", "09:00", "booked"),
    ("S-002", "DR-01", "2024-06-20", "10:00", "free"),
    ("S-003", "DR-02", "2024-06-20", "14:00", "free"),
    ("S-004", "DR-03", "2024-06-20", "09:30", "free"),
    ("S-005", "DR-04", "2024-06-20", "15:00", "free"),
    ("S-006", "DR-01", "2024-06-21", "09:00", "free"),
]

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


# The design's own examples first (all owned by u_10001), then another user's orders, so a
# lookup of someone else's order can be tested for not leaking.
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


def data_dir() -> Path:
    """Return the data directory from ``REACH_DATA_DIR``, creating it if needed."""
    path = Path(os.environ.get(DATA_DIR_ENV) or DEFAULT_DATA_DIR)
    path.mkdir(parents=True, exist_ok=True)
    return path


class Database:
    """A seeded SQLite business database, safe to share between graph threads.

    One connection per instance with a lock around each transaction: SQLite serializes
    writers anyway, and this keeps transactions from interleaving on one connection.
    """

    def __init__(self, path: str | Path) -> None:
        """Open (and on first use create and seed) the database at ``path``."""
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute("PRAGMA foreign_keys = ON")
        if self.path != ":memory:":
            self._conn.execute("PRAGMA journal_mode = WAL")
        self._lock = threading.RLock()
        self._ensure_schema()

    @classmethod
    def default(cls) -> Database:
        """Open the database in the configured data directory."""
        return cls(data_dir() / "business.db")

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Run statements atomically: commit on success, roll back on any error."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        """Run a parameterized read and return rows as dicts."""
        with self._lock:
            return [dict(row) for row in self._conn.execute(sql, params).fetchall()]

    def query_one(self, sql: str, params: tuple[Any, ...] = ()) -> dict[str, Any] | None:
        """Run a parameterized read and return the first row, if any."""
        rows = self.query(sql, params)
        return rows[0] if rows else None

    def put_payload(self, data: bytes) -> str:
        """Keep an oversized protocol payload and return its reference URI."""
        digest = hashlib.sha256(data).hexdigest()
        with self.transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO payloads (sha256, body) VALUES (?, ?)", (digest, data)
            )
        return f"payload://sha256/{digest}"

    def get_payload(self, uri: str) -> bytes | None:
        """Fetch a payload stored by ``put_payload``."""
        digest = uri.rsplit("/", 1)[-1]
        row = self.query_one("SELECT body FROM payloads WHERE sha256 = ?", (digest,))
        return None if row is None else bytes(row["body"])

    def read_only(self) -> sqlite3.Connection:
        """Open a separate read-only connection, for queries built from user questions."""
        if self.path == ":memory:":
            msg = "an in-memory database has no read-only view"
            raise ValueError(msg)
        conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
        conn.execute("PRAGMA query_only = ON")
        return conn

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    def _ensure_schema(self) -> None:
        with self._lock:
            self._conn.executescript(SCHEMA)
            seeded = self._conn.execute("SELECT COUNT(*) FROM users").fetchone()[0]
            if seeded:
                return
            with self.transaction() as conn:
                conn.executemany(
                    "INSERT INTO users (user_id, display_name, role) VALUES (?, ?, ?)", SEED_USERS
                )
                conn.executemany(
                    "INSERT INTO orders (order_id, user_id, status, eta_minutes, eta_date,"
                    " amount_cents, item, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    SEED_ORDERS,
                )
                conn.executemany(
                    "INSERT INTO accounts (account_id, user_id, holder_name, balance_cents,"
                    " pin_hash) VALUES (?, ?, ?, ?, ?)",
                    [(a, u, h, b, pin_hash(a, p)) for a, u, h, b, p in SEED_ACCOUNTS],
                )
                conn.executemany("INSERT INTO departments VALUES (?, ?, ?)", SEED_DEPARTMENTS)
                conn.executemany("INSERT INTO doctors VALUES (?, ?, ?, ?)", SEED_DOCTORS)
                conn.executemany(
                    "INSERT INTO appointment_slots (slot_id, doctor_id, slot_date, slot_time,"
                    " status) VALUES (?, ?, ?, ?, ?)",
                    SEED_SLOTS,
                )
                conn.executemany(
                    "INSERT INTO flights (flight_no, origin, destination, flight_date,"
                    " depart_time, arrive_time, seats_left, price_cents)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    SEED_FLIGHTS,
                )
                conn.executemany(
                    "INSERT INTO sales (product, month, day, quantity, amount_cents, cost_cents)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    seed_sales(),
                )
