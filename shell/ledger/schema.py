"""The ledger's schema: the numbered migrations, the version a file is at, and the runner.

Rules:
1. Migrations are numbered files ``shell/ledger/migrations/NNNN_name.sql``, never edited once
   shipped, numbered 1, 2, 3... without gaps (checked at import).
2. Each runs in its own ``BEGIN IMMEDIATE`` transaction that re-reads the recorded version
   inside it, so two processes opening a fresh ledger apply each migration once.
3. A ledger written by a newer program is refused (``LedgerTooNew``): an older program does
   not understand the rows and triggers a newer one relies on.
4. ``executescript`` would COMMIT the migration's transaction first, so a migration's
   statements run one at a time inside it (``split_statements``).
5. A ledger already at this program's version costs one read, no write transaction: every
   start (and every restart of the simulation) opens an up-to-date file, and a start never
   waits on another process's write lock for nothing to do.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from shell.ledger.errors import LedgerTooNew

if TYPE_CHECKING:
    from shell.ledger.connection import Ledger

MIGRATIONS_DIRECTORY = Path(__file__).with_name("migrations")
"""Beside this module, found from its path: ``importlib.resources`` would cost every start ~2%
of ``bin/connect status``'s (its readers import ``zipfile`` and ``tempfile``)."""
_MIGRATION_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")


@dataclass(frozen=True, slots=True)
class Migration:
    """One numbered SQL file of ``shell/ledger/migrations``."""

    version: int
    name: str
    sql: str


def _load_migrations() -> tuple[Migration, ...]:
    found: list[Migration] = []
    for entry in MIGRATIONS_DIRECTORY.iterdir():
        match = _MIGRATION_NAME.match(entry.name)
        if match:
            found.append(Migration(int(match[1]), entry.name, entry.read_text("utf-8")))
    found.sort(key=lambda migration: migration.version)
    versions = [migration.version for migration in found]
    if versions != list(range(1, len(found) + 1)):
        raise RuntimeError(f"migrations must be numbered 1, 2, 3... without gaps: {versions}")
    return tuple(found)


MIGRATIONS = _load_migrations()
SCHEMA_VERSION = MIGRATIONS[-1].version


def split_statements(script: str) -> list[str]:
    """The statements of a script, each whole (triggers included), comments kept in place (rule 4)."""
    statements: list[str] = []
    buffer = ""
    pieces = script.split(";")
    for piece in pieces[:-1]:
        buffer += piece + ";"
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    rest = (buffer + pieces[-1]).strip()
    if rest:
        statements.append(rest)  # an unterminated statement, or comments (which run as nothing)
    return statements


def schema_version(connection: sqlite3.Connection) -> int:
    """The highest migration recorded in the file (0 for a file never migrated)."""
    table = connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()
    if table is None:
        return 0
    row = connection.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()
    return int(row[0])


def refuse_too_new(version: int, path: Path) -> None:
    if version > SCHEMA_VERSION:
        raise LedgerTooNew(
            f"{path}: the ledger is at schema {version}, newer than this program's "
            f"{SCHEMA_VERSION}; run the newer program"
        )


def migrate(ledger: Ledger) -> None:
    """Apply each migration not yet recorded, each in its own immediate transaction (rule 2)."""
    with ledger.read() as connection:
        if schema_version(connection) == SCHEMA_VERSION:  # rule 5: nothing to do
            return
    with ledger.write() as transaction:
        transaction.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            "version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL) STRICT"
        )
    for migration in MIGRATIONS:
        with ledger.write() as transaction:
            recorded = schema_version(transaction)  # re-read inside: another may have applied it
            refuse_too_new(recorded, ledger.path)
            if recorded >= migration.version:
                continue
            for statement in split_statements(migration.sql):
                transaction.execute(statement)
            transaction.execute(
                "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
                (migration.version, ledger.timestamp()),
            )
