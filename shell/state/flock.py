"""One exclusive ``flock`` with its holder's metadata beside it: what both connector locks are made of
(``lock``, ``pair_lock``), and the one place a file lock is taken (``wait_for``: one token refresh at a time).

``take`` is non-blocking: the lock is had at once or not at all. It lives as long as its descriptor,
and the kernel drops it when its holder dies, SIGKILL included, so no stale lock exists. The lock
file and ``<lock>.json`` are owner-only; the metadata says who holds the lock, for a refusal to
name, but the flock is the truth: written whole when taken and at each ``note``, removed at
``release`` before the lock is let go. A pair's lock is named from its parsed, positive ids
(``pair_stem``), so ``+2914079`` and ``02914079`` cannot name two locks."""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path
from typing import Any, Self, TypeVar

from core.json_input import json_or_none
from shell import private_files
from shell.errors import UserError


class HeldLock:
    """A held lock; ``release()`` (or process death) lets it go."""

    def __init__(self, descriptor: int, path: Path, metadata: dict[str, Any]) -> None:
        self._descriptor = descriptor
        self.path = path
        self._metadata = metadata

    def note(self, **fields: str) -> None:
        """Rewrite the metadata with ``fields`` changed; nothing once released."""
        if self._descriptor < 0:
            return
        self._metadata = {**self._metadata, **fields}
        private_files.write_atomically(metadata_path(self.path), json.dumps(self._metadata).encode())

    def release(self) -> None:
        if self._descriptor >= 0:
            with contextlib.suppress(OSError):
                metadata_path(self.path).unlink(missing_ok=True)
            os.close(self._descriptor)  # closing drops the flock
            self._descriptor = -1

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()


Held = TypeVar("Held", bound=HeldLock)


def take(path: Path, what: str, metadata: dict[str, Any], kind: type[Held]) -> Held | None:
    """The lock at ``path`` (``what`` names its file in a refusal), or None while another holds it."""
    descriptor = private_files.open_or_create(path, what)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        return None
    private_files.write_atomically(metadata_path(path), json.dumps(metadata).encode())
    return kind(descriptor, path, metadata)


def wait_for(descriptor: int) -> None:
    """Wait until this process holds the exclusive lock on ``descriptor`` (closing lets it go)."""
    fcntl.flock(descriptor, fcntl.LOCK_EX)


def metadata_path(path: Path) -> Path:
    return Path(f"{path}.json")


def metadata_of(path: Path) -> Any:
    try:
        return json_or_none(metadata_path(path).read_bytes())
    except OSError:
        return None


def pair_stem(account_id: int, agent_id: int) -> str:
    for name, value in (("account", account_id), ("agent", agent_id)):
        if value <= 0:
            raise UserError(f"an {name} id is a positive integer, not {value}")
    return f"{account_id}-{agent_id}"
