"""Start the worker program for one attempt.

Rules:
1. The worker runs in the route's approved directory, with its command's environment
   (``shell.worker.command``), and reaches the connector only through the MCP server its session
   config names (``shell.worker.sessions``).
2. It starts in its own session and process group (``start_new_session``), stdout and stderr in
   session files. Its stdin is closed, except a stream-json command's pipe for its prompt, which
   supervision closes once every turn has its result. ``send_prompt=False`` writes nothing
   (``doctor --deep``'s probe); ``resume_session`` goes on with a conversation's session.
3. A program that could not be started is ``SpawnFailed``, a value: no worker process ever ran
   (``subprocess.Popen`` reaps the child before it raises).
4. ``RunningWorker`` is what the ledger records of a worker: pid, group and start time
   (``shell.processes``), so nothing later signals another's process."""

from __future__ import annotations

import logging
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from shell import processes
from shell.worker.claude_stream import Turns
from shell.worker.command import WorkerCommand
from shell.worker.sessions import (
    MCP_CONFIG_NAME,
    STDERR_NAME,
    STDOUT_NAME,
    mcp_session_config,
    open_session,
    remove_session,
)

log = logging.getLogger("connector.worker")

REPOSITORY = Path(__file__).resolve().parents[2]


@dataclass(frozen=True, slots=True, eq=False)
class RunningWorker:
    """A worker process that exists: what the ledger records of it, and the session's files."""

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
        """True when the worker leads a group of its own: the only group the driver ever signals."""
        return self.pid > 1 and self.pgid == self.pid


@dataclass(frozen=True, slots=True)
class SpawnFailed:
    """The worker program could not be started: no worker process ever ran."""

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
    """Start the worker for one attempt (rules 1-3)."""
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
    except OSError as error:
        remove_session(session_dir)
        detail = f"{type(error).__name__}: {error.strerror or error}"
        if error.filename is not None:
            detail += f": {error.filename}"
        log.warning("worker attempt=%s could not start: %s", attempt_id, detail)
        return SpawnFailed(attempt_id, detail)
    finally:
        os.close(out)
        os.close(err)
    try:
        pgid = os.getpgid(process.pid)  # the kernel's answer; /proc may be unreadable
    except ProcessLookupError:
        pgid = process.pid  # already gone (and reaped); start_new_session made it its group's leader
    started = processes.process_start_time(process.pid) or ""
    turns = Turns(process.stdin) if command.speaks_stream_json else None
    if turns is not None and send_prompt:
        turns.give(prompt)
    log.info("worker attempt=%s started pid=%d pgid=%d", attempt_id, process.pid, pgid)
    return RunningWorker(
        attempt_id=attempt_id,
        pid=process.pid,
        pgid=pgid,
        process_started=started,
        session_dir=session_dir,
        mcp_config=mcp_config,
        stdout=session_dir / STDOUT_NAME,
        stderr=session_dir / STDERR_NAME,
        process=process,
        turns=turns,
    )
