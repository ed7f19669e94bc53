"""The flight scenario's tables and demo flights."""

from __future__ import annotations

import sqlite3

from contract.scenario import Seed

SCHEMA = """
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
"""

SEED_FLIGHTS = [  # the design's Shanghai → Beijing flight on 2024-06-20, and neighbours
    ("MU5101", "Shanghai", "Beijing", "2024-06-20", "08:00", "10:15", 12, 98000),
    ("CA1858", "Shanghai", "Beijing", "2024-06-20", "13:30", "15:45", 1, 105000),
    ("MU5101", "Shanghai", "Beijing", "2024-06-21", "08:00", "10:15", 20, 88000),
    ("CA1501", "Beijing", "Shanghai", "2024-06-20", "09:00", "11:10", 30, 96000),
    ("CZ3101", "Guangzhou", "Beijing", "2024-06-20", "07:30", "10:40", 8, 112000),
]


def insert_rows(conn: sqlite3.Connection) -> None:
    """Insert the demo flights."""
    conn.executemany(
        "INSERT INTO flights (flight_no, origin, destination, flight_date,"
        " depart_time, arrive_time, seats_left, price_cents)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        SEED_FLIGHTS,
    )


SEED = Seed(schema=SCHEMA, rows=insert_rows)
