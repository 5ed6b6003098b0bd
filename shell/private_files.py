"""Owner-only files and directories: the one home of the connector's file privacy.

The ledger, configuration, token file, locks, the worker's session files and the demo's staged
token all go through here; nothing else in ``shell/`` names a file mode, ``O_EXCL`` or
``fchmod`` (a test says so).

Rules (one policy for every caller):
1. What the connector creates is owner-only (0700, 0600, set again after creation against the
   umask), with ``O_EXCL | O_NOFOLLOW``: never an existing file, never through a link.
2. What exists is checked, never loosened or tightened: a symlink, the wrong kind, another
   user's, or any group or other bit is refused (``PrivatePathError``) with how to fix it.
3. The exception is SQLite's ``-wal`` and ``-shm`` beside a checked ledger: ``own_sidecar``
   makes a regular file of this user's 0600 and refuses anything else.
4. ``write_atomically`` writes a new 0600 file beside the target, fsyncs, renames it over, then
   fsyncs the directory: whole or absent. ``create_whole`` links it into place instead, never
   over anything.
5. A missing path raises ``FileNotFoundError``, for the caller to word; every other refusal is a
   ``PrivatePathError`` (exit ``EXIT_CONFIG``), its subclass saying which kind.
6. ``write_atomically``'s ``own`` replaces only a missing or empty file or one of its kind
   (``core.file_kinds``), checked just before the rename.
7. A mode fix (``chmod``) is offered only for a path the connector made: never a sticky
   directory or the root, nor where the named file is missing or not the kind expected."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from core.file_kinds import HEAD_BYTES, FileKind, kind_of, replace_refusal
from shell.errors import EXIT_CONFIG, UserError

FILE_MODE = 0o600
DIRECTORY_MODE = 0o700
_OTHERS_BITS = 0o077
_STATE_KINDS = (FileKind.ledger, FileKind.configuration)
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class PrivatePathError(UserError):
    """An existing path the connector would use is not an owner-only one of the expected kind."""

    def __init__(self, message: str) -> None:
        super().__init__(message, EXIT_CONFIG)


class WrongKind(PrivatePathError):
    """A symlink, or not a directory (or not a regular file) where one is expected."""


class Exposed(PrivatePathError):
    """Another user's, or open to group or others."""


class OtherKind(PrivatePathError):
    """An existing file of another kind where a writer would put its own (rule 6)."""


def _exposure(
    status: os.stat_result, what: str, path: Path, mode: int, reason: str, *, made_here: bool
) -> None:
    if status.st_uid != os.geteuid():
        raise Exposed(
            f"{what} {path} belongs to another user (uid {status.st_uid}), not to this user ({os.geteuid()})"
        )
    if stat.S_IMODE(status.st_mode) & _OTHERS_BITS:
        because = f"; {reason}" if reason else ""
        found = f"{what} {path} is open to others (mode {stat.S_IMODE(status.st_mode):04o})"
        if made_here:
            raise Exposed(f"{found}; make it owner-only: chmod {mode:o} {path}{because}")
        raise Exposed(
            f"{found}, and it is not one the connector made (a shared or system path, or a "
            f"mistyped one), so its mode is not the connector's to change: name the path you meant, "
            f"or a new one (the connector makes it owner-only){because}"
        )


def directory_made_here(path: Path, holds: tuple[Path, ...] | None = None) -> bool:
    """Rule 7: never a shared (sticky) directory or the root; with ``holds``, only one where one
    of those files is there already and holds a ledger or a configuration."""
    try:
        status = os.lstat(path)
    except OSError:
        return False
    if status.st_mode & stat.S_ISVTX or path.parent == path:
        return False
    return holds is None or any(_holds_kind(held) in _STATE_KINDS for held in holds)


def _holds_kind(path: Path) -> FileKind | None:
    """What the regular file ``path`` holds (None: missing, unreadable or not a regular file)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        return None
    with os.fdopen(descriptor, "rb") as handle:
        return kind_of(handle.read(HEAD_BYTES))


def _file_made_here(path: Path, kind: FileKind | None) -> bool:
    """Rule 7: with ``kind``, only a file that holds that kind (or nothing yet)."""
    return kind is None or _holds_kind(path) in (kind, FileKind.empty)


def check_directory(path: Path, what: str, reason: str = "", holds: tuple[Path, ...] | None = None) -> None:
    """Refuse an existing directory that is a symlink, not a directory, or not owner-only (rule 2);
    ``holds``: the connector's files it would hold, for rule 7."""
    status = os.lstat(path)
    if stat.S_ISLNK(status.st_mode):
        raise WrongKind(f"{what} {path} is a symlink; it must be a real directory")
    if not stat.S_ISDIR(status.st_mode):
        raise WrongKind(f"{what} {path} is not a directory")
    _exposure(status, what, path, DIRECTORY_MODE, reason, made_here=directory_made_here(path, holds))


def check_file_status(
    status: os.stat_result, path: Path, what: str, reason: str = "", kind: FileKind | None = None
) -> None:
    """Refuse a file whose ``status`` (an ``lstat`` or ``fstat``) is a symlink, not a regular file,
    or not owner-only (rule 2); ``kind``: what it should hold, for rule 7."""
    if stat.S_ISLNK(status.st_mode):
        raise WrongKind(f"{what} {path} is a symlink; it must be a regular file")
    if not stat.S_ISREG(status.st_mode):
        raise WrongKind(f"{what} {path} is not a regular file")
    if stat.S_IMODE(status.st_mode) & _OTHERS_BITS or status.st_uid != os.geteuid():
        _exposure(status, what, path, FILE_MODE, reason, made_here=_file_made_here(path, kind))


def check_file(path: Path, what: str, reason: str = "", kind: FileKind | None = None) -> os.stat_result:
    """``check_file_status`` of ``path`` itself, never through a link; its status."""
    status = os.lstat(path)
    check_file_status(status, path, what, reason, kind)
    return status


def make_directory(path: Path) -> None:
    """Create ``path``, 0700 (rule 1); ``FileExistsError`` if anything is there already."""
    os.mkdir(path, DIRECTORY_MODE)
    os.chmod(path, DIRECTORY_MODE)  # mkdir's mode is masked by the umask


def ensure_directory(path: Path, what: str, reason: str = "", holds: tuple[Path, ...] | None = None) -> None:
    """Create each missing directory of ``path``'s chain 0700, then check ``path`` (rules 1, 2, 7)."""
    missing: list[Path] = []
    cursor = path
    while not os.path.lexists(cursor):
        missing.append(cursor)
        cursor = cursor.parent
    for created in reversed(missing):
        with contextlib.suppress(FileExistsError):  # another process made it: checked all the same
            make_directory(created)
    check_directory(path, what, reason, holds)


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


def refuse_other_kind(path: Path, what: str, own: FileKind) -> None:
    """Refuse ``path`` unless it is missing, empty, or ``own``'s kind by content and name (rule 6)."""
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        head = None
    else:
        if not stat.S_ISREG(status.st_mode):
            raise WrongKind(f"{what} {path} is not a regular file; nothing was written")
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(descriptor, "rb") as handle:
            head = handle.read(HEAD_BYTES)
    refusal = replace_refusal(own, path.name, head)
    if refusal is not None:
        raise OtherKind(
            f"{what} {path}: {refusal}, so it is not written over; nothing was written: "
            f"give a path of its own"
        )


def write_atomically(path: Path, content: bytes, own: FileKind | None = None) -> None:
    """Replace ``path`` with ``content``, whole or not at all (rule 4); with ``own``, only a file
    of that kind (rule 6)."""
    _write_whole(path, content, replace=True, own=own)


def create_whole(path: Path, content: bytes) -> bool:
    """Create ``path`` holding ``content``, whole or not at all, never over anything already
    there (rule 4): whether it was created (False: something was there, left as it was)."""
    return _write_whole(path, content, replace=False)


def _write_whole(path: Path, content: bytes, *, replace: bool, own: FileKind | None = None) -> bool:
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
            if own is not None:
                refuse_other_kind(path, own.value.removeprefix("a "), own)
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
