"""The ledger: one SQLite file, the connector's whole durable state. Open and transact.

Where a ledger may live and its privacy are ``shell.ledger.files``; the migrations and their
runner ``shell.ledger.schema``; the errors ``shell.ledger.errors``. Their public names are
importable from here too, where every caller imports them.

Rules:
1. Three ways in. ``open_ledger``: the owner (the connector, a person's decision commands)
   creates and migrates. ``open_existing_ledger``: a worker's server never creates, never
   migrates, and refuses any schema version but this program's. ``open_ledger_read_only``:
   ``status`` reads through ``mode=ro`` and ``query_only``, never migrates, never writes, and
   refuses a ledger that is out of date or too new. Nothing opens a missing file but the owner.
   The read-only way keeps at most ``READ_ONLY_CACHE_KIB`` of pages in memory: status scans
   each index once, so a larger page cache buys it nothing and would grow with the ledger.
2. One connection per ``Ledger``, in autocommit mode (no implicit transactions); a lock
   makes one thread at a time use it. Every write is ``with ledger.write() as connection:``,
   a ``BEGIN IMMEDIATE`` transaction that commits at the end of the block and rolls back on
   any exception (which is re-raised). A consistent multi-query read is ``ledger.read()``.
   Transactions do not nest.
3. SQLite's busy handler is not consulted for every lock (switching a fresh file to WAL),
   so opening a transaction and switching to WAL retry on ``SQLITE_BUSY``/``SQLITE_LOCKED``
   for up to five seconds, every 20 ms; then ``LedgerBusy``. Waiting on a lock is real time,
   not the clock's: a fake clock must not make a lock give up early.
4. Times written from Python use ``core.timestamps.format_timestamp`` (``ledger.timestamp()``);
   SQL-side stamps use ``SQL_NOW``, the same fixed width. A time column that may be NULL is
   read back through ``stored_time`` (NULL -> None).
5. The owner's way in runs SQLite's ``quick_check`` before it migrates: a ledger damaged in the
   middle is refused at start, one line (``LedgerCorrupt``), never found by a loop later. What
   the disk or SQLite says while opening or migrating is a ``LedgerError`` naming it
   (``shell.ledger.errors.ledger_failure``): a full disk during a migration rolls it back.
6. A ``Ledger`` may keep a record of its failed writes (``write_failures``, the running
   connector's: ``shell.ledger.write_failures``): a write whose storage failed is recorded
   there before its error is raised on, and the next write that commits clears it.
7. Every way in is ``synchronous = FULL``; ``open_ledger``'s ``unsynced`` keyword alone sets
   ``OFF``: for the simulation's throwaway ledgers on a memory-backed directory, where a power
   loss loses nothing worth keeping. The connector never passes it (a test reads shell/ for it).
8. Every way in refuses a file that is not this connector's ledger (``shell.ledger.schema``
   rule 6) before anything else reads or changes it: before ``quick_check``, before the switch
   to WAL, before a migration. Only a file this call created skips the question.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import Literal, TypeVar
from urllib.parse import quote

from core.timestamps import format_timestamp, parse_timestamp
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
    is_storage_failure,
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
from shell.ledger.write_failures import WriteFailures

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

BUSY_TIMEOUT_SECONDS = 5.0
BUSY_RETRY_SLEEP_SECONDS = 0.020
READ_ONLY_CACHE_KIB = 256
"""The read-only connection's page cache (rule 1); SQLite's default is 2,000 KiB."""
SQL_NOW = "strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000000Z'"


def stored_time(value: object) -> datetime | None:
    """A time column's value as a datetime; None where the column is NULL (rule 4)."""
    return None if value is None else parse_timestamp(str(value))


_BUSY_CODES = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)

_Result = TypeVar("_Result")


# The ledger.


class Ledger:
    """One SQLite connection to one ledger file. Use ``write()`` and ``read()``."""

    def __init__(
        self,
        connection: sqlite3.Connection,
        path: Path,
        *,
        read_only: bool,
        clock: Clock,
        busy_timeout: float,
    ) -> None:
        self._connection = connection
        self._lock = threading.RLock()
        self._closed = False
        self.path = path
        self.read_only = read_only
        self.clock = clock
        self.busy_timeout = busy_timeout
        self.write_failures: WriteFailures | None = None  # rule 6

    def timestamp(self) -> str:
        """Now, as the ledger stores time."""
        return format_timestamp(self.clock.now())

    def write(self) -> _Write:
        """A write transaction: BEGIN IMMEDIATE, COMMIT at the end, ROLLBACK on any exception."""
        if self.read_only:
            raise LedgerMisuse(f"{self.path}: this ledger was opened read-only")
        return _Write(self)

    def read(self) -> AbstractContextManager[sqlite3.Connection]:
        """A read snapshot: every query in the block sees the same committed state."""
        return self._transaction("BEGIN DEFERRED")

    def schema_version(self) -> int:
        with self.read() as connection:
            return schema_version(connection)

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._connection.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _transaction(self, begin: str) -> _Transaction:
        return _Transaction(self, begin)


class _Transaction:
    """One transaction on a ledger's connection (rule 2), under its lock: ``begin`` on entry,
    COMMIT at a clean exit, ROLLBACK on any exception, which is raised again. A class, not a
    generator: the connector opens thousands a minute, and a generator's context costs more."""

    __slots__ = ("_begin", "_ledger")

    def __init__(self, ledger: Ledger, begin: str) -> None:
        self._ledger = ledger
        self._begin = begin

    def __enter__(self) -> sqlite3.Connection:
        ledger = self._ledger
        ledger._lock.acquire()
        try:
            if ledger._closed:
                raise LedgerMisuse(f"{ledger.path}: this ledger is closed")
            connection = ledger._connection
            if connection.in_transaction:
                raise LedgerMisuse(f"{ledger.path}: a transaction is already open; they do not nest")
            _retry_busy(lambda: connection.execute(self._begin), ledger.busy_timeout, ledger.path)
        except BaseException:
            ledger._lock.release()
            raise
        return connection

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: object) -> Literal[False]:
        connection = self._ledger._connection
        try:
            if kind is None:
                try:
                    connection.execute("COMMIT")
                except BaseException:
                    if connection.in_transaction:
                        connection.execute("ROLLBACK")
                    raise
            elif connection.in_transaction:
                connection.execute("ROLLBACK")  # the block failed
        finally:
            self._ledger._lock.release()
        return False  # the block's exception is raised again, after the rollback


class _Write(_Transaction):
    """A write transaction whose storage failure -- at its BEGIN, in its block, at its COMMIT -- is
    recorded (rule 6), and whose clean COMMIT clears the record. A class like ``_Transaction``:
    every intent the outbox sends opens two."""

    __slots__ = ()

    def __init__(self, ledger: Ledger) -> None:
        super().__init__(ledger, "BEGIN IMMEDIATE")

    def __enter__(self) -> sqlite3.Connection:
        try:
            return super().__enter__()
        except (sqlite3.Error, OSError) as error:
            self._failed(error)
            raise

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: object) -> Literal[False]:
        try:
            super().__exit__(kind, error, trace)
        except (sqlite3.Error, OSError) as failure:
            self._failed(failure)
            raise
        failures = self._ledger.write_failures
        if failures is not None:
            if kind is None:
                failures.succeeded()
            elif isinstance(error, (sqlite3.Error, OSError)):
                self._failed(error)
        return False

    def _failed(self, error: BaseException) -> None:
        failures = self._ledger.write_failures
        if failures is not None and is_storage_failure(error):
            failures.failed(error, self._ledger.clock.now())


def _retry_busy(action: Callable[[], _Result], timeout: float, path: Path) -> _Result:
    """Run ``action``, again every 20 ms while SQLite answers busy or locked, up to ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return action()
        except sqlite3.OperationalError as error:
            code = error.sqlite_errorcode & 0xFF
            if code not in _BUSY_CODES:
                raise
            if time.monotonic() >= deadline:
                raise LedgerBusy(
                    f"{path}: another process holds the ledger's lock; gave up after {timeout:g} s"
                ) from error
            time.sleep(BUSY_RETRY_SLEEP_SECONDS)


# Opening.


def open_ledger(
    path: str | os.PathLike[str],
    *,
    clock: Clock | None = None,
    busy_timeout: float = BUSY_TIMEOUT_SECONDS,
    unsynced: bool = False,
) -> Ledger:
    """The owner's way in: create what is missing (owner-only), migrate, refuse a newer ledger.
    ``unsynced``: rule 7, the simulation's only."""
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
    before anything reads or writes it (rule 5)."""
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
    row = _retry_busy(
        lambda: connection.execute("PRAGMA journal_mode = WAL").fetchone(), busy_timeout, path
    )
    if row is None or str(row[0]).lower() != "wal":
        raise LedgerUnreadable(f"{path}: SQLite would not put the ledger in WAL mode")


def _refuse_foreign(connection: sqlite3.Connection, path: Path, busy_timeout: float) -> None:
    """Rule 8: before anything reads the file's tables or changes it."""
    try:
        _retry_busy(lambda: refuse_foreign(connection, path), busy_timeout, path)
    except sqlite3.DatabaseError as error:
        raise LedgerUnreadable(f"{path}: not a ledger SQLite can read: {error}") from error


def _read_version(connection: sqlite3.Connection, path: Path, busy_timeout: float) -> int:
    try:
        return _retry_busy(lambda: schema_version(connection), busy_timeout, path)
    except sqlite3.DatabaseError as error:
        raise LedgerUnreadable(f"{path}: not a ledger SQLite can read: {error}") from error
