"""One connector per (account, agent): an instance lock the kernel drops when its holder dies.

The lock is ``shell.state.flock``'s on ``<account>-<agent>.connector.lock`` in the state directory,
held for the life of the process, so nothing is cleaned up. Its metadata says who holds it (pid,
start time, account, agent) and, while its re-read configuration is unusable, why, so a refusal
and ``status`` (``peek``, without taking the lock) can name the holder. A state directory the lock
cannot be taken in (read-only, unreadable, a full disk) is one line (``ledger_failure``: exit 3)."""
from __future__ import annotations

import os
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from core.timestamps import format_timestamp
from shell import processes
from shell.errors import EXIT_UNAVAILABLE, UserError
from shell.ledger.connection import ledger_failure
from shell.state import flock

LOCK_NAME = "connector.lock"


class AlreadyRunning(UserError):
    exit_code = EXIT_UNAVAILABLE


@dataclass(frozen=True, slots=True)
class Holder:
    pid: int
    started_at: str
    account_id: int
    agent_id: int
    pid_present: bool | None = None
    configuration_problem: str = ""


class InstanceLock(flock.HeldLock):
    def note_configuration(self, problem: str) -> None:
        """Say in the metadata why the configuration file authorizes nothing ("" when usable)."""
        self.note(configuration_problem=problem)


def lock_path(state_dir: Path, account_id: int, agent_id: int) -> Path:
    return state_dir / f"{flock.pair_stem(account_id, agent_id)}.{LOCK_NAME}"


def acquire(state_dir: Path, account_id: int, agent_id: int, now: datetime) -> InstanceLock:
    path = lock_path(state_dir, account_id, agent_id)
    started = format_timestamp(now)
    metadata = {"pid": os.getpid(), "started_at": started, "account_id": account_id, "agent_id": agent_id}
    try:
        held = flock.take(path, "lock file", metadata, InstanceLock)
    except OSError as error:  # the state directory's, in the ledger's words
        failure = ledger_failure(error, state_dir, "take the instance lock")
        raise type(failure)(f"{failure}; nothing was changed") from error
    if held is None:
        holder = peek(state_dir, account_id, agent_id)
        who = f"pid {holder.pid}, started {holder.started_at}" if holder else "another process"
        raise AlreadyRunning(f"a connector already runs for account {account_id} as agent {agent_id} ({who})")
    return held


def peek(state_dir: Path, account_id: int, agent_id: int) -> Holder | None:
    return _peek_at(lock_path(state_dir, account_id, agent_id))


def may_run(state_dir: Path, account_id: int, agent_id: int) -> bool:
    """Whether the lock file names a connector that may be running (a diagnostic, never a lock)."""
    holder = peek(state_dir, account_id, agent_id)
    return holder is not None and holder.pid_present is not False


def peek_only(state_dir: Path) -> Holder | None:
    """The one lock file's metadata in ``state_dir``, whatever ids it names (a configuration
    file edited to name others since the connector started); None unless exactly one."""
    found = sorted(state_dir.glob(f"*.{LOCK_NAME}.json"))
    return _peek_at(found[0].with_suffix("")) if len(found) == 1 else None


def _peek_at(path: Path) -> Holder | None:
    raw: Any = flock.metadata_of(path)
    try:
        holder = Holder(int(raw["pid"]), str(raw["started_at"]), int(raw["account_id"]), int(raw["agent_id"]),
                        configuration_problem=str(raw.get("configuration_problem") or ""))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    present = processes.is_present(holder.pid)
    return replace(holder, pid_present=present)
