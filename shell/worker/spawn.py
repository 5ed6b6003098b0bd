"""Start the worker program for one attempt, in a session of its own.

The session is an owner-only directory of the private directory (``shell.private_files``) named
by the attempt id (letters, digits and ``_``, at most 64): the MCP config, a 0600 file and the one
place the task token is written, and the files the worker's stdout and stderr go to. The config
is removed when the attempt ends, the session when the dispatcher releases it, and every session
a previous connector left at start (they can hold a token). A fault of the private directory is
``SessionSetupError``: no record's fault, and no worker is started.

The worker runs in the route's approved directory with its command's environment, in its own
session and process group, and reaches the connector only through the MCP server its config
names. Its stdin is closed but for a stream-json command's pipe, which carries its turns (none
with ``send_prompt=False``: ``doctor --deep``'s probe). A program that could not start is
``SpawnFailed``, a value: no worker process ever ran. ``RunningWorker`` is what the ledger records
of a worker: pid, group and start time (``shell.processes``), so nothing later signals another's
process."""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from core.dispatch_prompt import MCP_SERVER_NAME
from core.task_token import TASK_TOKEN_ENV
from shell import private_files, processes
from shell.worker.command import Turns, WorkerCommand

log = logging.getLogger("connector.worker")

REPOSITORY = Path(__file__).resolve().parents[2]
MCP_CONFIG_NAME = "mcp.json"
STDOUT_NAME = "stdout"
STDERR_NAME = "stderr"
_ATTEMPT_ID = re.compile(r"[A-Za-z0-9_]{1,64}")


class SessionSetupError(Exception):
    """The connector's private directory could not hold an attempt's session: no worker was started."""


@dataclass(frozen=True, slots=True, eq=False)
class RunningWorker:
    attempt_id: str
    pid: int
    pgid: int
    process_started: str  # processes.process_start_time: "" if /proc could not say
    session_dir: Path
    mcp_config: Path
    stdout: Path
    stderr: Path
    process: subprocess.Popen[bytes] = field(repr=False)
    turns: Turns | None = field(default=None, repr=False)  # a stream-json worker's stdin

    @property
    def leads_its_group(self) -> bool:
        """The only group the driver ever signals is one the worker leads."""
        return self.pid > 1 and self.pgid == self.pid


@dataclass(frozen=True, slots=True)
class SpawnFailed:
    attempt_id: str
    detail: str


def spawn(
    command: WorkerCommand,
    *,
    attempt_id: str,
    prompt: str,
    work_dir: Path,
    private_dir: Path,
    ledger_path: Path,
    token: str,
    repository: Path = REPOSITORY,
    environ: Mapping[str, str] | None = None,
    agent_id: int | None = None,
    send_prompt: bool = True,
    resume_session: str = "",
) -> RunningWorker | SpawnFailed:
    if not token:
        raise ValueError("a worker is started with its task's token")
    mcp_config = private_dir / attempt_id / MCP_CONFIG_NAME
    argv = command.render(prompt=prompt, mcp_config=mcp_config, work_dir=work_dir)
    if command.speaks_stream_json and resume_session:
        argv = (*argv, "--resume", resume_session)
    if any(token in argument for argument in argv):
        raise ValueError("the task token may never appear in a worker's argv")
    config = mcp_session_config(repository.resolve(), ledger_path.resolve(), token, agent_id)
    session_dir, out, err = open_session(private_dir, attempt_id, config)
    try:
        process = subprocess.Popen(
            argv,
            cwd=work_dir,
            env=command.environment(os.environ if environ is None else environ),
            stdin=subprocess.PIPE if command.speaks_stream_json else subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as error:  # Popen reaps the child before it raises
        remove_session(session_dir)
        return _spawn_failed(attempt_id, error)
    finally:
        os.close(out)
        os.close(err)
    turns = Turns(process.stdin) if command.speaks_stream_json else None
    running = _running(attempt_id, process, session_dir, turns)
    if turns is not None and send_prompt:
        turns.give(prompt)
    return running


def _spawn_failed(attempt_id: str, error: OSError) -> SpawnFailed:
    detail = f"{type(error).__name__}: {error.strerror or error}"
    if error.filename is not None:
        detail += f": {error.filename}"
    log.warning("worker attempt=%s could not start: %s", attempt_id, detail)
    return SpawnFailed(attempt_id, detail)


def _running(
    attempt_id: str, process: subprocess.Popen[bytes], session_dir: Path, turns: Turns | None
) -> RunningWorker:
    try:
        pgid = os.getpgid(process.pid)  # the kernel's answer; /proc may be unreadable
    except ProcessLookupError:
        pgid = process.pid  # already gone (and reaped); start_new_session made it its group's leader
    started = processes.process_start_time(process.pid) or ""
    log.info("worker attempt=%s started pid=%d pgid=%d", attempt_id, process.pid, pgid)
    return RunningWorker(
        attempt_id=attempt_id,
        pid=process.pid,
        pgid=pgid,
        process_started=started,
        session_dir=session_dir,
        mcp_config=session_dir / MCP_CONFIG_NAME,
        stdout=session_dir / STDOUT_NAME,
        stderr=session_dir / STDERR_NAME,
        process=process,
        turns=turns,
    )


def mcp_session_config(
    repository: Path, ledger_path: Path, token: str, agent_id: int | None = None
) -> dict[str, object]:
    """One stdio server, the connector's, with the task token in its env, launched the cheapest
    way: this interpreter on ``shell.worker.mcp_entry`` (``bin/connect mcp`` without its script)."""
    args = ["-P", "-m", "shell.worker.mcp_entry", "--ledger", str(ledger_path)]
    if agent_id is not None:
        args += ["--agent-id", str(int(agent_id))]
    return {
        "mcpServers": {
            MCP_SERVER_NAME: {
                "type": "stdio",
                "alwaysLoad": True,  # Claude Code: connected before its first model request
                "command": sys.executable,
                "args": args,
                "env": {"PYTHONPATH": str(repository), TASK_TOKEN_ENV: token},
            }
        }
    }


def open_session(private_dir: Path, attempt_id: str, config: dict[str, object]) -> tuple[Path, int, int]:
    """The attempt's session directory with its MCP config; descriptors for stdout and stderr."""
    if _ATTEMPT_ID.fullmatch(attempt_id) is None:
        raise SessionSetupError("an attempt id names a directory: letters, digits and _ only")
    try:
        private_files.ensure_directory(private_dir, "the worker sessions' directory")
    except private_files.PrivatePathError as error:
        raise SessionSetupError(str(error)) from error
    except OSError as error:
        why = f"the private directory {private_dir} is unusable: {error.strerror}"
        raise SessionSetupError(why) from error
    session_dir = private_dir / attempt_id
    try:
        private_files.make_directory(session_dir)
    except OSError as error:
        raise SessionSetupError(f"the session directory for {attempt_id}: {error.strerror}") from error
    try:
        private_files.write_new_file(session_dir / MCP_CONFIG_NAME, json.dumps(config, indent=2).encode())
        out = private_files.create_file(session_dir / STDOUT_NAME)
        try:
            err = private_files.create_file(session_dir / STDERR_NAME)
        except BaseException:
            os.close(out)
            raise
    except OSError as error:
        shutil.rmtree(session_dir, ignore_errors=True)
        raise SessionSetupError(f"the session for {attempt_id}: {error.strerror}") from error
    return session_dir, out, err


def remove_session(session_dir: Path) -> None:
    shutil.rmtree(session_dir, ignore_errors=True)


def sweep_sessions(private_dir: Path) -> list[str]:
    """Remove every session directory a previous connector left; the names removed."""
    if not private_dir.is_dir():
        return []
    removed: list[str] = []
    for entry in sorted(private_dir.iterdir()):
        if entry.is_dir() and not entry.is_symlink() and entry.name.startswith("att_"):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry.name)
    return removed
