"""The ledger's errors: each a line a person can act on (exit code ``EXIT_CONFIG`` unless noted).

Rules:
1. Every refusal of a ledger is a ``LedgerError`` (a ``UserError``); its subclass says why.
2. ``LedgerMisuse`` is a programming error (a nested transaction, a write on a read-only
   ledger, a closed one), not a person's: it is no ``UserError``.
3. What the disk or SQLite says while a ledger is opened, migrated or settled at start is one
   of these, by ``ledger_failure``: corrupt (``quick_check`` or SQLite says so), no space (a
   full disk, or a file the system will not let grow -- SQLite's "disk I/O error" where the file
   system has no block left or ``ulimit -f`` bounds a file too), not writable (a read-only directory or
   file system); SQLite's and the system's own words follow. Each is ``EXIT_CONFIG``: a person
   must act before a restart can help, so a supervisor must not restart on it. A busy ledger
   stays ``EXIT_UNAVAILABLE``: that passes by itself.
"""

from __future__ import annotations

import errno
import os
import resource
import sqlite3
from pathlib import Path

from shell.errors import EXIT_CONFIG, EXIT_UNAVAILABLE, UserError


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


_NO_SPACE = frozenset({errno.ENOSPC, errno.EFBIG, errno.EDQUOT})
_NOT_WRITABLE = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})
_CORRUPT_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
_NOT_WRITABLE_CODES = frozenset({sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM})


def ledger_failure(error: sqlite3.Error | OSError, path: Path, doing: str) -> LedgerError:
    """The ``LedgerError`` a person reads for what the disk or SQLite said while ``doing`` (rule 3)."""
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
    if cannot_grow:  # SQLite's bare "disk I/O error" where a file may not grow: no space (rule 3)
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
    """Why a file beside ``path`` may not grow, said after SQLite's "disk I/O error" (its only words
    for a ``-shm`` or ``-wal`` it could not grow): the file system has no block left, or this
    process may write no file past a size (``ulimit -f``); "" when neither."""
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    if limit != resource.RLIM_INFINITY:
        return f"; this process may write files of at most {limit} bytes: ulimit -f"
    try:
        full = os.statvfs(path if path.is_dir() else path.parent).f_bavail == 0
    except OSError:
        return ""
    return "; the disk is full" if full else ""


def is_storage_failure(error: BaseException) -> bool:
    """Whether ``error`` says the ledger's storage failed (full, I/O, read-only, cannot open,
    damaged): what ``shell.ledger.write_failures`` records. A busy lock, a refused move (a
    constraint or a trigger) or a bug is not."""
    if isinstance(error, OSError):
        return error.errno in _NO_SPACE | _NOT_WRITABLE | {errno.EIO}
    if not isinstance(error, sqlite3.Error):
        return False
    code = getattr(error, "sqlite_errorcode", 0) & 0xFF
    return code in _STORAGE_CODES


_STORAGE_CODES = _CORRUPT_CODES | _NOT_WRITABLE_CODES | {sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR}


class LedgerBusy(LedgerError):
    """Another process held the write lock past the busy timeout."""

    exit_code = EXIT_UNAVAILABLE


class LedgerMisuse(RuntimeError):
    """A programming error: a nested transaction, a write on a read-only ledger, a closed one."""
