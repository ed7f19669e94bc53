"""Where the agent's own data lives outside the checkpoint.

Owns the business database (``db``: a SQLite file with the scenarios' seed data and the
write ledger), the shared key-value store (``kv``: SQLite or Redis, for state every worker
must see), the transcript and protocol log (``transcript``), and the low-level openers they
share (``sqlite_files`` for WAL files many threads open, ``redis_direct`` for script calls on
a connection kept aside). May import ``config`` only.
"""
