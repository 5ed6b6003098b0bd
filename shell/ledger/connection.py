"""The ledger: one SQLite file, the connector's whole durable state. Open, migrate, transact.

Rules:
1. One file, never in memory: a ledger's whole promise is that a crash is a delay. An empty
   path, an in-memory name, an SQLite URI and a path holding ``?``, ``#`` or ``%`` are
   refused before SQLite sees them.
2. The ledger is a credential file (it holds feed positions). The file must be a regular
   file, not a symlink, owned by this user, with no group or other permission bits; its
   directory must be this user's and owner-only (0700). A looser existing file or directory
   is refused, never tightened. ``open_ledger`` creates what is missing owner-only (each
   missing directory 0700, the file 0600); the ``-wal``/``-shm`` sidecars are set to 0600
   after every open.
3. Three ways in. ``open_ledger``: the owner (the connector, a person's decision commands)
   creates and migrates. ``open_existing_ledger``: a worker's server never creates, never
   migrates, and refuses any schema version but this program's. ``open_ledger_read_only``:
   ``status`` reads through ``mode=ro`` and ``query_only``, never migrates, never writes, and
   refuses a ledger that is out of date or too new. Nothing opens a missing file but the owner.
4. A ledger written by a newer program is refused (``LedgerTooNew``): an older program does
   not understand the rows and triggers a newer one relies on.
5. Migrations are numbered files ``shell/migrations/NNNN_name.sql``, never edited once
   shipped. Each runs in its own ``BEGIN IMMEDIATE`` transaction that re-reads the recorded
   version inside it, so two processes opening a fresh ledger apply each migration once.
6. One connection per ``Ledger``, in autocommit mode (no implicit transactions); a lock
   makes one thread at a time use it. Every write is ``with ledger.write() as connection:``,
   a ``BEGIN IMMEDIATE`` transaction that commits at the end of the block and rolls back on
   any exception (which is re-raised). A consistent multi-query read is ``ledger.read()``.
   Transactions do not nest.
7. SQLite's busy handler is not consulted for every lock (switching a fresh file to WAL),
   so opening a transaction and switching to WAL retry on ``SQLITE_BUSY``/``SQLITE_LOCKED``
   for up to five seconds, every 20 ms; then ``LedgerBusy``. Waiting on a lock is real time,
   not the clock's: a fake clock must not make a lock give up early.
8. Times written from Python use ``core.timestamps.format_timestamp`` (``ledger.timestamp()``);
   SQL-side stamps use ``SQL_NOW``, the same fixed width.
"""

from __future__ import annotations

import os
import re
import sqlite3
import stat
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TypeVar
from urllib.parse import quote

from core.timestamps import format_timestamp
from shell.clock import Clock, SystemClock
from shell.errors import EXIT_CONFIG, EXIT_UNAVAILABLE, UserError

BUSY_TIMEOUT_SECONDS = 5.0
BUSY_RETRY_SLEEP_SECONDS = 0.020
SQL_NOW = "strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000000Z'"

_FILE_MODE = 0o600
_DIRECTORY_MODE = 0o700
_PRIVATE_BITS = 0o077
_URI_CHARACTERS = ("?", "#", "%")
_BUSY_CODES = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
_MIGRATION_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")

_Result = TypeVar("_Result")
_creation_lock = threading.Lock()


# Errors: each a line a person can act on (exit code EXIT_CONFIG unless noted).


class LedgerError(UserError):
    """A ledger that cannot be opened or used as asked."""

    exit_code = EXIT_CONFIG


class LedgerPathRefused(LedgerError):
    """The path is not one a ledger may live at (empty, in memory, a URI, a symlink...)."""


class LedgerNotPrivate(LedgerError):
    """The file or its directory could be read or changed by someone else."""


class LedgerMissing(LedgerError):
    """No ledger at the path, and this way in never creates one."""


class LedgerTooNew(LedgerError):
    """A newer program wrote this ledger."""


class LedgerOutOfDate(LedgerError):
    """An older program wrote this ledger and the connector has not migrated it yet."""


class LedgerUnreadable(LedgerError):
    """The file is not an SQLite database SQLite can open."""


class LedgerBusy(LedgerError):
    """Another process held the write lock past the busy timeout."""

    exit_code = EXIT_UNAVAILABLE


class LedgerMisuse(RuntimeError):
    """A programming error: a nested transaction, a write on a read-only ledger, a closed one."""


# Migrations.


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


def _load_migrations() -> tuple[Migration, ...]:
    found: list[Migration] = []
    for entry in resources.files("shell.ledger.migrations").iterdir():
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
    """The statements of a script, each whole (triggers included), comments kept in place.

    ``executescript`` would COMMIT the migration's transaction first, so statements run one
    at a time inside it.
    """
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

    def timestamp(self) -> str:
        """Now, as the ledger stores time."""
        return format_timestamp(self.clock.now())

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction: BEGIN IMMEDIATE, COMMIT at the end, ROLLBACK on any exception."""
        if self.read_only:
            raise LedgerMisuse(f"{self.path}: this ledger was opened read-only")
        with self._transaction("BEGIN IMMEDIATE") as connection:
            yield connection

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A read snapshot: every query in the block sees the same committed state."""
        with self._transaction("BEGIN DEFERRED") as connection:
            yield connection

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

    @contextmanager
    def _transaction(self, begin: str) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._closed:
                raise LedgerMisuse(f"{self.path}: this ledger is closed")
            if self._connection.in_transaction:
                raise LedgerMisuse(f"{self.path}: a transaction is already open; they do not nest")
            _retry_busy(lambda: self._connection.execute(begin), self.busy_timeout, self.path)
            try:
                yield self._connection
                self._connection.execute("COMMIT")
            except BaseException:
                if self._connection.in_transaction:
                    self._connection.execute("ROLLBACK")
                raise


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
) -> Ledger:
    """The owner's way in: create what is missing (owner-only), migrate, refuse a newer ledger."""
    clock = clock or SystemClock()
    ledger_path = _checked_path(path)
    _ensure_private_directory(ledger_path.parent)
    _create_private_file(ledger_path)
    identity = _checked_file(ledger_path)
    connection = _connect(ledger_path, "rw", busy_timeout)
    try:
        _configure(connection, ledger_path, read_only=False, busy_timeout=busy_timeout)
        _refuse_too_new(_read_version(connection, ledger_path, busy_timeout), ledger_path)
        _switch_to_wal(connection, ledger_path, busy_timeout)
        _migrate(connection, ledger_path, clock, busy_timeout)
        _confirm_same_file(ledger_path, identity)
        _tighten_sidecars(ledger_path)
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
    ledger_path = _checked_path(path)
    _check_private_directory(ledger_path.parent)
    identity = _checked_file(ledger_path)
    connection = _connect(ledger_path, "ro" if read_only else "rw", busy_timeout)
    try:
        _configure(connection, ledger_path, read_only=read_only, busy_timeout=busy_timeout)
        version = _read_version(connection, ledger_path, busy_timeout)
        _refuse_too_new(version, ledger_path)
        if version < SCHEMA_VERSION:
            raise LedgerOutOfDate(
                f"{ledger_path}: the ledger is at schema {version}, this program needs "
                f"{SCHEMA_VERSION}; start the connector once to migrate it"
            )
        if not read_only:
            _switch_to_wal(connection, ledger_path, busy_timeout)
        _confirm_same_file(ledger_path, identity)
        _tighten_sidecars(ledger_path)
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


def _checked_path(path: str | os.PathLike[str]) -> Path:
    text = os.fspath(path)
    if text == "":
        raise LedgerPathRefused(
            "the ledger path is empty (SQLite would make a temporary database): "
            "a ledger's whole promise is that a crash is a delay"
        )
    if text == ":memory:" or text.startswith("file::memory:"):
        raise LedgerPathRefused(
            f"{text}: an in-memory ledger is refused: "
            "a ledger's whole promise is that a crash is a delay"
        )
    if text.startswith("file:"):
        raise LedgerPathRefused(f"{text}: a ledger is a file path, not an SQLite URI")
    absolute = os.path.abspath(text)
    for character in _URI_CHARACTERS:
        if character in absolute:
            raise LedgerPathRefused(
                f"{absolute}: a ledger path may not hold {character!r} (SQLite reads it in a URI)"
            )
    if not hasattr(os, "getuid"):
        raise LedgerNotPrivate(f"{absolute}: this platform has no file owners to check")
    return Path(absolute)


def _ensure_private_directory(directory: Path) -> None:
    """Create each missing directory of the chain 0700, then check the last one."""
    missing: list[Path] = []
    cursor = directory
    while not os.path.lexists(cursor):
        missing.append(cursor)
        cursor = cursor.parent
    for created in reversed(missing):
        with suppress(FileExistsError):  # another process made it; it is checked all the same
            os.mkdir(created, _DIRECTORY_MODE)
    _check_private_directory(directory)


def _check_private_directory(directory: Path) -> None:
    try:
        status = os.stat(directory)
    except FileNotFoundError:
        raise LedgerMissing(f"{directory}: the ledger's directory does not exist") from None
    if not stat.S_ISDIR(status.st_mode):
        raise LedgerPathRefused(f"{directory}: the ledger's directory is not a directory")
    if status.st_uid != os.getuid():
        raise LedgerNotPrivate(f"{directory}: the ledger's directory belongs to another user")
    if status.st_mode & _PRIVATE_BITS:
        raise LedgerNotPrivate(
            f"{directory}: the ledger's directory is mode {stat.S_IMODE(status.st_mode):o}; "
            "it must be owner-only (chmod 700), or others could list and swap its files"
        )


def _create_private_file(path: Path) -> None:
    """Create the file 0600 if it is missing. The only descriptor this module opens on a ledger
    is this one, on a file it just created, under a lock every opener in the process takes
    first: closing a descriptor drops every POSIX lock the process holds on the file,
    SQLite's included, so none may be open on a file SQLite is using."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    with _creation_lock:
        try:
            descriptor = os.open(path, flags, _FILE_MODE)
        except FileExistsError:
            return
        os.close(descriptor)


def _checked_file(path: Path) -> tuple[int, int]:
    """Vet the ledger file without following a symlink; its (device, inode)."""
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        raise LedgerMissing(
            f"{path}: no ledger here; the connector creates it on its first run"
        ) from None
    if stat.S_ISLNK(status.st_mode):
        raise LedgerPathRefused(f"{path}: the ledger is a symlink; name the file itself")
    if not stat.S_ISREG(status.st_mode):
        raise LedgerPathRefused(f"{path}: the ledger is not a regular file")
    if status.st_uid != os.getuid():
        raise LedgerNotPrivate(f"{path}: the ledger belongs to another user")
    if status.st_mode & _PRIVATE_BITS:
        raise LedgerNotPrivate(
            f"{path}: the ledger is mode {stat.S_IMODE(status.st_mode):o}; it holds feed "
            "positions and must be owner-only (chmod 600)"
        )
    return status.st_dev, status.st_ino


def _confirm_same_file(path: Path, identity: tuple[int, int]) -> None:
    if _checked_file(path) != identity:
        raise LedgerPathRefused(f"{path}: the ledger file was replaced while it was opened")


def _tighten_sidecars(path: Path) -> None:
    """The -wal and -shm files hold the same rows; they get the file's privacy."""
    for suffix in ("-wal", "-shm"):
        sidecar = Path(f"{path}{suffix}")
        try:
            status = os.lstat(sidecar)
        except FileNotFoundError:
            continue
        if not stat.S_ISREG(status.st_mode) or status.st_uid != os.getuid():
            raise LedgerNotPrivate(f"{sidecar}: not a regular file of this user")
        if stat.S_IMODE(status.st_mode) != _FILE_MODE:
            os.chmod(sidecar, _FILE_MODE)


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
    connection: sqlite3.Connection, path: Path, *, read_only: bool, busy_timeout: float
) -> None:
    try:
        connection.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        connection.execute("PRAGMA foreign_keys = ON")
        connection.execute("PRAGMA synchronous = FULL")
        if read_only:
            connection.execute("PRAGMA query_only = ON")
    except sqlite3.DatabaseError as error:
        raise LedgerUnreadable(f"{path}: SQLite cannot configure the ledger: {error}") from error


def _switch_to_wal(connection: sqlite3.Connection, path: Path, busy_timeout: float) -> None:
    row = _retry_busy(
        lambda: connection.execute("PRAGMA journal_mode = WAL").fetchone(), busy_timeout, path
    )
    if row is None or str(row[0]).lower() != "wal":
        raise LedgerUnreadable(f"{path}: SQLite would not put the ledger in WAL mode")


def _read_version(connection: sqlite3.Connection, path: Path, busy_timeout: float) -> int:
    try:
        return _retry_busy(lambda: schema_version(connection), busy_timeout, path)
    except sqlite3.DatabaseError as error:
        raise LedgerUnreadable(f"{path}: not a ledger SQLite can read: {error}") from error


def _refuse_too_new(version: int, path: Path) -> None:
    if version > SCHEMA_VERSION:
        raise LedgerTooNew(
            f"{path}: the ledger is at schema {version}, newer than this program's "
            f"{SCHEMA_VERSION}; run the newer program"
        )


def _migrate(connection: sqlite3.Connection, path: Path, clock: Clock, busy_timeout: float) -> None:
    """Apply each migration not yet recorded, each in its own immediate transaction."""
    ledger = Ledger(connection, path, read_only=False, clock=clock, busy_timeout=busy_timeout)
    with ledger.write() as transaction:
        transaction.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            "version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL) STRICT"
        )
    for migration in MIGRATIONS:
        with ledger.write() as transaction:
            recorded = schema_version(transaction)  # re-read inside: another may have applied it
            _refuse_too_new(recorded, path)
            if recorded >= migration.version:
                continue
            for statement in split_statements(migration.sql):
                transaction.execute(statement)
            transaction.execute(
                "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
                (migration.version, ledger.timestamp()),
            )
