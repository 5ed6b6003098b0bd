"""The ledger's schema: the numbered migrations, the version a file is at, and the runner.

Rules:
1. Migrations are files ``shell/ledger/migrations/NNNN_name.sql``, numbered without gaps
   (checked at import), never edited once shipped but to take out what a generated rule now
   holds (rule 7); ``tests/support/frozen_migrations`` keeps schema 18's text to prove a ledger
   that ran it is brought up to date.
2. Each runs in its own ``BEGIN IMMEDIATE`` that re-reads the version inside it, so two
   processes opening a fresh ledger apply each migration once.
3. A ledger written by a newer program is refused (``LedgerTooNew``): its rows and triggers are
   not understood here.
4. ``executescript`` would COMMIT first, so a migration's statements run one at a time
   (``split_statements``).
5. A ledger at this version and rules costs one read and no write transaction: a start never
   waits on another's write lock for nothing to do.
6. A ledger carries this program's identity: ``application_id`` is ``APPLICATION_ID`` from its
   creation (``blank_ledger``) and ``user_version`` the schema version, set in each migration's
   transaction. A file without it (empty, or another application's) is refused untouched
   (``refuse_foreign``, ``LedgerForeign``, EXIT_CONFIG). An older connector's ledger
   (``application_id`` 0 with ``schema_migrations``) is stamped once by the owner.
7. What core holds (edges, vocabularies) is no migration's: ``shell.ledger.rules`` brings the
   generated triggers up to date in one more transaction after the migrations (rule 5 holds).
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from shell.ledger.errors import LedgerForeign, LedgerTooNew

if TYPE_CHECKING:
    from shell.ledger.connection import Ledger

MIGRATIONS_DIRECTORY = Path(__file__).with_name("migrations")
"""Beside this module, found from its path: ``importlib.resources`` would cost every start ~2%
of ``bin/connect status``'s (its readers import ``zipfile`` and ``tempfile``)."""
APPLICATION_ID = 0x42434E31
"""``BCN1``, in SQLite's header: this connector's ledger (rule 6)."""
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
    if not _has_migrations(connection):
        return 0
    row = connection.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()
    return int(row[0])


def blank_ledger() -> bytes:
    """An empty SQLite database carrying the ledger's identity at schema 0: what a new ledger
    file holds from its first byte (rule 6)."""
    connection = sqlite3.connect(":memory:")
    try:
        connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        return connection.serialize()
    finally:
        connection.close()


def application_id(connection: sqlite3.Connection) -> int:
    return int(connection.execute("PRAGMA application_id").fetchone()[0])


def refuse_foreign(connection: sqlite3.Connection, path: Path) -> None:
    """Rule 6: ``LedgerForeign`` unless the file is this connector's ledger; it reads, never writes."""
    found = application_id(connection)
    if found == APPLICATION_ID:
        return
    untouched = "; nothing in it was read or changed: point at the connector's own ledger"
    if found != 0:
        raise LedgerForeign(
            f"{path}: another application's SQLite database (application_id {found:#x}), "
            f"not this connector's ledger{untouched}"
        )
    if _has_migrations(connection):
        return  # an older connector's ledger, made before the identity (rule 6)
    tables = [str(row[0]) for row in connection.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name LIMIT 4"
    )]  # fmt: skip
    if not path.stat().st_size:
        raise LedgerForeign(
            f"{path}: an empty file (0 bytes), not a ledger: a ledger is never empty, so this one's "
            f"history was replaced by nothing{untouched} (or remove it to start a new ledger)"
        )
    if not tables:
        raise LedgerForeign(f"{path}: an empty SQLite database, not this connector's ledger{untouched}")
    raise LedgerForeign(
        f"{path}: another application's SQLite database (tables {', '.join(tables[:3])}"
        f"{', ...' if len(tables) > 3 else ''}), not this connector's ledger{untouched}"
    )


def _has_migrations(connection: sqlite3.Connection) -> bool:
    return connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone() is not None


def refuse_too_new(version: int, path: Path) -> None:
    if version > SCHEMA_VERSION:
        raise LedgerTooNew(
            f"{path}: the ledger is at schema {version}, newer than this program's "
            f"{SCHEMA_VERSION}; run the newer program"
        )


def migrate(ledger: Ledger) -> None:
    """Apply each migration not yet recorded, each in its own immediate transaction (rule 2)."""
    from shell.ledger import rules  # noqa: PLC0415 -- the owner's alone: core's tables, no reader's

    with ledger.read() as connection:
        stamped = application_id(connection) == APPLICATION_ID  # rule 6: else an older one's, to stamp
        if stamped and schema_version(connection) == SCHEMA_VERSION and rules.in_force(connection):
            return  # rule 5: nothing to do
    with ledger.write() as transaction:
        transaction.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            "version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL) STRICT"
        )
        transaction.execute(f"PRAGMA application_id = {APPLICATION_ID}")  # rule 6: an older one's, stamped
        transaction.execute(f"PRAGMA user_version = {schema_version(transaction)}")
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
            transaction.execute(f"PRAGMA user_version = {migration.version}")  # rule 6
    with ledger.write() as transaction:
        rules.bring_up_to_date(transaction)  # rule 7
