"""Where a ledger may live, and its privacy: ``shell.private_files``'s one policy, in the ledger's words.

Rules:
1. One file, never in memory: a ledger's whole promise is that a crash is a delay. An empty
   path, an in-memory name, an SQLite URI and a path holding ``?``, ``#`` or ``%`` are refused
   before SQLite sees them.
2. The ledger is a credential file (it holds feed positions): a regular file, this user's,
   owner-only, in a directory likewise (0700); looser is refused, never tightened. The owner's
   way in creates what is missing owner-only; SQLite's ``-wal``/``-shm`` are set to 0600 after
   every open.
3. Every refusal is a ``LedgerError``: ``LedgerPathRefused`` (a symlink, the wrong kind),
   ``LedgerNotPrivate`` (another user's, a loose mode), ``LedgerMissing``.
4. The file is created whole under a lock every opener in the process takes first (a blank
   database with the ledger's identity, ``shell.ledger.schema`` rule 6, linked into place), and
   its descriptor closed at once: closing one drops every POSIX lock the process holds on the
   file, SQLite's included.
5. A missing ledger is said to be missing before its directory's mode is looked at, and a mode
   fix is offered only for what the connector made (``shell.private_files`` rule 7)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from core.file_kinds import FileKind
from shell import private_files
from shell.ledger.errors import LedgerMissing, LedgerNotPrivate, LedgerPathRefused

_URI_CHARACTERS = ("?", "#", "%")
_DIRECTORY = "the ledger's directory"
_DIRECTORY_REASON = "it must be owner-only, or others could list and swap its files"
_FILE = "the ledger"
_FILE_REASON = "it holds feed positions and must be owner-only"
_NO_LEDGER = "no ledger here; the connector creates it on its first run"
_creation_lock = threading.Lock()


@contextmanager
def _in_ledger_words() -> Iterator[None]:
    """Rule 3."""
    try:
        yield
    except private_files.WrongKind as error:
        raise LedgerPathRefused(str(error)) from None
    except private_files.Exposed as error:
        raise LedgerNotPrivate(str(error)) from None


def checked_path(path: str | os.PathLike[str]) -> Path:
    """Rule 1."""
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


def ensure_private_directory(ledger: Path) -> None:
    """Create each missing directory of the ledger's chain 0700, then check the last one."""
    with _in_ledger_words():
        private_files.ensure_directory(ledger.parent, _DIRECTORY, _DIRECTORY_REASON, holds=(ledger,))


def check_private_directory(ledger: Path) -> None:
    """The ledger's directory, once the ledger is known to be there (rule 5)."""
    directory = ledger.parent
    if os.path.isdir(directory) and not os.path.lexists(ledger):
        raise LedgerMissing(f"{ledger}: {_NO_LEDGER}")
    try:
        with _in_ledger_words():
            private_files.check_directory(directory, _DIRECTORY, _DIRECTORY_REASON, holds=(ledger,))
    except FileNotFoundError:
        raise LedgerMissing(f"{directory}: the ledger's directory does not exist") from None


def create_private_file(path: Path, content: bytes) -> bool:
    """Create the file 0600 holding ``content`` if it is missing, whole or not at all (rule 4):
    whether this call created it."""
    with _creation_lock:
        return private_files.create_whole(path, content)


def checked_file(path: Path) -> tuple[int, int]:
    """Vet the ledger file without following a symlink; its (device, inode)."""
    try:
        with _in_ledger_words():
            status = private_files.check_file(path, _FILE, _FILE_REASON, FileKind.ledger)
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

