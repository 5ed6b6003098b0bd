"""One connector per (account, agent) per machine, whatever its state directory: two state
directories serving one pair would each post every lifecycle message.

The lock is an exclusive ``flock`` on ``<account>-<agent>.pair.lock`` (a shadow has its own), taken
before the token is read or the ledger opened, in one directory every connector of this user agrees
on: ``/tmp/basecamp-connector-<uid>/``, or ``BASECAMP_CONNECTOR_RUNTIME_DIR``. It is owner-only and
this user's, or unused. ``<account>-<agent>.home`` records the state directory serving the pair:
``setup`` refuses a second (``--force`` moves it) and ``run`` refuses to serve from another; a record
whose directory no longer holds the pair is stale."""
from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from core.json_input import json_or_none
from core.timestamps import format_timestamp
from shell import private_files
from shell.errors import EXIT_CONFIG, EXIT_UNAVAILABLE, UserError
from shell.state import flock

RUNTIME_ENV = "BASECAMP_CONNECTOR_RUNTIME_DIR"
CONFIG_NAME = "config.json"


class RuntimeDirectorySquatted(UserError):
    exit_code = EXIT_CONFIG


class PairServed(UserError):
    exit_code = EXIT_UNAVAILABLE


def runtime_directory(environ: Mapping[str, str] | None = None) -> Path:
    environ = os.environ if environ is None else environ
    given = environ.get(RUNTIME_ENV, "")
    if given:
        if not os.path.isabs(given):
            raise UserError(f"{RUNTIME_ENV} must be an absolute path, not {given!r}", EXIT_CONFIG)
        return Path(given)
    return Path("/tmp") / f"basecamp-connector-{os.geteuid()}"  # noqa: S108 -- owner-only, checked


def _directory() -> Path:
    directory = runtime_directory()
    try:
        reason = f"it holds the pair locks ({RUNTIME_ENV})"
        private_files.ensure_directory(directory, "runtime directory", reason)
    except private_files.Exposed as error:
        if os.lstat(directory).st_uid == os.geteuid():
            raise  # this user's own, left open: the message says how to close it
        raise RuntimeDirectorySquatted(
            f"{error}: another user made it first, so its pair locks cannot be trusted and it is not"
            f" used; give every connector of this user one owner-only directory of its own with"
            f" {RUNTIME_ENV} (for example $XDG_RUNTIME_DIR/basecamp-connector), or have an"
            f" administrator remove {directory}"
        ) from None
    return directory


def acquire(account_id: int, agent_id: int, state_dir: Path, started_at: datetime, *,
            shadow: bool = False) -> flock.HeldLock:
    kind = ".shadow" if shadow else ""
    path = _directory() / f"{flock.pair_stem(account_id, agent_id)}{kind}.pair.lock"
    metadata = {"pid": os.getpid(), "state_dir": str(state_dir), "started_at": format_timestamp(started_at)}
    held = flock.take(path, "pair lock file", metadata, flock.HeldLock)
    if held is None:
        raise PairServed(
            f"a connector{' --shadow' if shadow else ''} already serves account {account_id} as agent "
            f"{agent_id} on this machine ({_holder(path)}); one pair, one connector"
        )
    return held


def _holder(path: Path) -> str:
    raw: Any = flock.metadata_of(path)
    try:
        return f"state directory {raw['state_dir']}, pid {int(raw['pid'])}"
    except (ValueError, KeyError, TypeError):
        return "its state directory not recorded"


def _home_path(account_id: int, agent_id: int) -> Path:
    return _directory() / f"{flock.pair_stem(account_id, agent_id)}.home"


def record_home(account_id: int, agent_id: int, state_dir: Path) -> None:
    private_files.write_atomically(_home_path(account_id, agent_id), os.path.abspath(state_dir).encode())


def serving_elsewhere(account_id: int, agent_id: int, state_dir: Path) -> Path | None:
    """Another state directory recorded as serving the pair that still holds its configuration."""
    path = _home_path(account_id, agent_id)
    try:
        private_files.check_file(path, "pair record")
        recorded = Path(path.read_text())
    except FileNotFoundError:
        return None
    if recorded == Path(os.path.abspath(state_dir)):
        return None
    try:
        raw: Any = json_or_none((recorded / CONFIG_NAME).read_bytes())
        same = (int(raw["account_id"]), int(raw["agent_id"])) == (account_id, agent_id)
    except (OSError, ValueError, KeyError, TypeError):
        return None  # gone, or no longer this pair's: stale
    return recorded if same else None


def refuse_if_served_elsewhere(account_id: int, agent_id: int, state_dir: Path) -> None:
    """``run`` serves only from the directory the record names; it records itself if none does."""
    other = serving_elsewhere(account_id, agent_id, state_dir)
    if other is not None:
        raise UserError(
            f"account {account_id} agent {agent_id} is served from {other}, not {state_dir}; "
            f"run that one, or move it here with: bin/connect setup --state-dir {state_dir} --force",
            EXIT_CONFIG,
        )
    with contextlib.suppress(FileNotFoundError):
        record_home(account_id, agent_id, state_dir)
