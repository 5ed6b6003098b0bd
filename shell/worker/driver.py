"""The worker driver: start the worker program for an attempt, and supervise it to its end.

The worker is Claude Code by default, any program by configuration (``WorkerCommand``). It runs
in the route's approved directory, in a process group of its own, with an allowlisted
environment, and reaches the connector only through the MCP server its session config names.

Rules:
1. The task token is never in argv and never in the worker's environment. It is written once,
   into the MCP server's ``env`` in the attempt's session config: a 0600 file in a 0700
   directory of the connector's private directory. The config file is removed when the attempt
   ends; the whole session directory when the dispatcher releases the attempt.
2. The worker's environment is the allowlist (``PATH HOME LANG LC_* TERM USER LOGNAME SHELL
   TMPDIR XDG_*``) taken from the connector's environment, plus exactly what the command's
   configuration names (``pass_env`` values copied, ``env`` values set). The task token's
   variable can be neither.
3. The worker starts in its own session and process group (``start_new_session``), with stdin
   closed and stdout and stderr in files of the session directory.
4. A program that could not be started at all is ``SpawnFailed``, a value: the exec failed, so
   no worker process ever ran (``subprocess.Popen`` reaps the child before it raises). A fault
   of the connector's own private directory raises ``SessionSetupError`` instead: it is no
   record's fault.
5. ``supervise`` never reaps the worker before its group is done: while the leader is an
   unreaped zombie its number, and so its group's, cannot be reused, so every signal to the
   group reaches only the worker's own processes. Members left behind by a worker that exited
   are stopped the same way (SIGTERM, grace, SIGKILL) before the attempt ends.
6. At the deadline, or when the connector shuts down, the group gets SIGTERM, the grace, then
   SIGKILL. ``core.stop_reasons`` names the stop from the facts.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Protocol

from core.dispatch_prompt import DISPATCH_TOOLS, MCP_SERVER_NAME, dispatch_prompt, tool_name
from core.snapshots import StopReason
from core.stop_reasons import (
    Ending,
    Exited,
    NeverStarted,
    Signaled,
    StopRequest,
    Vanished,
    WorkerEnd,
    stop_reason,
)
from shell import processes
from shell.clock import Clock, SystemClock

log = logging.getLogger("connector.worker")

REPOSITORY = Path(__file__).resolve().parents[2]
TASK_TOKEN_ENV = "BASECAMP_CONNECT_TASK_TOKEN"  # noqa: S105 -- a variable's name, not its value
DEFAULT_GRACE_SECONDS = 30.0
DEFAULT_STILL_RUNNING_SECONDS = 600.0
POLL_SECONDS = 0.05
KILL_WAIT_SECONDS = 5.0

ENVIRONMENT_NAMES = frozenset({"PATH", "HOME", "LANG", "TERM", "USER", "LOGNAME", "SHELL", "TMPDIR"})
ENVIRONMENT_PREFIXES = ("LC_", "XDG_")
# Variables of the connector's own that configuration may not hand a worker either.
CONNECTOR_SECRETS = frozenset({TASK_TOKEN_ENV})

PLACEHOLDERS = frozenset({"prompt", "mcp_config", "work_dir"})
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ATTEMPT_ID = re.compile(r"[A-Za-z0-9_]{1,64}")

MCP_CONFIG_NAME = "mcp.json"
STDOUT_NAME = "stdout"
STDERR_NAME = "stderr"


class SessionSetupError(Exception):
    """The connector's private directory could not hold an attempt's session: no worker was started."""


def _is_allowlisted(name: str) -> bool:
    return name in ENVIRONMENT_NAMES or name.startswith(ENVIRONMENT_PREFIXES)


@dataclass(frozen=True, slots=True)
class WorkerCommand:
    """The worker program's argv template and the environment its configuration adds.

    ``argv`` may hold the placeholders ``{prompt}``, ``{mcp_config}`` and ``{work_dir}``,
    anywhere in an argument; they are replaced in one pass, so a value is never read again as a
    template. Any other ``{name}`` is refused, so a misspelt placeholder never reaches a worker
    as text. Other braces are left as they are.
    """

    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()  # set to exactly these values
    pass_env: tuple[str, ...] = ()  # copied from the connector's environment when present

    def __post_init__(self) -> None:
        if not self.argv or not self.argv[0]:
            raise ValueError("a worker command needs a program")
        for argument in self.argv:
            for name in _PLACEHOLDER.findall(argument):
                if name not in PLACEHOLDERS:
                    raise ValueError(
                        f"unknown placeholder {{{name}}} in the worker command; "
                        f"known: {', '.join(sorted(PLACEHOLDERS))}"
                    )
        for name in [name for name, _ in self.env] + list(self.pass_env):
            if _VARIABLE.fullmatch(name) is None:
                raise ValueError(f"{name!r} is not an environment variable name")
            if name in CONNECTOR_SECRETS:
                raise ValueError(f"{name} is the connector's own and is never handed to a worker")

    @classmethod
    def claude_code(
        cls,
        program: str = "claude",
        env: Mapping[str, str] | None = None,
        pass_env: Iterable[str] = (),
    ) -> WorkerCommand:
        """Claude Code in print mode, with only the connector's MCP server and its dispatch tools."""
        return cls(
            argv=(
                program,
                "-p",
                "{prompt}",
                "--mcp-config",
                "{mcp_config}",
                "--strict-mcp-config",
                "--output-format",
                "json",
                "--allowedTools",
                ",".join(tool_name(tool) for tool in DISPATCH_TOOLS),
            ),
            env=tuple(sorted((env or {}).items())),
            pass_env=tuple(pass_env),
        )

    @classmethod
    def configured(cls, argv: Iterable[str] | None) -> WorkerCommand:
        """The configuration's worker command, or Claude Code when it names none."""
        given = tuple(argv or ())
        return cls(argv=given) if given else cls.claude_code()

    def program_missing(self) -> str | None:
        """One line when the program the worker runs is not found (on ``$PATH``, or at its path),
        so a missing program is said before a request fails in public; None when it is there."""
        program = self.argv[0] if self.argv else ""
        if program and shutil.which(program) is not None:
            return None
        return (
            f"worker: the program {program!r} is not found on PATH; install it, or name another "
            "with setup --worker-command"
        )

    def render(self, *, prompt: str, mcp_config: Path, work_dir: Path) -> tuple[str, ...]:
        """The argv for one attempt."""
        values = {"prompt": prompt, "mcp_config": str(mcp_config), "work_dir": str(work_dir)}
        return tuple(
            _PLACEHOLDER.sub(lambda match: values.get(match.group(1), match.group(0)), argument)
            for argument in self.argv
        )

    def environment(self, environ: Mapping[str, str]) -> dict[str, str]:
        """The worker's whole environment, from the connector's (rule 2)."""
        chosen = {name: value for name, value in environ.items() if _is_allowlisted(name)}
        chosen.update({name: environ[name] for name in self.pass_env if name in environ})
        chosen.update(dict(self.env))
        for name in CONNECTOR_SECRETS:
            chosen.pop(name, None)
        return chosen


def mcp_session_config(
    repository: Path, ledger_path: Path, token: str, agent_id: int | None = None
) -> dict[str, object]:
    """The session's MCP config: one stdio server, the connector's, with the task token in its env.
    It is launched the cheapest way: this interpreter on ``shell.worker.mcp_entry`` (what
    ``bin/connect mcp`` runs, without its script and its other commands)."""
    args = ["-P", "-m", "shell.worker.mcp_entry", "--ledger", str(ledger_path)]
    if agent_id is not None:
        args += ["--agent-id", str(int(agent_id))]
    return {
        "mcpServers": {
            MCP_SERVER_NAME: {
                "type": "stdio",
                "command": sys.executable,
                "args": args,
                "env": {"PYTHONPATH": str(repository), TASK_TOKEN_ENV: token},
            }
        }
    }


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

    @property
    def leads_its_group(self) -> bool:
        """True when the worker leads a group of its own: the only group the driver ever signals."""
        return self.pid > 1 and self.pgid == self.pid


@dataclass(frozen=True, slots=True)
class SpawnFailed:
    """The worker program could not be started: no worker process ever ran."""

    attempt_id: str
    detail: str


@dataclass(frozen=True, slots=True)
class Supervision:
    """How a supervised worker ended: the stop reason, and the facts it was named from."""

    stop_reason: StopReason
    end: WorkerEnd
    signals: tuple[str, ...] = ()  # what the driver sent the group, in order
    still_running: int = 0  # still-running ticks reported
    survivors: bool = False  # members of the group outlived SIGKILL


class StopSignal(Protocol):
    def is_set(self) -> bool: ...


def _private_directory(root: Path) -> None:
    """Make ``root`` an owner-only directory of ours, or refuse."""
    try:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        status = root.lstat()
        if not stat.S_ISDIR(status.st_mode) or status.st_uid != os.geteuid():
            raise SessionSetupError(f"{root} is not a directory of this user's")
        if stat.S_IMODE(status.st_mode) != 0o700:
            root.chmod(0o700)
    except OSError as error:
        raise SessionSetupError(f"the private directory {root} is unusable: {error.strerror}") from error


def _private_file(path: Path, content: bytes = b"") -> int:
    """Create ``path`` (never an existing one, never through a link), mode 0600; its descriptor."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        os.fchmod(descriptor, 0o600)
        view = memoryview(content)
        while view:
            view = view[os.write(descriptor, view) :]
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def _session(private_dir: Path, attempt_id: str, config: dict[str, object]) -> tuple[Path, int, int]:
    """The attempt's session directory with its MCP config; descriptors for stdout and stderr."""
    if _ATTEMPT_ID.fullmatch(attempt_id) is None:
        raise SessionSetupError("an attempt id names a directory: letters, digits and _ only")
    _private_directory(private_dir)
    session_dir = private_dir / attempt_id
    try:
        session_dir.mkdir(mode=0o700)
    except OSError as error:
        raise SessionSetupError(f"the session directory for {attempt_id}: {error.strerror}") from error
    try:
        session_dir.chmod(0o700)
        os.close(_private_file(session_dir / MCP_CONFIG_NAME, json.dumps(config, indent=2).encode()))
        out = _private_file(session_dir / STDOUT_NAME)
        try:
            err = _private_file(session_dir / STDERR_NAME)
        except BaseException:
            os.close(out)
            raise
    except OSError as error:
        shutil.rmtree(session_dir, ignore_errors=True)
        raise SessionSetupError(f"the session for {attempt_id}: {error.strerror}") from error
    return session_dir, out, err


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
) -> RunningWorker | SpawnFailed:
    """Start the worker for one attempt (rules 1-4)."""
    if not token:
        raise ValueError("a worker is started with its task's token")
    mcp_config = private_dir / attempt_id / MCP_CONFIG_NAME
    argv = command.render(prompt=prompt, mcp_config=mcp_config, work_dir=work_dir)
    if any(token in argument for argument in argv):
        raise ValueError("the task token may never appear in a worker's argv")
    config = mcp_session_config(repository.resolve(), ledger_path.resolve(), token, agent_id)
    session_dir, out, err = _session(private_dir, attempt_id, config)
    try:
        process = subprocess.Popen(
            argv,
            cwd=work_dir,
            env=command.environment(os.environ if environ is None else environ),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as error:
        shutil.rmtree(session_dir, ignore_errors=True)
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
    )


def _ending_from_status(returncode: int | None) -> Ending | None:
    if returncode is None:
        return None
    if returncode < 0:
        return Signaled(-returncode)
    return Exited(returncode)


def _observe(running: RunningWorker) -> Ending | None:
    """How the leader ended, without reaping it; ``None`` while it runs (rule 5)."""
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
    if result.si_code == os.CLD_EXITED:
        return Exited(result.si_status)
    return Signaled(result.si_status)


def _unreaped_child(pid: int) -> bool:
    """True while ``pid`` is this process's child, alive or a zombie not yet reaped."""
    if pid <= 1:
        return False
    try:
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return True


def _signal_group(running: RunningWorker, number: signal.Signals) -> bool:
    """Signal the worker's group only while its leader is provably the worker: our own child not
    yet reaped (its number cannot be reused), or the very process ``/proc`` recorded."""
    if not running.leads_its_group:
        return False
    if not (_unreaped_child(running.pid) or processes.is_same_process(running.pid, running.process_started)):
        return False
    try:
        os.killpg(running.pgid, number)
    except ProcessLookupError:
        return False
    return True


def _wait_until_done(running: RunningWorker, seconds: float, clock: Clock, poll: float) -> bool:
    """Wait up to ``seconds`` for the group to have no live member; True when it has none."""
    until = clock.monotonic() + max(0.0, seconds)
    while running.leads_its_group and processes.group_members(running.pgid):
        if clock.monotonic() >= until:
            return False
        clock.sleep(poll)
    return True


def _end_group(
    running: RunningWorker, grace: float, clock: Clock, poll: float
) -> tuple[tuple[str, ...], bool]:
    """SIGTERM, the grace, SIGKILL: the signals sent, and whether members survived them all."""
    if not running.leads_its_group or not processes.group_members(running.pgid):
        return (), False
    if not _signal_group(running, signal.SIGTERM):
        return (), bool(processes.group_members(running.pgid))
    sent = ["SIGTERM"]
    if _wait_until_done(running, grace, clock, poll):
        return tuple(sent), False
    if _signal_group(running, signal.SIGKILL):
        sent.append("SIGKILL")
    done = _wait_until_done(running, KILL_WAIT_SECONDS, clock, poll)
    return tuple(sent), not done


def _reap(running: RunningWorker, poll: float, clock: Clock) -> Ending | None:
    """Reap the leader once it has exited; how it ended, or ``None`` if it would not exit."""
    until = clock.monotonic() + KILL_WAIT_SECONDS
    while (ending := _observe(running)) is None:
        if clock.monotonic() >= until:
            return None
        clock.sleep(poll)
    if running.pid > 1 and not isinstance(ending, Vanished):
        running.process.wait()
    return ending


def supervise(
    running: RunningWorker,
    *,
    deadline_at: datetime | None,
    stop_event: StopSignal,
    clock: Clock,
    still_running_every: float = DEFAULT_STILL_RUNNING_SECONDS,
    on_tick: Callable[[], None] | None = None,
    grace_seconds: float = DEFAULT_GRACE_SECONDS,
    poll_seconds: float = POLL_SECONDS,
) -> Supervision:
    """Wait for the worker to end; tick while it runs; stop it at the deadline or at shutdown."""
    if still_running_every <= 0:
        raise ValueError("the still-running interval is positive")
    next_tick = clock.monotonic() + still_running_every
    ticks = 0
    requested: StopRequest | None = None
    signals: tuple[str, ...] = ()
    survivors = False
    try:
        while (ending := _observe(running)) is None:
            if stop_event.is_set():
                requested = StopRequest.shutdown
                break
            if deadline_at is not None and clock.now() >= deadline_at:
                requested = StopRequest.deadline
                break
            if clock.monotonic() >= next_tick:
                ticks += 1
                _tick(running, on_tick)
                next_tick += still_running_every
                if next_tick <= clock.monotonic():  # a slow report skips ticks; it never bunches them
                    next_tick = clock.monotonic() + still_running_every
            clock.sleep(poll_seconds)
        if requested is not None:
            log.info("worker attempt=%s stop=%s pid=%d", running.attempt_id, requested, running.pid)
        # Whether it was asked to stop or exited and left members behind, the group ends now,
        # while the unreaped leader still holds its number.
        signals, survivors = _end_group(running, grace_seconds, clock, poll_seconds)
        ending = _reap(running, poll_seconds, clock)
    finally:
        running.mcp_config.unlink(missing_ok=True)
    end = WorkerEnd(ending if ending is not None else Vanished(), requested)
    reason = stop_reason(end)
    log.info(
        "worker attempt=%s ended stop_reason=%s ending=%s signals=%s",
        running.attempt_id,
        reason,
        end.ending,
        ",".join(signals) or "-",
    )
    return Supervision(reason, end, signals, ticks, survivors or ending is None)


def _tick(running: RunningWorker, on_tick: Callable[[], None] | None) -> None:
    if on_tick is None:
        return
    try:
        on_tick()
    except Exception:
        # A failed still-running report must not abandon a running worker's supervision.
        log.exception("worker attempt=%s: the still-running report failed", running.attempt_id)


def release(running: RunningWorker) -> None:
    """Remove the attempt's session directory (its config and output)."""
    shutil.rmtree(running.session_dir, ignore_errors=True)


def sweep_sessions(private_dir: Path) -> list[str]:
    """Remove every session directory a previous connector left (their files can hold a token)."""
    if not private_dir.is_dir():
        return []
    removed: list[str] = []
    for entry in sorted(private_dir.iterdir()):
        if entry.is_dir() and not entry.is_symlink() and entry.name.startswith("att_"):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry.name)
    return removed


def never_started(failed: SpawnFailed) -> Supervision:
    """The supervision of a worker that never started: ``failed``, spawn-failed."""
    end = WorkerEnd(NeverStarted(failed.detail))
    return Supervision(stop_reason(end), end)


class HasLaunch(Protocol):
    """What the driver needs of a launch (``shell.ledger.tasks.Launch`` has it)."""

    @property
    def task_id(self) -> int: ...
    @property
    def attempt_id(self) -> str: ...
    @property
    def token(self) -> str: ...
    @property
    def event_ids(self) -> tuple[int, ...]: ...
    @property
    def trigger(self) -> str: ...
    @property
    def recording_url(self) -> str: ...


@dataclass
class CommandDriver:
    """The driver the dispatcher calls: ``spawn``, ``supervise``, ``release``, and recovery's
    ``end_recorded_group``."""

    command: WorkerCommand
    private_dir: Path
    ledger_path: Path
    clock: Clock = field(default_factory=SystemClock)
    grace_seconds: float = DEFAULT_GRACE_SECONDS
    still_running_every: float = DEFAULT_STILL_RUNNING_SECONDS
    repository: Path = REPOSITORY
    environ: Mapping[str, str] | None = None
    agent_id: int | None = None  # the agent's Person id: the MCP server strips its own mentions

    def spawn(self, launch: HasLaunch, work_dir: Path) -> RunningWorker | SpawnFailed:
        event_id = launch.event_ids[0]
        return spawn(
            self.command,
            attempt_id=launch.attempt_id,
            prompt=dispatch_prompt(launch.task_id, event_id, launch.trigger, launch.recording_url),
            work_dir=work_dir,
            private_dir=self.private_dir,
            ledger_path=self.ledger_path,
            token=launch.token,
            repository=self.repository,
            environ=self.environ,
            agent_id=self.agent_id,
        )

    def supervise(
        self, started: object, deadline_at: datetime, stop: StopSignal, on_tick: Callable[[], None]
    ) -> StopReason | None:
        """Why the worker ended; None when members of its group outlived SIGKILL (not settled)."""
        if not isinstance(started, RunningWorker):
            raise TypeError("this driver supervises only the workers it started")
        supervision = supervise(
            started,
            deadline_at=deadline_at,
            stop_event=stop,
            clock=self.clock,
            still_running_every=self.still_running_every,
            on_tick=on_tick,
            grace_seconds=self.grace_seconds,
        )
        return None if supervision.survivors else supervision.stop_reason

    def release(self, started: object) -> None:
        if isinstance(started, RunningWorker):
            release(started)

    def end_recorded_group(self, pid: int, pgid: int, process_started: str) -> bool:
        """Recovery: True when the recorded group is gone (ended now, or already)."""
        result = processes.terminate_group(pgid, pid, process_started, self.grace_seconds, self.clock)
        log.info("worker recovery pgid=%d outcome=%s: %s", pgid, result.outcome, result.reason)
        return result.outcome in (
            processes.Termination.gone,
            processes.Termination.terminated,
            processes.Termination.killed,
        )
