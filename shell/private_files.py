"""Owner-only files and directories: the one home of the connector's file privacy.

The ledger, the configuration, the token file, the instance lock and its metadata, the worker's
session files (which hold a task token) and the demo's staged token all go through here. Nothing
else in ``shell/`` names a file mode, ``O_EXCL`` or ``fchmod`` (a test says so).

Rules (one policy for every caller):
1. What the connector creates it creates owner-only: each missing directory 0700, each file
   0600, set again after creation so the umask cannot loosen it. A file is created with
   ``O_EXCL | O_NOFOLLOW``: never an existing one, never through a link.
2. What already exists is checked, never loosened, never tightened: a directory or file that
   is a symlink, is not the kind expected, is another user's, or gives any bit to group or
   others is refused (``PrivatePathError``), with one line that says how to fix it. A
   person's loose directory is their decision to look at, not the connector's to undo.
3. The one exception is a file SQLite makes beside a checked ledger (``-wal``, ``-shm``):
   it is the ledger's own content, created by SQLite, not by a person, so ``own_sidecar``
   makes it 0600 if it is a regular file of this user's, and refuses it otherwise.
4. A whole-file write (``write_atomically``) is a new 0600 file beside the target (``O_EXCL``,
   fsynced), an atomic rename over it, then an fsync of the directory: whole or absent. A whole
   new file (``create_whole``) is the same, linked into place instead of renamed: never over
   anything that is there, and never seen half-written, even after a crash.
5. A missing path raises ``FileNotFoundError`` from the checks, so each caller says in its
   own words what is missing; every other refusal is a ``PrivatePathError`` (a ``UserError``,
   exit code ``EXIT_CONFIG``), whose subclass says whether the path is the wrong kind or
   exposed to others.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from shell.errors import EXIT_CONFIG, UserError

FILE_MODE = 0o600
DIRECTORY_MODE = 0o700
_OTHERS_BITS = 0o077
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class PrivatePathError(UserError):
    """An existing path the connector would use is not an owner-only one of the expected kind."""

    def __init__(self, message: str) -> None:
        super().__init__(message, EXIT_CONFIG)


class WrongKind(PrivatePathError):
    """A symlink, or not a directory (or not a regular file) where one is expected."""


class Exposed(PrivatePathError):
    """Another user's, or open to group or others."""


def _exposure(status: os.stat_result, what: str, path: Path, mode: int, reason: str) -> None:
    if status.st_uid != os.geteuid():
        raise Exposed(
            f"{what} {path} belongs to another user (uid {status.st_uid}), not to this user ({os.geteuid()})"
        )
    if stat.S_IMODE(status.st_mode) & _OTHERS_BITS:
        because = f"; {reason}" if reason else ""
        raise Exposed(
            f"{what} {path} is open to others (mode {stat.S_IMODE(status.st_mode):04o}); "
            f"make it owner-only: chmod {mode:o} {path}{because}"
        )


def check_directory(path: Path, what: str, reason: str = "") -> None:
    """Refuse an existing directory that is a symlink, not a directory, or not owner-only (rule 2)."""
    status = os.lstat(path)
    if stat.S_ISLNK(status.st_mode):
        raise WrongKind(f"{what} {path} is a symlink; it must be a real directory")
    if not stat.S_ISDIR(status.st_mode):
        raise WrongKind(f"{what} {path} is not a directory")
    _exposure(status, what, path, DIRECTORY_MODE, reason)


def check_file_status(status: os.stat_result, path: Path, what: str, reason: str = "") -> None:
    """Refuse a file whose ``status`` (an ``lstat`` or ``fstat``) is a symlink, not a regular file,
    or not owner-only (rule 2)."""
    if stat.S_ISLNK(status.st_mode):
        raise WrongKind(f"{what} {path} is a symlink; it must be a regular file")
    if not stat.S_ISREG(status.st_mode):
        raise WrongKind(f"{what} {path} is not a regular file")
    _exposure(status, what, path, FILE_MODE, reason)


def check_file(path: Path, what: str, reason: str = "") -> os.stat_result:
    """``check_file_status`` of ``path`` itself, never through a link; its status."""
    status = os.lstat(path)
    check_file_status(status, path, what, reason)
    return status


def make_directory(path: Path) -> None:
    """Create ``path``, 0700 (rule 1); ``FileExistsError`` if anything is there already."""
    os.mkdir(path, DIRECTORY_MODE)
    os.chmod(path, DIRECTORY_MODE)  # mkdir's mode is masked by the umask


def ensure_directory(path: Path, what: str, reason: str = "") -> None:
    """Create each missing directory of ``path``'s chain 0700, then check ``path`` (rules 1, 2)."""
    missing: list[Path] = []
    cursor = path
    while not os.path.lexists(cursor):
        missing.append(cursor)
        cursor = cursor.parent
    for created in reversed(missing):
        with contextlib.suppress(FileExistsError):  # another process made it: checked all the same
            make_directory(created)
    check_directory(path, what, reason)


def create_file(path: Path, content: bytes = b"") -> int:
    """Create ``path`` 0600 holding ``content`` (rule 1); its open descriptor, the caller's to close.
    ``FileExistsError`` if anything is there already."""
    descriptor = os.open(path, _CREATE, FILE_MODE)
    try:
        os.fchmod(descriptor, FILE_MODE)
        view = memoryview(content)
        while view:
            view = view[os.write(descriptor, view) :]
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def write_new_file(path: Path, content: bytes) -> None:
    """``create_file``, closed."""
    os.close(create_file(path, content))


def open_or_create(path: Path, what: str) -> int:
    """A read-write descriptor on ``path``, created 0600 if missing, refused if it is loose or not
    a regular file of this user's (rules 1, 2). Never through a link."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        descriptor = os.open(path, flags | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        descriptor = os.open(path, flags & ~os.O_CREAT)
    else:
        os.fchmod(descriptor, FILE_MODE)
    try:
        check_file_status(os.fstat(descriptor), path, what)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def write_atomically(path: Path, content: bytes) -> None:
    """Replace ``path`` with ``content``, whole or not at all (rule 4)."""
    _write_whole(path, content, replace=True)


def create_whole(path: Path, content: bytes) -> bool:
    """Create ``path`` holding ``content``, whole or not at all, never over anything already
    there (rule 4): whether it was created (False: something was there, left as it was)."""
    return _write_whole(path, content, replace=False)


def _write_whole(path: Path, content: bytes, *, replace: bool) -> bool:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(temporary)
    descriptor = create_file(temporary)
    created = True
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        if replace:
            os.replace(temporary, path)
        else:
            try:
                os.link(temporary, path, follow_symlinks=False)
            except FileExistsError:
                created = False
            os.unlink(temporary)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    sync_directory(path.parent)
    return created


def sync_directory(directory: Path) -> None:
    """fsync ``directory``, so a rename or unlink in it survives a power cut (rule 4)."""
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def own_sidecar(path: Path, what: str) -> None:
    """Make SQLite's ``path`` (``-wal``/``-shm``) 0600 if it is there (rule 3)."""
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(status.st_mode) or status.st_uid != os.geteuid():
        raise Exposed(f"{what} {path}: not a regular file of this user's")
    if stat.S_IMODE(status.st_mode) != FILE_MODE:
        os.chmod(path, FILE_MODE)
