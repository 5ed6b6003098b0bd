"""A ledger exactly as main made it at its last schema, at any version 1..``FROZEN_VERSION``: 1..18
as commit 69c6e06 made them (its hand-written rules), and each later migration, which holds no rule.

``frozen_migrations/`` holds that commit's migration files unchanged and the later ones, fixture
data for the equivalence and upgrade tests of ``shell.ledger.rules``: ``build`` applies the first ``version``
of them as that commit's runner did (a ``schema_migrations`` row and ``user_version`` per
migration, in one transaction each, the application id stamped), so a test can compare today's
generated rules with the hand-written ones they replace, and open an old file with today's code.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from shell.clock import FakeClock
from shell.ledger.connection import APPLICATION_ID, Ledger, split_statements

FROZEN = Path(__file__).with_name("frozen_migrations")
FROZEN_VERSION = 20
STAMP = "2026-11-29T12:00:00.000000000Z"


def frozen_sql(version: int) -> str:
    return next(FROZEN.glob(f"{version:04d}_*.sql")).read_text("utf-8")


def build(path: Path, version: int = FROZEN_VERSION) -> None:
    """A new file at ``path`` migrated by the frozen migrations 1..``version``."""
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute(
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL) STRICT"
        )
        for number in range(1, version + 1):
            connection.execute("BEGIN IMMEDIATE")
            for statement in split_statements(frozen_sql(number)):
                connection.execute(statement)
            connection.execute("INSERT INTO schema_migrations VALUES (?, ?)", (number, STAMP))
            connection.execute(f"PRAGMA user_version = {number}")
            connection.execute("COMMIT")
    finally:
        connection.close()
    path.chmod(0o600)


def open_frozen(path: Path) -> Ledger:
    """A ``Ledger`` on a file ``build`` made that never migrates: main's rules, as they were."""
    connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    connection.execute("PRAGMA foreign_keys = ON")
    return Ledger(connection, path, read_only=False, clock=FakeClock(), busy_timeout=5.0)
