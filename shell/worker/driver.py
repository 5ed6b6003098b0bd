"""The worker driver the dispatcher calls: start the worker for an attempt in a session of its
own, supervise it to its end and name the stop, give it follow-up turns, release its session.

The session is an owner-only directory of the private directory named by the attempt id: the MCP
config (the one place the task token is written, a 0600 file), and the files the worker's output
is kept in (``shell.worker.output``; a worker past its cap is ended). The config goes when the
attempt ends, the session when the dispatcher releases it, and every session a previous connector
left at start. Claude Code's own configuration and transcripts (``CLAUDE_CONFIG_DIR``) are the
conversation's, in the private directory: emptied for a worker that resumes no session, removed at
release unless the conversation's next task resumes it. A fault of the private directory is
``SessionSetupError``: no record's fault, and no worker is started. The worker runs in the
route's directory with its command's environment, in a process group of its own, and reaches
the connector only through the MCP server its config names. A program that could not start is
``SpawnFailed``, a value: no worker process ever ran. ``RunningWorker`` is what the ledger
records of a worker: pid, group and start time, so nothing later signals another's process.

Supervision never reaps the worker before its group is done, so an unreaped leader holds its
number and its group's and every signal reaches only the worker's own processes. At the deadline
or shutdown the group gets SIGTERM, the grace (a ``Shutdown``'s when shorter), then SIGKILL,
and only a group the worker leads; members left by a worker that exited are ended the same way,
and what it started outside its group, reparented to the connector, is found by its mark. A
still-running report that fails is logged and never abandons supervision; a slow one skips ticks,
never bunches them. Claude Code's stream is read as it runs: an init not as asked ends the group at
once; once a result answers every message given, stdin is closed, and a worker still running
``after_result_seconds`` later is ended. A group that outlived SIGKILL leaves the attempt
unsettled. An event whose follow-up turn could not be given waits for a task of its own."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from core import worker_stream
from core.dispatch_prompt import dispatch_prompt, follow_up_prompt
from core.snapshots import StopReason
from core.task_token import TASK_TOKEN_ENV
from core.worker_allowances import MCP_SERVER_NAME
from core.worker_output import OUTPUT_CAP_BYTES, passed_cap
from core.worker_stream import Exited, Signaled, StopRequest, Vanished, WorkerEnd, stop_reason
from shell import code_root, private_files, processes
from shell.clock import Clock, SystemClock
from shell.log_format import ids
from shell.worker.command import (
    CLAUDE_CONFIG_ENV,
    WORKER_MARK_ENV,
    StreamWatch,
    Turns,
    WorkerCommand,
    close_input,
)
from shell.worker.output import Pump

if TYPE_CHECKING:
    from shell.ledger.tasks import Launch

__all__ = ["CommandDriver", "SessionSetupError", "SpawnFailed", "WorkerCommand", "release", "sweep_sessions"]

log = logging.getLogger("connector.worker")

MCP_CONFIG_NAME = "mcp.json"
STDOUT_NAME = "stdout"
STDERR_NAME = "stderr"
CLAUDE_DIR_NAME = "claude"  # of the private directory: a conversation's Claude Code configuration each
_ATTEMPT_ID = re.compile(r"[A-Za-z0-9_]{1,64}")
AFTER_RESULT_SECONDS = 10.0
DEFAULT_STILL_RUNNING_SECONDS = 600.0
POLL_SECONDS = 0.05
OUTPUT_DRAIN_SECONDS = 2.0  # after the group's end, for what its pipes still hold
STRAY_GRACE_SECONDS = 1.0  # SIGTERM to SIGKILL for what a worker left outside its group, at most


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
    output: tuple[Pump, ...] = field(default=(), repr=False)  # its stdout and stderr, into their files
    claude_dir: Path | None = None  # its Claude Code configuration and transcripts

    @property
    def leads_its_group(self) -> bool:
        return self.pid > 1 and self.pgid == self.pid

    @property
    def mark(self) -> str:
        """In its environment, and so in every process it starts (``end_marked_descendants``)."""
        return f"{WORKER_MARK_ENV}={self.attempt_id}"

    @property
    def output_passed_cap(self) -> bool:
        return any(pump.passed.is_set() for pump in self.output)


@dataclass(frozen=True, slots=True)
class SpawnFailed:
    attempt_id: str
    detail: str


def spawn(command: WorkerCommand, *, attempt_id: str, prompt: str, work_dir: Path, private_dir: Path,
          ledger_path: Path, token: str, environ: Mapping[str, str] | None = None,
          agent_id: int | None = None, send_prompt: bool = True,
          resume_session: str = "", output_cap: int = OUTPUT_CAP_BYTES,
          claude_dir: Path | None = None) -> RunningWorker | SpawnFailed:
    if not token:
        raise ValueError("a worker is started with its task's token")
    if (changed := command.mcp_changed()) is not None:  # each start reads its MCP files again
        log.warning("worker attempt=%s could not start: %s", attempt_id, changed,
                    extra=ids(attempt=attempt_id))
        return SpawnFailed(attempt_id, changed)
    mcp_config = private_dir / attempt_id / MCP_CONFIG_NAME
    argv = command.render(prompt=prompt, mcp_config=mcp_config, work_dir=work_dir)
    if command.speaks_stream_json and resume_session:
        argv = (*argv, "--resume", resume_session)
    if any(token in argument for argument in argv):
        raise ValueError("the task token may never appear in a worker's argv")
    config = mcp_session_config(ledger_path.resolve(), token, agent_id)
    environment = command.environment(os.environ if environ is None else environ)
    environment[WORKER_MARK_ENV] = attempt_id  # in every process it starts, found at its end
    if claude_dir is not None:
        environment[CLAUDE_CONFIG_ENV] = str(_claude_directory(claude_dir, fresh=not resume_session))
    session_dir, out, err = open_session(private_dir, attempt_id, config)
    try:
        process = subprocess.Popen(
            argv, cwd=work_dir, env=environment,
            stdin=subprocess.PIPE if command.speaks_stream_json else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, close_fds=True)
    except OSError as error:  # Popen reaps the child before it raises
        os.close(out)
        os.close(err)
        shutil.rmtree(session_dir, ignore_errors=True)
        detail = f"{type(error).__name__}: {error.strerror or error}"
        if error.filename is not None:
            detail += f": {error.filename}"
        log.warning("worker attempt=%s could not start: %s", attempt_id, detail,
                    extra=ids(attempt=attempt_id))
        return SpawnFailed(attempt_id, detail)
    assert process.stdout is not None
    assert process.stderr is not None
    output = (Pump(process.stdout, out, output_cap, f"{attempt_id}-stdout"),
              Pump(process.stderr, err, output_cap, f"{attempt_id}-stderr"))
    turns = Turns(process.stdin) if command.speaks_stream_json else None
    running = _running(attempt_id, process, session_dir, turns, output=output, claude_dir=claude_dir)
    if turns is not None and send_prompt:
        turns.give(prompt)
    return running


def _running(attempt_id: str, process: subprocess.Popen[bytes], session_dir: Path,
             turns: Turns | None, *, output: tuple[Pump, ...], claude_dir: Path | None) -> RunningWorker:
    try:
        pgid = os.getpgid(process.pid)  # the kernel's answer; /proc may be unreadable
    except ProcessLookupError:
        pgid = process.pid  # already gone (and reaped); start_new_session made it its group's leader
    started = processes.process_start_time(process.pid) or ""
    log.info("worker attempt=%s started pid=%d pgid=%d", attempt_id, process.pid, pgid,
             extra=ids(attempt=attempt_id))
    files = (session_dir / MCP_CONFIG_NAME, session_dir / STDOUT_NAME, session_dir / STDERR_NAME)
    return RunningWorker(attempt_id, process.pid, pgid, started, session_dir, *files, process, turns, output,
                         claude_dir)


def mcp_session_config(ledger_path: Path, token: str, agent_id: int | None = None) -> dict[str, object]:
    """One stdio server, the connector's, with the task token in its env, launched the cheapest
    way: this interpreter on ``shell.worker.mcp_entry`` (``bin/connect mcp`` without its script),
    finding the code this process runs (``shell.code_root``), the clone's or the installed one."""
    args = ["-P", "-m", "shell.worker.mcp_entry", "--ledger", str(ledger_path)]
    if agent_id is not None:
        args += ["--agent-id", str(int(agent_id))]
    server = {"type": "stdio", "alwaysLoad": True,  # Claude Code: connected before its first model request
              "command": sys.executable, "args": args,
              "env": {"PYTHONPATH": code_root.python_path(), TASK_TOKEN_ENV: token}}
    return {"mcpServers": {MCP_SERVER_NAME: server}}


def claude_directory(private_dir: Path, conversation: str) -> Path:
    """Where a conversation's Claude Code keeps its configuration and transcripts."""
    return private_dir / CLAUDE_DIR_NAME / hashlib.sha256(conversation.encode()).hexdigest()[:32]


def _claude_directory(path: Path, *, fresh: bool) -> Path:
    """``path``, made owner-only; emptied first when the worker resumes no session."""
    if fresh:
        shutil.rmtree(path, ignore_errors=True)
    try:
        private_files.ensure_directory(path, "the worker's Claude Code directory")
    except private_files.PrivatePathError as error:
        raise SessionSetupError(str(error)) from error
    except OSError as error:
        raise SessionSetupError(f"the worker's Claude Code directory {path}: {error.strerror}") from error
    return path


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


@dataclass(frozen=True, slots=True)
class Supervision:
    """How a supervised worker ended: the stop reason, and the facts it was named from."""

    stop_reason: StopReason
    end: WorkerEnd
    signals: tuple[str, ...] = ()  # what the driver sent the group, in order
    still_running: int = 0  # still-running ticks reported
    survivors: bool = False  # members of the group outlived SIGKILL
    facts: worker_stream.StreamFacts | None = None  # what a stream-json worker said
    strays: int = 0  # processes it left outside its group, found by its mark and ended
    strays_survived: bool = False  # some of them outlived SIGKILL


class StopSignal(Protocol):
    def is_set(self) -> bool: ...


class Shutdown(threading.Event):
    """The dispatcher's stop, with the grace it gives each worker (``None``: the driver's own)."""

    grace_seconds: float | None = None

    def begin(self, grace_seconds: float | None) -> None:
        self.grace_seconds = grace_seconds
        self.set()


def _grace(grace_seconds: float, stop_event: StopSignal) -> float:
    """The grace a group gets: once a shutdown has begun, its own when it asks for less (from the
    SIGTERM, whenever the shutdown began)."""
    asked = stop_event.grace_seconds if isinstance(stop_event, Shutdown) and stop_event.is_set() else None
    return grace_seconds if asked is None else min(grace_seconds, asked)


def supervise(running: RunningWorker, *, deadline_at: datetime | None, stop_event: StopSignal, clock: Clock,
              still_running_every: float = DEFAULT_STILL_RUNNING_SECONDS,
              on_tick: Callable[[], None] = lambda: None, grace_seconds: float = worker_stream.GRACE_SECONDS,
              poll_seconds: float = POLL_SECONDS, watch: StreamWatch | None = None, permission_mode: str = "",
              after_result_seconds: float = AFTER_RESULT_SECONDS) -> Supervision:
    """Wait for the worker to end; tick while it runs; stop it at the deadline or at shutdown."""
    if still_running_every <= 0:
        raise ValueError("the still-running interval is positive")
    signals: tuple[str, ...] = ()
    survivors = False
    strays, strays_survived = 0, False
    try:
        requested, ticks = _wait(running, watch, stop_event, deadline_at, clock, on_tick=on_tick,
                                 every=still_running_every, poll=poll_seconds, mode=permission_mode,
                                 after_result=after_result_seconds)
        if requested is not None:
            log.info("worker attempt=%s stop=%s pid=%d", running.attempt_id, requested, running.pid,
                     extra=ids(attempt=running.attempt_id))
        # Whether it was asked to stop or exited and left members behind, the group ends now,
        # while the unreaped leader still holds its number.
        if running.leads_its_group:
            grace = partial(_grace, grace_seconds, stop_event)  # a shutdown during the grace shortens it
            signals, survivors = processes.end_child_group(running.pid, running.process_started, grace,
                                                           clock, poll_seconds)
        ending = _reap(running, poll_seconds, clock)
        strays, strays_survived = _end_strays(running, min(_grace(grace_seconds, stop_event),
                                                           STRAY_GRACE_SECONDS), clock, poll_seconds)
        for pump in running.output:  # the files whole before the stream's last read
            pump.join(OUTPUT_DRAIN_SECONDS)
    finally:
        running.mcp_config.unlink(missing_ok=True)
        if running.turns is not None:
            running.turns.close()
    end = WorkerEnd(ending if ending is not None else Vanished(), requested)
    reason = stop_reason(end)
    log.info("worker attempt=%s ended stop_reason=%s ending=%s signals=%s",
             running.attempt_id, reason, end.ending, ",".join(signals) or "-",
             extra=ids(attempt=running.attempt_id))  # fmt: skip
    facts = watch.poll() if watch is not None else None
    return Supervision(reason, end, signals, ticks, survivors or ending is None, facts, strays,
                       strays_survived)


def _end_strays(running: RunningWorker, grace_seconds: float, clock: Clock, poll: float) -> tuple[int, bool]:
    """End what the worker started outside its group, reparented to this process (the connector is
    its descendants' subreaper): how many, and whether some outlived SIGKILL."""
    if running.pid <= 1:
        return 0, False
    strays, survived = processes.end_marked_descendants(running.mark, grace_seconds, clock, poll)
    if strays:
        log.warning("worker attempt=%s left %d process(es) outside its group: ended%s",
                    running.attempt_id, strays, "; some outlived SIGKILL" if survived else "",
                    extra=ids(attempt=running.attempt_id))
    return strays, survived


def _wait(running: RunningWorker, watch: StreamWatch | None, stop_event: StopSignal,
          deadline_at: datetime | None, clock: Clock, *, on_tick: Callable[[], None], every: float,
          poll: float, mode: str, after_result: float) -> tuple[StopRequest | None, int]:
    """Poll until the leader ends (None) or a stop is due (which); and the ticks reported."""
    next_tick = clock.monotonic() + every
    ticks = 0
    hang_after: float | None = None
    while _observe(running) is None:
        if running.output_passed_cap:
            return StopRequest.output_cap, ticks
        if watch is not None:
            said = watch.poll()
            if said.init is not None and worker_stream.init_problem(said.init, permission_mode=mode):
                return StopRequest.not_started, ticks
            if said.results and hang_after is None and _answered(running, said):
                hang_after = clock.monotonic() + after_result
            if hang_after is not None and clock.monotonic() >= hang_after:
                return StopRequest.after_result, ticks
        if stop_event.is_set():
            return StopRequest.shutdown, ticks
        if deadline_at is not None and clock.now() >= deadline_at:
            return StopRequest.deadline, ticks
        if clock.monotonic() >= next_tick:
            ticks += 1
            try:
                on_tick()
            except Exception:
                log.exception("worker attempt=%s: the still-running report failed", running.attempt_id,
                              extra=ids(attempt=running.attempt_id))
            next_tick += every
            if next_tick <= clock.monotonic():  # a slow report skips ticks; it never bunches them
                next_tick = clock.monotonic() + every
        clock.sleep(poll)
    return None, ticks


def _ending_from_status(returncode: int | None) -> worker_stream.Ending | None:
    if returncode is None:
        return None
    return Signaled(-returncode) if returncode < 0 else Exited(returncode)


def _observe(running: RunningWorker) -> worker_stream.Ending | None:
    """How the leader ended, without reaping it; ``None`` while it runs."""
    if running.pid <= 1:
        # Not a process of this machine's (a stand-in Popen): its own status is all there is.
        return _ending_from_status(running.process.poll())
    try:
        result = os.waitid(os.P_PID, running.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        # Someone reaped it: only what Popen kept, if anything, can say how it ended.
        return _ending_from_status(running.process.returncode) or Vanished()
    if result is None or result.si_pid == 0:
        return None
    return Exited(result.si_status) if result.si_code == os.CLD_EXITED else Signaled(result.si_status)


def _reap(running: RunningWorker, poll: float, clock: Clock) -> worker_stream.Ending | None:
    """Reap the leader once it has exited; how it ended, or ``None`` if it would not exit."""
    until = clock.monotonic() + processes.KILL_WAIT_SECONDS
    while (ending := _observe(running)) is None:
        if clock.monotonic() >= until:
            return None
        clock.sleep(poll)
    if running.pid > 1 and not isinstance(ending, Vanished):
        running.process.wait()
    return ending


def _answered(running: RunningWorker, said: worker_stream.StreamFacts) -> bool:
    """Every turn given has its result, and the input is closed; True once it is. A worker that
    replays no message (no ``--replay-user-messages``) is answered by any result."""
    if running.turns is None:
        close_input(running.process.stdin)
        return True
    return running.turns.close_if_answered(said.answered if said.replays else running.turns.given)


def release(running: RunningWorker, resumed: bool = False) -> None:
    """Remove the session; and its Claude Code directory unless the conversation's next task resumes it."""
    shutil.rmtree(running.session_dir, ignore_errors=True)
    if running.claude_dir is not None and not resumed:
        shutil.rmtree(running.claude_dir, ignore_errors=True)


@dataclass
class CommandDriver:
    command: WorkerCommand
    private_dir: Path
    ledger_path: Path
    clock: Clock = field(default_factory=SystemClock)
    grace_seconds: float = worker_stream.GRACE_SECONDS
    still_running_every: float = DEFAULT_STILL_RUNNING_SECONDS
    after_result_seconds: float = AFTER_RESULT_SECONDS
    environ: Mapping[str, str] | None = None
    agent_id: int | None = None  # the agent's Person id: the MCP server strips its own mentions
    output_cap: int = OUTPUT_CAP_BYTES  # of each of a worker's stdout and stderr, kept on disk

    def spawn(self, launch: Launch, work_dir: Path) -> RunningWorker | SpawnFailed:
        """Start the worker, resuming the conversation's session when the launch names one."""
        prompt = dispatch_prompt(launch.task_id, launch.event_ids[0], launch.trigger, launch.recording_url)
        return spawn(self.command, attempt_id=launch.attempt_id, prompt=prompt, work_dir=work_dir,
                     private_dir=self.private_dir, ledger_path=self.ledger_path, token=launch.token,
                     environ=self.environ, agent_id=self.agent_id,
                     resume_session=launch.resume_session, output_cap=self.output_cap,
                     claude_dir=claude_directory(self.private_dir, launch.conversation or launch.attempt_id))

    def follow_up(self, started: object, event_ids: tuple[int, ...]) -> tuple[int, ...]:
        """The events whose turn was given to the running worker."""
        if not isinstance(started, RunningWorker) or started.turns is None:
            return ()
        return tuple(event_id for event_id in event_ids if started.turns.give(follow_up_prompt(event_id)))

    def supervise(self, started: object, deadline_at: datetime, stop: StopSignal,
                  on_tick: Callable[[], None]) -> worker_stream.WorkerAccount | None:
        """How the worker ended; None when members of its group outlived SIGKILL (not settled)."""
        if not isinstance(started, RunningWorker):
            raise TypeError("this driver supervises only the workers it started")
        mode = self.command.permission_mode
        watch = StreamWatch(started.stdout) if self.command.speaks_stream_json else None
        supervision = supervise(started, deadline_at=deadline_at, stop_event=stop, clock=self.clock,
                                on_tick=on_tick, still_running_every=self.still_running_every,
                                grace_seconds=self.grace_seconds, watch=watch, permission_mode=mode,
                                after_result_seconds=self.after_result_seconds)
        if supervision.survivors or supervision.strays_survived:
            return None
        asked = supervision.end.stop_requested
        cut_short = asked in (StopRequest.deadline, StopRequest.shutdown, StopRequest.output_cap)
        because = passed_cap(self.output_cap) if asked is StopRequest.output_cap else ""
        told = worker_stream.account(supervision.stop_reason, supervision.facts, permission_mode=mode,
                                     cut_short=cut_short, ended_because=because)
        if told.not_started:
            log.warning("worker attempt=%s never began its work: %s", started.attempt_id, told.not_started,
                        extra=ids(attempt=started.attempt_id))
        return told

    def release(self, started: object, resumed: bool = False) -> None:
        if isinstance(started, RunningWorker):
            release(started, resumed)

    def end_recorded_group(self, pid: int, pgid: int, process_started: str) -> bool:
        """Recovery: True when the group a previous connector recorded is gone (ended now, or already)."""
        result = processes.terminate_group(pgid, pid, process_started, self.grace_seconds, self.clock)
        log.info("worker recovery pgid=%d outcome=%s: %s", pgid, result.outcome, result.reason)
        ended = processes.Termination
        return result.outcome in (ended.gone, ended.terminated, ended.killed)
