"""The ledger object: one SQLite connection to one ledger file, and its transactions.

How a ``Ledger`` is made (created, checked, migrated, opened read-only) is
``shell.ledger.connection``'s; this module is what every caller does with one afterwards.

Rules:
1. One connection per ``Ledger``, in autocommit mode (no implicit transactions); a lock
   makes one thread at a time use it. Every write is ``with ledger.write() as connection:``,
   a ``BEGIN IMMEDIATE`` transaction that commits at the end of the block and rolls back on
   any exception (which is re-raised). A consistent multi-query read is ``ledger.read()``.
   Transactions do not nest.
2. SQLite's busy handler is not consulted for every lock (switching a fresh file to WAL),
   so opening a transaction and switching to WAL retry on ``SQLITE_BUSY``/``SQLITE_LOCKED``
   for up to five seconds, every 20 ms (``retry_busy``); then ``LedgerBusy``. Waiting on a lock
   is real time, not the clock's: a fake clock must not make a lock give up early.
3. Times written from Python use ``core.timestamps.format_timestamp`` (``ledger.timestamp()``);
   SQL-side stamps use ``SQL_NOW``, the same fixed width. A time column that may be NULL is
   read back through ``stored_time`` (NULL -> None).
4. A ``Ledger`` may keep a record of its failed writes (``write_failures``, the running
   connector's: ``shell.ledger.write_failures``): a write whose storage failed is recorded
   there before its error is raised on, and the next write that commits clears it.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import Literal, TypeVar

from core.timestamps import format_timestamp, parse_timestamp
from shell.clock import Clock
from shell.ledger.errors import LedgerBusy, LedgerMisuse, is_storage_failure
from shell.ledger.schema import schema_version
from shell.ledger.write_failures import WriteFailures

BUSY_TIMEOUT_SECONDS = 5.0
BUSY_RETRY_SLEEP_SECONDS = 0.020
SQL_NOW = "strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000000Z'"


def stored_time(value: object) -> datetime | None:
    """A time column's value as a datetime; None where the column is NULL (rule 3)."""
    return None if value is None else parse_timestamp(str(value))


_BUSY_CODES = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)

_Result = TypeVar("_Result")


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
        self.write_failures: WriteFailures | None = None  # rule 4
        # A transaction holds nothing of one use (its state is the ledger's lock and connection),
        # so each kind is made once and handed out again: the outbox opens two an intent.
        self._write = _Transaction(self, "BEGIN IMMEDIATE", records=True)
        self._read = _Transaction(self, "BEGIN DEFERRED")

    def timestamp(self) -> str:
        """Now, as the ledger stores time."""
        return format_timestamp(self.clock.now())

    def write(self) -> _Transaction:
        """A write transaction: BEGIN IMMEDIATE, COMMIT at the end, ROLLBACK on any exception."""
        if self.read_only:
            raise LedgerMisuse(f"{self.path}: this ledger was opened read-only")
        return self._write

    def read(self) -> AbstractContextManager[sqlite3.Connection]:
        """A read snapshot: every query in the block sees the same committed state."""
        return self._read

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


class _Transaction:
    """One transaction on a ledger's connection (rule 1), under its lock: ``begin`` on entry,
    COMMIT at a clean exit, ROLLBACK on any exception, which is raised again. A write's
    (``records``) storage failure -- at its BEGIN, in its block, at its COMMIT -- is recorded,
    and its clean COMMIT clears the record (rule 4). One class, no generator, no parent's
    methods to call: every intent the outbox sends opens two (``bin/bench outbox``)."""

    __slots__ = ("_begin", "_ledger", "_records")

    def __init__(self, ledger: Ledger, begin: str, records: bool = False) -> None:
        self._ledger = ledger
        self._begin = begin
        self._records = records

    def __enter__(self) -> sqlite3.Connection:
        ledger = self._ledger
        ledger._lock.acquire()
        try:
            if ledger._closed:
                raise LedgerMisuse(f"{ledger.path}: this ledger is closed")
            connection = ledger._connection
            if connection.in_transaction:
                raise LedgerMisuse(f"{ledger.path}: a transaction is already open; they do not nest")
            try:
                connection.execute(self._begin)
            except sqlite3.OperationalError:  # busy, perhaps: rule 2 tries again (or raises what it is)
                retry_busy(connection.execute, ledger.busy_timeout, ledger.path, self._begin)
        except BaseException as error:
            ledger._lock.release()
            if self._records and isinstance(error, (sqlite3.Error, OSError)):
                self._failed(error)
            raise
        return connection

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: object) -> Literal[False]:
        ledger = self._ledger
        connection = ledger._connection
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
        except BaseException as failure:
            ledger._lock.release()
            if self._records and isinstance(failure, (sqlite3.Error, OSError)):
                self._failed(failure)
            raise
        ledger._lock.release()
        failures = ledger.write_failures
        if self._records and failures is not None:
            if kind is None:
                failures.succeeded()
            elif isinstance(error, (sqlite3.Error, OSError)):
                self._failed(error)
        return False  # the block's exception is raised again, after the rollback

    def _failed(self, error: BaseException) -> None:
        failures = self._ledger.write_failures
        if failures is not None and is_storage_failure(error):
            failures.failed(error, self._ledger.clock.now())


def retry_busy(action: Callable[..., _Result], timeout: float, path: Path, *args: object) -> _Result:
    """Run ``action(*args)``, again every 20 ms while SQLite answers busy or locked, up to
    ``timeout`` from the first busy answer (a transaction's BEGIN asks the clock only then)."""
    deadline: float | None = None
    while True:
        try:
            return action(*args)
        except sqlite3.OperationalError as error:
            code = error.sqlite_errorcode & 0xFF
            if code not in _BUSY_CODES:
                raise
            if deadline is None:
                deadline = time.monotonic() + timeout
            if time.monotonic() >= deadline:
                raise LedgerBusy(
                    f"{path}: another process holds the ledger's lock; gave up after {timeout:g} s"
                ) from error
            time.sleep(BUSY_RETRY_SLEEP_SECONDS)
