"""Owner-only files and directories: the one home of the connector's file privacy. The ledger,
configuration, token file, locks, the worker's session files and the demo's staged token all go
through here; nothing else in ``shell/`` names a file mode, ``O_EXCL`` or ``fchmod``.

What the connector creates is owner-only (0700, 0600, set again against the umask; the metrics file
alone 0644, holding no secret for another user's collector), with ``O_EXCL | O_NOFOLLOW``: never an
existing file, never through a link. What exists is checked, never loosened
or tightened: a symlink, the wrong kind, another user's, or any group or other bit is a
``PrivatePathError`` saying how to fix it (SQLite's ``-wal`` and ``-shm`` beside a checked ledger
excepted: ``own_sidecar`` makes them 0600). A mode fix is offered only for a path the connector
made. A whole-file write goes to a new file beside the target, fsynced, renamed (or linked) into
place, the directory fsynced; one that replaces a file replaces only a missing or empty one or one
of its own kind (``core.file_kinds``)."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from core.file_kinds import HEAD_BYTES, FileKind, kind_of, replace_refusal
from shell.errors import EXIT_CONFIG, UserError

FILE_MODE = 0o600
SHARED_FILE_MODE = 0o644  # the metrics file alone: another user's collector reads it
DIRECTORY_MODE = 0o700
_OTHERS_BITS = 0o077
_STATE_KINDS = (FileKind.ledger, FileKind.configuration)
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class PrivatePathError(UserError):
    def __init__(self, message: str) -> None:
        super().__init__(message, EXIT_CONFIG)


class WrongKind(PrivatePathError):
    """A symlink, or not a directory (or not a regular file) where one is expected."""


class Exposed(PrivatePathError):
    """Another user's, or open to group or others."""


class OtherKind(PrivatePathError):
    """An existing file of another kind where a writer would put its own."""


def _exposure(status: os.stat_result, what: str, path: Path, mode: int, reason: str, *,
              made_here: bool) -> None:
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
    """Whether a mode fix may be offered for ``path``: never a sticky directory or the root; with
    ``holds``, only where one of those files is there already and holds a ledger or a configuration."""
    try:
        status = os.lstat(path)
    except OSError:
        return False
    if status.st_mode & stat.S_ISVTX or path.parent == path:
        return False
    return holds is None or any(_holds_kind(held) in _STATE_KINDS for held in holds)


def _holds_kind(path: Path) -> FileKind | None:
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        return None
    with os.fdopen(descriptor, "rb") as handle:
        return kind_of(handle.read(HEAD_BYTES))


def check_directory(path: Path, what: str, reason: str = "", holds: tuple[Path, ...] | None = None) -> None:
    """``holds``: the connector's files it would hold, for ``directory_made_here``."""
    status = os.lstat(path)
    if stat.S_ISLNK(status.st_mode):
        raise WrongKind(f"{what} {path} is a symlink; it must be a real directory")
    if not stat.S_ISDIR(status.st_mode):
        raise WrongKind(f"{what} {path} is not a directory")
    _exposure(status, what, path, DIRECTORY_MODE, reason, made_here=directory_made_here(path, holds))


def check_file_status(status: os.stat_result, path: Path, what: str, reason: str = "",
                      kind: FileKind | None = None) -> None:
    """``status`` is an ``lstat`` or ``fstat``; ``kind``: what the file should hold."""
    if stat.S_ISLNK(status.st_mode):
        raise WrongKind(f"{what} {path} is a symlink; it must be a regular file")
    if not stat.S_ISREG(status.st_mode):
        raise WrongKind(f"{what} {path} is not a regular file")
    if stat.S_IMODE(status.st_mode) & _OTHERS_BITS or status.st_uid != os.geteuid():
        made_here = kind is None or _holds_kind(path) in (kind, FileKind.empty)
        _exposure(status, what, path, FILE_MODE, reason, made_here=made_here)


def check_file(path: Path, what: str, reason: str = "", kind: FileKind | None = None) -> os.stat_result:
    status = os.lstat(path)
    check_file_status(status, path, what, reason, kind)
    return status


def make_directory(path: Path) -> None:
    os.mkdir(path, DIRECTORY_MODE)
    os.chmod(path, DIRECTORY_MODE)  # mkdir's mode is masked by the umask


def ensure_directory(path: Path, what: str, reason: str = "", holds: tuple[Path, ...] | None = None) -> None:
    missing: list[Path] = []
    cursor = path
    while not os.path.lexists(cursor):
        missing.append(cursor)
        cursor = cursor.parent
    for created in reversed(missing):
        with contextlib.suppress(FileExistsError):  # another process made it: checked all the same
            make_directory(created)
    check_directory(path, what, reason, holds)


def create_file(path: Path, content: bytes = b"", mode: int = FILE_MODE) -> int:
    """An open descriptor on the new ``path`` holding ``content``, the caller's to close."""
    descriptor = os.open(path, _CREATE, mode)
    try:
        os.fchmod(descriptor, mode)
        view = memoryview(content)
        while view:
            view = view[os.write(descriptor, view) :]
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def write_new_file(path: Path, content: bytes) -> None:
    os.close(create_file(path, content))


def open_or_create(path: Path, what: str) -> int:
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
    """Refuse ``path`` unless it is missing, empty, or ``own``'s kind by content and name."""
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
        told = f"{what} {path}: {refusal}, so it is not written over"
        raise OtherKind(f"{told}; nothing was written: give a path of its own")


def write_atomically(path: Path, content: bytes, own: FileKind | None = None) -> None:
    """Replace ``path`` with ``content``; with ``own``, only a file of that kind."""
    _write_whole(path, content, replace=True, own=own)


def write_shared_atomically(path: Path, content: bytes) -> None:
    """Replace ``path`` with ``content`` others may read (``SHARED_FILE_MODE``)."""
    _write_whole(path, content, replace=True, mode=SHARED_FILE_MODE)


def create_whole(path: Path, content: bytes) -> bool:
    """Whether ``path`` was created (False: something was there, left as it was)."""
    return _write_whole(path, content, replace=False)


def _write_whole(path: Path, content: bytes, *, replace: bool, own: FileKind | None = None,
                 mode: int = FILE_MODE) -> bool:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(temporary)
    created = True
    try:
        with os.fdopen(create_file(temporary, content, mode), "wb") as handle:
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
    """fsync ``directory``, so a rename or unlink in it survives a power cut."""
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def own_sidecar(path: Path, what: str) -> None:
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(status.st_mode) or status.st_uid != os.geteuid():
        raise Exposed(f"{what} {path}: not a regular file of this user's")
    if stat.S_IMODE(status.st_mode) != FILE_MODE:
        os.chmod(path, FILE_MODE)
