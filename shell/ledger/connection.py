"""Opening a ledger and using it: where it lives, the three ways in, schema, transactions, errors.

A ledger is one SQLite file, never in memory (its promise is that a crash is a delay), and a
credential file: this user's, owner-only, in an owner-only directory; looser is refused, never
tightened. It carries this connector's identity (``application_id``) from its first byte and its
schema version (``user_version``); any other file is refused before anything reads or changes it.
Only the owner's way in (``open_ledger``) creates, checks the whole file, migrates (each numbered
migration in its own ``BEGIN IMMEDIATE``, then core's generated rules) and costs one read when the
ledger is up to date; another writer's and a reader's ways in refuse any schema but this program's.
Every way in is ``synchronous = FULL``, but the simulation's ``unsynced``. Every write is ``with
ledger.write() as connection:``, a ``BEGIN IMMEDIATE`` that commits at the end of the block and
rolls back on any exception; ``read()`` is one snapshot; they do not nest, and a busy lock is
retried for the busy timeout, in real time. What the disk or SQLite says is one ``LedgerError`` a
person can act on (exit 3, so a supervisor does not restart into it; busy is exit 69: it passes)."""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import resource
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, closing, contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeVar
from urllib.parse import quote

from core.file_kinds import FileKind
from core.json_input import json_or_none
from core.timestamps import format_timestamp, parse_timestamp
from shell import private_files
from shell.clock import Clock, SystemClock
from shell.errors import EXIT_CONFIG, EXIT_UNAVAILABLE, UserError

if TYPE_CHECKING:
    from core.presentation.status_values import WriteFailure

log = logging.getLogger("connector.ledger")

BUSY_TIMEOUT_SECONDS = 5.0
BUSY_RETRY_SLEEP_SECONDS = 0.020
SQL_NOW = "strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000000Z'"
READ_ONLY_CACHE_KIB = 256  # a reader scans each index once; SQLite's default is 2,000 KiB
MIGRATIONS_DIRECTORY = Path(__file__).with_name("migrations")
# found by path: importlib.resources would cost every start ~2% of `bin/connect status`'s
APPLICATION_ID = 0x42434E31  # BCN1, in SQLite's header: this connector's ledger
MAX_PROBLEMS = 20


# -- errors -------------------------------------------------------------------------------------


class LedgerError(UserError):
    """A ledger that cannot be opened or used as asked."""

    exit_code = EXIT_CONFIG


class LedgerPathRefused(LedgerError):
    """Not a path a ledger may live at (empty, in memory, a URI, a symlink...)."""


class LedgerNotPrivate(LedgerError):
    """The file or its directory could be read or changed by someone else."""


class LedgerMissing(LedgerError):
    """No ledger at the path, and this way in never creates one."""


class LedgerTooNew(LedgerError):
    """A newer program wrote this ledger."""


class LedgerOutOfDate(LedgerError):
    """An older program wrote this ledger and the connector has not migrated it yet."""


class LedgerForeign(LedgerError):
    """The file is not this connector's ledger: empty, or another application's database."""


class LedgerUnreadable(LedgerError):
    """The file is not an SQLite database SQLite can open."""


class LedgerCorrupt(LedgerError):
    """SQLite's integrity check, or SQLite itself, says the file is damaged."""


class LedgerNoSpace(LedgerError):
    """The disk is full, or the file may not grow: the write was rolled back, nothing is lost."""


class LedgerNotWritable(LedgerError):
    """The ledger, or the directory it and its journal live in, cannot be written."""


class LedgerBusy(LedgerError):
    """Another process held the write lock past the busy timeout."""

    exit_code = EXIT_UNAVAILABLE


class LedgerMisuse(RuntimeError):
    """A programming error, not a person's: a nested transaction, a write read-only, a closed ledger."""


_NO_SPACE = frozenset({errno.ENOSPC, errno.EFBIG, errno.EDQUOT})
_NOT_WRITABLE = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})
_CORRUPT_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
_NOT_WRITABLE_CODES = frozenset({sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM})
_STORAGE_CODES = _CORRUPT_CODES | _NOT_WRITABLE_CODES | {sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR}
_BUSY_CODES = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def ledger_failure(error: sqlite3.Error | OSError, path: Path, doing: str) -> LedgerError:
    """The ``LedgerError`` a person reads for what the disk or SQLite said while ``doing``."""
    if isinstance(error, OSError):
        said = error.strerror or str(error)
        if error.errno in _NO_SPACE:
            return LedgerNoSpace(f"{path}: no space to {doing} ({said}); free some, then try again")
        if error.errno in _NOT_WRITABLE:
            return LedgerNotWritable(f"{path}: cannot {doing}: {said}; the state directory must be writable")
        return LedgerError(f"{path}: cannot {doing}: {said}")
    code = getattr(error, "sqlite_errorcode", 0) & 0xFF
    if code == sqlite3.SQLITE_BUSY:
        return LedgerBusy(f"{path}: another process holds the ledger's lock while trying to {doing}")
    cannot_grow = _cannot_grow(path) if code == sqlite3.SQLITE_IOERR else ""
    if cannot_grow:  # SQLite's bare "disk I/O error" where a file may not grow: no space
        code = sqlite3.SQLITE_FULL
    if code == sqlite3.SQLITE_FULL or (code == sqlite3.SQLITE_IOERR and "write" in str(error).lower()):
        return LedgerNoSpace(
            f"{path}: no space to {doing} ({error}{cannot_grow}); what was being written was rolled back; "
            "free some, then try again"
        )
    if code in _CORRUPT_CODES:
        return LedgerCorrupt(f"{path}: the ledger is damaged ({error}); restore it from a copy")
    if code in _NOT_WRITABLE_CODES:
        return LedgerNotWritable(f"{path}: cannot {doing}: {error}; the state directory must be writable")
    return LedgerError(f"{path}: SQLite failed to {doing}: {error}")


def _cannot_grow(path: Path) -> str:
    """Why a file beside ``path`` may not grow (SQLite's only words for a ``-shm`` or ``-wal`` it
    could not grow are "disk I/O error"): a full disk, or ``ulimit -f``; "" when neither."""
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    if limit != resource.RLIM_INFINITY:
        return f"; this process may write files of at most {limit} bytes: ulimit -f"
    measured = disk_space(path if path.is_dir() else path.parent)
    return "; the disk is full" if measured is not None and measured[0] == 0 else ""


def disk_space(directory: Path) -> tuple[int, int] | None:
    """The free and whole bytes of the file system ``directory`` is on; None when they cannot be measured."""
    try:
        measured = os.statvfs(directory)
    except OSError:
        return None
    return measured.f_bavail * measured.f_frsize, measured.f_blocks * measured.f_frsize


def is_storage_failure(error: BaseException) -> bool:
    """Whether the ledger's storage failed (full, I/O, read-only, cannot open, damaged): what
    ``WriteFailures`` records. A busy lock, a refused move (a constraint or a trigger) or a bug is not."""
    if isinstance(error, OSError):
        return error.errno in _NO_SPACE | _NOT_WRITABLE | {errno.EIO}
    if not isinstance(error, sqlite3.Error):
        return False
    code = getattr(error, "sqlite_errorcode", 0) & 0xFF
    return code in _STORAGE_CODES


# -- where a ledger may live: shell.private_files' one policy, in the ledger's words -------------

_URI_CHARACTERS = ("?", "#", "%")
_DIRECTORY = "the ledger's directory"
_DIRECTORY_REASON = "it must be owner-only, or others could list and swap its files"
_NO_LEDGER = "no ledger here; the connector creates it on its first run"
_creation_lock = threading.Lock()


@contextmanager
def _in_ledger_words() -> Iterator[None]:
    try:
        yield
    except private_files.WrongKind as error:
        raise LedgerPathRefused(str(error)) from None
    except private_files.Exposed as error:
        raise LedgerNotPrivate(str(error)) from None


def checked_path(path: str | os.PathLike[str]) -> Path:
    text = os.fspath(path)
    delay = "a ledger's whole promise is that a crash is a delay"
    if text == "":
        raise LedgerPathRefused(f"the ledger path is empty (SQLite would make a temporary database): {delay}")
    if text == ":memory:" or text.startswith("file::memory:"):
        raise LedgerPathRefused(f"{text}: an in-memory ledger is refused: {delay}")
    if text.startswith("file:"):
        raise LedgerPathRefused(f"{text}: a ledger is a file path, not an SQLite URI")
    absolute = os.path.abspath(text)
    for character in _URI_CHARACTERS:
        if character in absolute:
            raise LedgerPathRefused(f"{absolute}: a ledger path may not hold {character!r} (SQLite reads it in a URI)")
    if not hasattr(os, "getuid"):
        raise LedgerNotPrivate(f"{absolute}: this platform has no file owners to check")
    return Path(absolute)


def ensure_private_directory(ledger: Path) -> None:
    """Create each missing directory of the ledger's chain 0700, then check the last one."""
    with _in_ledger_words():
        private_files.ensure_directory(ledger.parent, _DIRECTORY, _DIRECTORY_REASON, holds=(ledger,))


def check_private_directory(ledger: Path) -> None:
    """A missing ledger is said to be missing before its directory's mode is looked at, but only
    in a real directory that could be searched for it (not one that refused the look, nor a symlink)."""
    directory = ledger.parent
    try:
        os.lstat(ledger)
    except FileNotFoundError:
        if os.path.isdir(directory) and not os.path.islink(directory):
            raise LedgerMissing(f"{ledger}: {_NO_LEDGER}") from None
    except PermissionError as refused:
        raise LedgerUnreadable(f"{directory}: the ledger's directory cannot be searched ({refused.strerror}); "
                               "run as the user who owns it") from None
    except OSError:
        pass  # not a directory, a loop: the kind check below says which
    try:
        with _in_ledger_words():
            private_files.check_directory(directory, _DIRECTORY, _DIRECTORY_REASON, holds=(ledger,))
    except FileNotFoundError:
        raise LedgerMissing(f"{directory}: the ledger's directory does not exist") from None


def create_private_file(path: Path, content: bytes) -> bool:
    """Create the file 0600 holding ``content`` if it is missing, whole or not at all, under a lock
    every opener in the process takes (its descriptor closed at once: closing one drops every POSIX
    lock the process holds on the file, SQLite's included); whether this call created it."""
    with _creation_lock:
        return private_files.create_whole(path, content)


def checked_file(path: Path) -> tuple[int, int]:
    """Vet the ledger file without following a symlink; its (device, inode)."""
    try:
        with _in_ledger_words():
            status = private_files.check_file(path, "the ledger", "it holds feed positions and must be owner-only", FileKind.ledger)
    except FileNotFoundError:
        raise LedgerMissing(f"{path}: {_NO_LEDGER}") from None
    return status.st_dev, status.st_ino


def confirm_same_file(path: Path, identity: tuple[int, int]) -> None:
    if checked_file(path) != identity:
        raise LedgerPathRefused(f"{path}: the ledger file was replaced while it was opened")


def tighten_sidecars(path: Path) -> None:
    """The -wal and -shm files hold the same rows; they get the file's privacy."""
    for suffix in ("-wal", "-shm"):
        with _in_ledger_words():
            private_files.own_sidecar(Path(f"{path}{suffix}"), "the ledger's sidecar")


# -- the schema: numbered migrations, never edited once shipped --------------------------------

_MIGRATION_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")


@dataclass(frozen=True, slots=True, order=True)
class Migration:
    version: int
    name: str
    sql: str


def _load_migrations() -> tuple[Migration, ...]:
    found = sorted(
        Migration(int(match[1]), entry.name, entry.read_text("utf-8"))
        for entry in MIGRATIONS_DIRECTORY.iterdir()
        if (match := _MIGRATION_NAME.match(entry.name))
    )
    versions = [migration.version for migration in found]
    if versions != list(range(1, len(found) + 1)):
        raise RuntimeError(f"migrations must be numbered 1, 2, 3... without gaps: {versions}")
    return tuple(found)


MIGRATIONS = _load_migrations()
SCHEMA_VERSION = MIGRATIONS[-1].version


def split_statements(script: str) -> list[str]:
    """The statements of a script, each whole (triggers included), comments kept in place:
    ``executescript`` would COMMIT first, so a migration runs one statement at a time."""
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
    return int(connection.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()[0])


def blank_ledger() -> bytes:
    """An empty database carrying the ledger's identity at schema 0: a new ledger from its first byte."""
    with closing(sqlite3.connect(":memory:")) as connection:
        connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        return connection.serialize()


def application_id(connection: sqlite3.Connection) -> int:
    return int(connection.execute("PRAGMA application_id").fetchone()[0])


def refuse_foreign(connection: sqlite3.Connection, path: Path) -> None:
    """``LedgerForeign`` unless the file is this connector's ledger; it reads, never writes."""
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
        return  # an older connector's ledger, made before the identity: the owner stamps it
    listed = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name LIMIT 4")
    tables = [str(row[0]) for row in listed]
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
    found = connection.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
    return found.fetchone() is not None


def refuse_too_new(version: int, path: Path) -> None:
    if version > SCHEMA_VERSION:
        raise LedgerTooNew(
            f"{path}: the ledger is at schema {version}, newer than this program's {SCHEMA_VERSION}; run the newer program"
        )


def migrate(ledger: Ledger) -> None:
    from shell.ledger import rules  # noqa: PLC0415 -- the owner's alone: core's tables, no reader's

    with ledger.read() as connection:
        stamped = application_id(connection) == APPLICATION_ID  # else an older connector's, to stamp
        if stamped and schema_version(connection) == SCHEMA_VERSION and rules.in_force(connection):
            return  # nothing to do
    with ledger.write() as transaction:
        transaction.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL) STRICT"
        )
        transaction.execute(f"PRAGMA application_id = {APPLICATION_ID}")  # an older one's, stamped
        transaction.execute(f"PRAGMA user_version = {schema_version(transaction)}")
    for migration in MIGRATIONS:
        with ledger.write() as transaction:
            recorded = schema_version(transaction)  # re-read inside: another may have applied it
            refuse_too_new(recorded, ledger.path)
            if recorded >= migration.version:
                continue
            for statement in split_statements(migration.sql):
                transaction.execute(statement)
            sql = "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)"
            transaction.execute(sql, (migration.version, ledger.timestamp()))
            transaction.execute(f"PRAGMA user_version = {migration.version}")  # the identity's version
    with ledger.write() as transaction:
        rules.bring_up_to_date(transaction)  # core's edges and vocabularies, no migration's


# -- the ledger object and its transactions -------------------------------------------------------


def stored_time(value: object) -> datetime | None:
    return None if value is None else parse_timestamp(str(value))


_Result = TypeVar("_Result")


class Ledger(AbstractContextManager["Ledger"]):
    """One autocommit SQLite connection to one ledger file, used by one thread at a time (a lock)."""

    def __init__(self, connection: sqlite3.Connection, path: Path, *, read_only: bool, clock: Clock,
                 busy_timeout: float) -> None:
        self._connection = connection
        self._lock = threading.RLock()
        self._closed = False
        self.path = path
        self.read_only = read_only
        self.clock = clock
        self.busy_timeout = busy_timeout
        self.write_failures: WriteFailures | None = None  # the running connector's (watch_write_failures)
        self._write = _Transaction(self, "BEGIN IMMEDIATE", records=True)
        self._read = _Transaction(self, "BEGIN DEFERRED")

    def timestamp(self) -> str:
        return format_timestamp(self.clock.now())

    def write(self) -> _Transaction:
        if self.read_only:
            raise LedgerMisuse(f"{self.path}: this ledger was opened read-only")
        return self._write

    def read(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._read

    def schema_version(self) -> int:
        with self.read() as connection:
            return schema_version(connection)

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._connection.close()

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class _Transaction:
    """One transaction under the ledger's lock. A write's (``records``) storage failure, at its BEGIN,
    in its block or at its COMMIT, is recorded, and its clean COMMIT clears the record. Each kind is
    made once per ledger and handed out again: every intent the outbox sends opens two."""

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
            except sqlite3.OperationalError:  # busy, perhaps: try again (or raise what it is)
                retry_busy(connection.execute, ledger.busy_timeout, ledger.path, self._begin)
        except BaseException as error:
            ledger._lock.release()
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
            self._failed(failure)
            raise
        ledger._lock.release()
        if error is not None:
            self._failed(error)
        elif self._records and ledger.write_failures is not None:
            ledger.write_failures.succeeded()
        return False  # the block's exception is raised again, after the rollback

    def _failed(self, error: BaseException) -> None:
        failures = self._ledger.write_failures
        if self._records and failures is not None and is_storage_failure(error):
            failures.failed(error, self._ledger.clock.now())


def retry_busy(action: Callable[..., _Result], timeout: float, path: Path, *args: object) -> _Result:
    """Run ``action(*args)``, again every 20 ms while SQLite answers busy or locked (its busy handler
    is not asked for every lock), up to ``timeout`` from the first busy answer."""
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
                raise LedgerBusy(f"{path}: another process holds the ledger's lock; gave up after {timeout:g} s") from error
            time.sleep(BUSY_RETRY_SLEEP_SECONDS)


# -- the three ways in ---------------------------------------------------------------------------


def open_ledger(
    path: str | os.PathLike[str], *, clock: Clock | None = None, busy_timeout: float = BUSY_TIMEOUT_SECONDS,
    unsynced: bool = False,
) -> Ledger:  # fmt: skip
    """The owner's way in: create what is missing (owner-only), migrate, refuse a newer ledger."""
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
            _readable(lambda: refuse_foreign(connection, ledger_path), ledger_path, busy_timeout)
        refuse_too_new(_readable(lambda: schema_version(connection), ledger_path, busy_timeout), ledger_path)
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


def open_existing_ledger(path: str | os.PathLike[str], *, clock: Clock | None = None,
                         busy_timeout: float = BUSY_TIMEOUT_SECONDS) -> Ledger:
    """A worker's way in: never creates, never migrates, refuses any other schema version."""
    return _open_without_creating(path, read_only=False, clock=clock, busy_timeout=busy_timeout)


def open_ledger_read_only(path: str | os.PathLike[str], *, clock: Clock | None = None,
                          busy_timeout: float = BUSY_TIMEOUT_SECONDS) -> Ledger:
    """A reader's way in (``status``, ``doctor``, ``resolve list|show``): no migration, no write."""
    return _open_without_creating(path, read_only=True, clock=clock, busy_timeout=busy_timeout)


def _open_without_creating(path: str | os.PathLike[str], *, read_only: bool, clock: Clock | None,
                           busy_timeout: float) -> Ledger:
    ledger_path = checked_path(path)
    check_private_directory(ledger_path)
    identity = checked_file(ledger_path)
    connection = _connect(ledger_path, "ro" if read_only else "rw", busy_timeout)
    try:
        _configure(connection, ledger_path, read_only=read_only, busy_timeout=busy_timeout)
        _readable(lambda: refuse_foreign(connection, ledger_path), ledger_path, busy_timeout)
        version = _readable(lambda: schema_version(connection), ledger_path, busy_timeout)
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
    return Ledger(connection, ledger_path, read_only=read_only, clock=clock or SystemClock(), busy_timeout=busy_timeout)


def _connect(path: Path, mode: str, busy_timeout: float) -> sqlite3.Connection:
    uri = f"file:{quote(str(path))}?mode={mode}"
    try:
        return sqlite3.connect(uri, uri=True, timeout=busy_timeout, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as error:
        raise LedgerUnreadable(f"{path}: SQLite cannot open the ledger: {error}") from error


def _configure(connection: sqlite3.Connection, path: Path, *, read_only: bool, busy_timeout: float,
               unsynced: bool = False) -> None:
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
    """``quick_check`` of the whole file: a page damaged anywhere is ``LedgerCorrupt`` at start, before use."""
    try:
        rows = connection.execute("PRAGMA quick_check").fetchall()
    except sqlite3.DatabaseError as error:
        raise LedgerCorrupt(f"{path}: the ledger is damaged ({error}); restore it from a copy") from error
    problems = [str(row[0]) for row in rows if row[0] != "ok"]
    if problems:
        more = f" and {len(problems) - 1} more" if len(problems) > 1 else ""
        raise LedgerCorrupt(f"{path}: the ledger is damaged (quick_check: {problems[0]}{more}); restore it from a copy")


def _switch_to_wal(connection: sqlite3.Connection, path: Path, busy_timeout: float) -> None:
    row = retry_busy(lambda: connection.execute("PRAGMA journal_mode = WAL").fetchone(), busy_timeout, path)
    if row is None or str(row[0]).lower() != "wal":
        raise LedgerUnreadable(f"{path}: SQLite would not put the ledger in WAL mode")


def _readable(read: Callable[[], _Result], path: Path, busy_timeout: float) -> _Result:
    try:
        return retry_busy(read, busy_timeout, path)
    except sqlite3.DatabaseError as error:
        raise LedgerUnreadable(f"{path}: not a ledger SQLite can read: {error}") from error


@dataclass(frozen=True, slots=True)
class Health:
    version: int
    problems: tuple[str, ...]


def read_health(ledger: Ledger, *, full: bool) -> Health:
    """``doctor``'s reading, beside a running connector: the schema version and what the check
    says besides "ok"; ``full`` is ``integrity_check`` (every index against its table too)."""
    pragma = f"PRAGMA integrity_check({MAX_PROBLEMS})" if full else f"PRAGMA quick_check({MAX_PROBLEMS})"
    with ledger.read() as connection:
        version = schema_version(connection)
        rows = connection.execute(pragma).fetchall()
    return Health(version, tuple(str(row[0]) for row in rows if row[0] != "ok"))


# -- the running connector's failed writes, kept where status reads them -------------------------

WRITE_FAILURE_FILE = "write-failure"
SLOT_BYTES = 1024
WHY_CHARS = 400
_BLANK = b" " * (SLOT_BYTES - 1) + b"\n"
_WHAT = "write-failure file"


def write_failure_path(ledger_path: Path) -> Path:
    return ledger_path.parent / WRITE_FAILURE_FILE


@dataclass
class WriteFailures:
    """The open record of one ledger's failed writes: one owner-only file, ``SLOT_BYTES`` filled when
    made and written over in place (no new block, no write to the ledger or its directory). Recording
    and clearing never raise (an unwritable one is logged) and take turns: one recorded in a clear stays."""

    path: Path
    _descriptor: int
    _recorded: bool
    _turn: threading.Lock = field(default_factory=threading.Lock)  # the slot and the flag move together

    @classmethod
    def beside(cls, ledger_path: Path) -> WriteFailures:
        path = write_failure_path(ledger_path)
        descriptor = private_files.open_or_create(path, _WHAT)
        try:
            held = os.pread(descriptor, SLOT_BYTES, 0)
            if len(held) < SLOT_BYTES:
                _write_slot(descriptor, _BLANK)
                held = _BLANK
        except BaseException:
            os.close(descriptor)
            raise
        return cls(path, descriptor, bool(held.strip()))

    def failed(self, error: BaseException, now: datetime) -> None:
        """Record when, why (never a body or a token) and which process."""
        why = " ".join(str(error).split())[:WHY_CHARS] or type(error).__name__
        text = json.dumps({"at": format_timestamp(now), "why": why, "pid": os.getpid()}, ensure_ascii=True)
        slot = text.encode("ascii")[: SLOT_BYTES - 1].ljust(SLOT_BYTES - 1) + b"\n"
        try:
            with self._turn:
                _write_slot(self._descriptor, slot)
                self._recorded = True
        except OSError as failure:
            log.error("ledger: a write failed (%s), and so did recording it in %s: %s", why, self.path, failure)

    def succeeded(self) -> None:
        try:
            with self._turn:
                if not self._recorded:
                    return
                _write_slot(self._descriptor, _BLANK)
                self._recorded = False
        except OSError as failure:
            log.error("ledger: could not clear %s: %s", self.path, failure)

    def close(self) -> None:
        os.close(self._descriptor)


def watch_write_failures(ledger: Ledger) -> None:
    """Record ``ledger``'s failed writes beside it from now on; one that cannot be made (a full disk
    at start) is logged, and status falls back to measuring free space."""
    try:
        ledger.write_failures = WriteFailures.beside(ledger.path)
    except OSError as error:
        log.warning("ledger: %s cannot be kept (%s): status will not show failed writes", WRITE_FAILURE_FILE, error)


def _write_slot(descriptor: int, slot: bytes) -> None:
    written = os.pwrite(descriptor, slot, 0)
    if written != len(slot):
        raise OSError(f"wrote {written} of {len(slot)} bytes")
    os.fsync(descriptor)


def read_write_failure(ledger_path: Path) -> WriteFailure | None:
    """Status's reading: None for no file, a blank or unreadable one; a loose or irregular file is
    refused as every private file. ``WriteFailure`` is imported here: only status reads a record."""
    from core.presentation.status_values import WriteFailure  # noqa: PLC0415 -- status's alone

    path = write_failure_path(ledger_path)
    try:
        private_files.check_file(path, _WHAT)
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:  # readable by its owner, but not now: status says nothing of it
        log.info("status: %s could not be read: %s", path, error)
        return None
    try:
        found = json_or_none(raw) if raw.strip() else None
        if not isinstance(found, dict):
            return None
        at = str(found["at"])
        parse_timestamp(at)  # a record's time is the ledger's text, or it is no record
        return WriteFailure(at, str(found["why"]), int(found["pid"]))
    except (KeyError, TypeError, ValueError):
        return None
