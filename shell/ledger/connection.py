"""Opening the ledger: the three ways in, and what each checks before a ``Ledger`` is handed out.

Using a ``Ledger`` is ``shell.ledger.transactions``; where it may live ``shell.ledger.files``;
migrations ``shell.ledger.schema``; errors ``shell.ledger.errors``. Their public names are
importable from here too, where every caller imports them.

Rules:
1. Three ways in, by what the caller may do to the file; only the owner opens a missing one:
   - ``open_ledger``, the owner's (``run``; ``promote`` on its shadow copy): creates a missing
     file (owner-only, with the ledger's identity), ``quick_check``, WAL, migrates, brings the
     generated rules up to date, refuses a newer ledger.
   - ``open_existing_ledger``, another writer's (the worker's MCP server; a person's commands
     through ``shell.cli.decisions``): never creates or migrates, refuses any schema version but
     this program's; switching to WAL is its only write.
   - ``open_ledger_read_only``, a reader's (``status``, ``doctor``, ``resolve list|show``,
     ``promote``'s checks): ``mode=ro`` and ``query_only``, refuses a ledger out of date or too
     new, caches at most ``READ_ONLY_CACHE_KIB`` (a reader scans each index once).
2. The owner runs ``quick_check`` before it migrates: a damaged ledger is refused at start
   (``LedgerCorrupt``), not found by a loop later. What the disk or SQLite says while opening
   or migrating is a ``LedgerError`` (``shell.ledger.errors.ledger_failure``); a full disk
   rolls a migration back.
3. Every way in is ``synchronous = FULL``; only ``open_ledger``'s ``unsynced`` sets ``OFF``, for
   the simulation's throwaway ledgers in memory. The connector never passes it (a test checks).
4. Every way in refuses a file that is not this connector's ledger (``shell.ledger.schema`` rule 6)
   before anything reads or changes it; only a file this call created skips the question.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from urllib.parse import quote

from shell.clock import Clock, SystemClock
from shell.ledger.errors import (
    LedgerBusy,
    LedgerCorrupt,
    LedgerError,
    LedgerForeign,
    LedgerMissing,
    LedgerMisuse,
    LedgerNoSpace,
    LedgerNotPrivate,
    LedgerNotWritable,
    LedgerOutOfDate,
    LedgerPathRefused,
    LedgerTooNew,
    LedgerUnreadable,
    ledger_failure,
)
from shell.ledger.files import (
    check_private_directory,
    checked_file,
    checked_path,
    confirm_same_file,
    create_private_file,
    ensure_private_directory,
    tighten_sidecars,
)
from shell.ledger.schema import (
    MIGRATIONS,
    SCHEMA_VERSION,
    Migration,
    blank_ledger,
    migrate,
    refuse_foreign,
    refuse_too_new,
    schema_version,
    split_statements,
)
from shell.ledger.transactions import BUSY_TIMEOUT_SECONDS, SQL_NOW, Ledger, retry_busy, stored_time

__all__ = [
    "BUSY_TIMEOUT_SECONDS",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "SQL_NOW",
    "Ledger",
    "LedgerBusy",
    "LedgerCorrupt",
    "LedgerError",
    "LedgerForeign",
    "LedgerMissing",
    "LedgerMisuse",
    "LedgerNoSpace",
    "LedgerNotPrivate",
    "LedgerNotWritable",
    "LedgerOutOfDate",
    "LedgerPathRefused",
    "LedgerTooNew",
    "LedgerUnreadable",
    "Migration",
    "check_integrity",
    "ledger_failure",
    "open_existing_ledger",
    "open_ledger",
    "open_ledger_read_only",
    "schema_version",
    "split_statements",
    "stored_time",
]

READ_ONLY_CACHE_KIB = 256
"""The read-only connection's page cache (rule 1); SQLite's default is 2,000 KiB."""


def open_ledger(
    path: str | os.PathLike[str],
    *,
    clock: Clock | None = None,
    busy_timeout: float = BUSY_TIMEOUT_SECONDS,
    unsynced: bool = False,
) -> Ledger:
    """The owner's way in: create what is missing (owner-only), migrate, refuse a newer ledger.
    ``unsynced``: rule 3, the simulation's only."""
    clock = clock or SystemClock()
    ledger_path = checked_path(path)
    try:
        ensure_private_directory(ledger_path)
        created = create_private_file(ledger_path, blank_ledger())
    except OSError as error:
        raise ledger_failure(error, ledger_path, "create the ledger") from error
    identity = checked_file(ledger_path)
    connection = _connect(ledger_path, "rw", busy_timeout)
    try:
        _configure(connection, ledger_path, read_only=False, busy_timeout=busy_timeout, unsynced=unsynced)
        if not created:
            _refuse_foreign(connection, ledger_path, busy_timeout)
        refuse_too_new(_read_version(connection, ledger_path, busy_timeout), ledger_path)
        check_integrity(connection, ledger_path)
        _switch_to_wal(connection, ledger_path, busy_timeout)
        migrate(Ledger(connection, ledger_path, read_only=False, clock=clock, busy_timeout=busy_timeout))
        confirm_same_file(ledger_path, identity)
        tighten_sidecars(ledger_path)
    except (sqlite3.Error, OSError) as error:
        connection.close()
        raise ledger_failure(error, ledger_path, "open and migrate the ledger") from error
    except BaseException:
        connection.close()
        raise
    return Ledger(connection, ledger_path, read_only=False, clock=clock, busy_timeout=busy_timeout)


def open_existing_ledger(
    path: str | os.PathLike[str],
    *,
    clock: Clock | None = None,
    busy_timeout: float = BUSY_TIMEOUT_SECONDS,
) -> Ledger:
    """A worker's way in: never creates, never migrates, refuses any other schema version."""
    return _open_without_creating(path, read_only=False, clock=clock, busy_timeout=busy_timeout)


def open_ledger_read_only(
    path: str | os.PathLike[str],
    *,
    clock: Clock | None = None,
    busy_timeout: float = BUSY_TIMEOUT_SECONDS,
) -> Ledger:
    """``status``'s way in: ``mode=ro`` and ``query_only``; no migration, no write."""
    return _open_without_creating(path, read_only=True, clock=clock, busy_timeout=busy_timeout)


def _open_without_creating(
    path: str | os.PathLike[str], *, read_only: bool, clock: Clock | None, busy_timeout: float
) -> Ledger:
    ledger_path = checked_path(path)
    check_private_directory(ledger_path)
    identity = checked_file(ledger_path)
    connection = _connect(ledger_path, "ro" if read_only else "rw", busy_timeout)
    try:
        _configure(connection, ledger_path, read_only=read_only, busy_timeout=busy_timeout)
        _refuse_foreign(connection, ledger_path, busy_timeout)
        version = _read_version(connection, ledger_path, busy_timeout)
        refuse_too_new(version, ledger_path)
        if version < SCHEMA_VERSION:
            raise LedgerOutOfDate(
                f"{ledger_path}: the ledger is at schema {version}, this program needs "
                f"{SCHEMA_VERSION}; start the connector once to migrate it"
            )
        if not read_only:
            _switch_to_wal(connection, ledger_path, busy_timeout)
        confirm_same_file(ledger_path, identity)
        tighten_sidecars(ledger_path)
    except BaseException:
        connection.close()
        raise
    return Ledger(
        connection,
        ledger_path,
        read_only=read_only,
        clock=clock or SystemClock(),
        busy_timeout=busy_timeout,
    )


def _connect(path: Path, mode: str, busy_timeout: float) -> sqlite3.Connection:
    uri = f"file:{quote(str(path))}?mode={mode}"
    try:
        return sqlite3.connect(
            uri,
            uri=True,
            timeout=busy_timeout,
            isolation_level=None,
            check_same_thread=False,
        )
    except sqlite3.Error as error:
        raise LedgerUnreadable(f"{path}: SQLite cannot open the ledger: {error}") from error


def _configure(
    connection: sqlite3.Connection, path: Path, *, read_only: bool, busy_timeout: float, unsynced: bool = False
) -> None:
    try:
        connection.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        connection.execute("PRAGMA foreign_keys = ON")
        connection.execute("PRAGMA synchronous = OFF" if unsynced else "PRAGMA synchronous = FULL")
        if read_only:
            connection.execute("PRAGMA query_only = ON")
            connection.execute(f"PRAGMA cache_size = -{READ_ONLY_CACHE_KIB}")
    except sqlite3.DatabaseError as error:
        failure = ledger_failure(error, path, "open the ledger")
        if isinstance(failure, LedgerNotWritable | LedgerNoSpace):  # the disk, not the file
            raise failure from error
        raise LedgerUnreadable(f"{path}: SQLite cannot configure the ledger: {error}") from error


def check_integrity(connection: sqlite3.Connection, path: Path) -> None:
    """SQLite's ``quick_check`` of the whole file: a page damaged anywhere is ``LedgerCorrupt``
    before anything reads or writes it (rule 2)."""
    try:
        rows = connection.execute("PRAGMA quick_check").fetchall()
    except sqlite3.DatabaseError as error:
        raise LedgerCorrupt(f"{path}: the ledger is damaged ({error}); restore it from a copy") from error
    problems = [str(row[0]) for row in rows if row[0] != "ok"]
    if problems:
        more = f" and {len(problems) - 1} more" if len(problems) > 1 else ""
        raise LedgerCorrupt(
            f"{path}: the ledger is damaged (quick_check: {problems[0]}{more}); restore it from a copy"
        )


def _switch_to_wal(connection: sqlite3.Connection, path: Path, busy_timeout: float) -> None:
    row = retry_busy(
        lambda: connection.execute("PRAGMA journal_mode = WAL").fetchone(), busy_timeout, path
    )
    if row is None or str(row[0]).lower() != "wal":
        raise LedgerUnreadable(f"{path}: SQLite would not put the ledger in WAL mode")


def _refuse_foreign(connection: sqlite3.Connection, path: Path, busy_timeout: float) -> None:
    """Rule 4: before anything reads the file's tables or changes it."""
    try:
        retry_busy(lambda: refuse_foreign(connection, path), busy_timeout, path)
    except sqlite3.DatabaseError as error:
        raise LedgerUnreadable(f"{path}: not a ledger SQLite can read: {error}") from error


def _read_version(connection: sqlite3.Connection, path: Path, busy_timeout: float) -> int:
    try:
        return retry_busy(lambda: schema_version(connection), busy_timeout, path)
    except sqlite3.DatabaseError as error:
        raise LedgerUnreadable(f"{path}: not a ledger SQLite can read: {error}") from error
