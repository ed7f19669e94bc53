"""The appointment scenario's tables: departments, doctors, slots and bookings."""

from __future__ import annotations

import sqlite3

from contract.scenario import Seed

SCHEMA = """
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
"""

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
DOCTOR_LATIN = {"DR-01": "Wang", "DR-02": "Chen", "DR-03": "Liu", "DR-04": "Zhao"}
"""The doctors' surnames in Latin letters, as English speakers say them ("Dr. Zhao")."""
SEED_SLOTS = [  # the dermatology clinic has one slot left on 2024-06-20
    ("S-001", "DR-01", "2024-06-20", "09:00", "booked"),
    ("S-002", "DR-01", "2024-06-20", "10:00", "free"),
    ("S-003", "DR-02", "2024-06-20", "14:00", "free"),
    ("S-004", "DR-03", "2024-06-20", "09:30", "free"),
    ("S-005", "DR-04", "2024-06-20", "15:00", "free"),
    ("S-006", "DR-01", "2024-06-21", "09:00", "free"),
]


def insert_rows(conn: sqlite3.Connection) -> None:
    """Insert the demo clinic."""
    conn.executemany("INSERT INTO departments VALUES (?, ?, ?)", SEED_DEPARTMENTS)
    conn.executemany("INSERT INTO doctors VALUES (?, ?, ?, ?)", SEED_DOCTORS)
    conn.executemany(
        "INSERT INTO appointment_slots (slot_id, doctor_id, slot_date, slot_time,"
        " status) VALUES (?, ?, ?, ?, ?)",
        SEED_SLOTS,
    )


SEED = Seed(schema=SCHEMA, rows=insert_rows)
