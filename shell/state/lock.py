"""One connector per (account, agent): an instance lock the kernel drops when its holder dies.

Rules:
1. The lock is an exclusive ``flock`` on ``connector.lock`` in the state directory, held for
   the life of the process. No stale-lock cleanup exists or is needed: a dead process holds
   no flock, SIGKILL included.
2. The file is named from the parsed, positive account and agent ids, so ``+2914079`` and
   ``02914079`` cannot name two locks for one account.
3. Beside it, ``connector.lock.json`` says who holds it (pid, start time, account, agent), so
   a refusal can name the holder. It is diagnostic only: the flock is the truth. Both files
   are owner-only, by ``shell.private_files``' one policy (a loose lock file is refused).
4. ``peek`` reads the metadata without taking the lock (``status`` beside a running connector),
   and says whether that pid is present.
5. The holder says there, too, when its re-read configuration file is unusable
   (``InstanceLock.note_configuration``, ``core.route_reload``): ``configuration_problem``, one
   line, empty while the file is usable. Diagnostic, like the rest of the metadata.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from core.timestamps import format_timestamp
from shell import private_files, processes
from shell.errors import EXIT_UNAVAILABLE, UserError

LOCK_NAME = "connector.lock"


class AlreadyRunning(UserError):
    """Another connector holds this (account, agent)'s lock."""

    exit_code = EXIT_UNAVAILABLE


@dataclass(frozen=True, slots=True)
class Holder:
    pid: int
    started_at: str
    account_id: int
    agent_id: int
    pid_present: bool | None = None
    configuration_problem: str = ""


class InstanceLock:
    """The held lock; ``release()`` (or process death) lets it go."""

    def __init__(self, descriptor: int, path: Path, metadata: dict[str, Any]) -> None:
        self._descriptor = descriptor
        self.path = path
        self._metadata = metadata

    def note_configuration(self, problem: str) -> None:
        """Say in the metadata why the configuration file authorizes nothing ("" when usable)."""
        if self._descriptor < 0:
            return
        self._metadata = {**self._metadata, "configuration_problem": problem}
        private_files.write_atomically(Path(f"{self.path}.json"), json.dumps(self._metadata).encode())

    def release(self) -> None:
        if self._descriptor >= 0:
            with contextlib.suppress(OSError):
                Path(f"{self.path}.json").unlink(missing_ok=True)
            os.close(self._descriptor)  # closing drops the flock
            self._descriptor = -1

    def __enter__(self) -> InstanceLock:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()


def lock_path(state_dir: Path, account_id: int, agent_id: int) -> Path:
    for name, value in (("account", account_id), ("agent", agent_id)):
        if value <= 0:
            raise UserError(f"an {name} id is a positive integer, not {value}")
    return state_dir / f"{account_id}-{agent_id}.{LOCK_NAME}"


def acquire(state_dir: Path, account_id: int, agent_id: int, now: datetime) -> InstanceLock:
    """Take the lock or raise ``AlreadyRunning`` naming who holds it."""
    path = lock_path(state_dir, account_id, agent_id)
    descriptor = private_files.open_or_create(path, "lock file")
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        holder = peek(state_dir, account_id, agent_id)
        who = f"pid {holder.pid}, started {holder.started_at}" if holder else "another process"
        raise AlreadyRunning(
            f"a connector already runs for account {account_id} as agent {agent_id} ({who})"
        ) from None
    metadata = {
        "pid": os.getpid(),
        "started_at": format_timestamp(now),
        "account_id": account_id,
        "agent_id": agent_id,
    }
    private_files.write_atomically(Path(f"{path}.json"), json.dumps(metadata).encode())
    return InstanceLock(descriptor, path, metadata)


def peek(state_dir: Path, account_id: int, agent_id: int) -> Holder | None:
    """Who the metadata says holds the lock, without taking it; None when nothing says."""
    return _peek_at(Path(f"{lock_path(state_dir, account_id, agent_id)}.json"))


def peek_only(state_dir: Path) -> Holder | None:
    """The one lock file's metadata in ``state_dir``, whatever ids it names (a configuration
    file edited to name others since the connector started); None unless exactly one."""
    found = sorted(state_dir.glob(f"*.{LOCK_NAME}.json"))
    return _peek_at(found[0]) if len(found) == 1 else None


def _peek_at(path: Path) -> Holder | None:
    try:
        raw: Any = json.loads(path.read_text())
        holder = Holder(
            int(raw["pid"]), str(raw["started_at"]), int(raw["account_id"]), int(raw["agent_id"]),
            configuration_problem=str(raw.get("configuration_problem") or ""),
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    present = processes.is_present(holder.pid)
    return replace(holder, pid_present=present)
