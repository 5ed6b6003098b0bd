"""The worker driver the dispatcher calls: start the worker for an attempt, supervise it to its
end and name the stop, give it follow-up turns, release its session.

Supervision never reaps the worker before its group is done: an unreaped leader's number, and
its group's, cannot be reused, so every signal reaches only the worker's own processes. At the
deadline or shutdown the group gets SIGTERM, the grace, then SIGKILL, and only a group the
worker leads; members left by a worker that exited are ended the same way before the attempt
ends; signals go through ``shell.processes`` alone. A still-running report that fails is logged
and never abandons supervision; a slow one skips ticks, never bunches them.

Claude Code's stream is read as it runs: an init not as asked ends the group at once
(``not_started``); once a result answers every message given, stdin is closed, and a worker still
running ``after_result_seconds`` later is ended (``after_result``); its last output is read once
more after it ended. A group that outlived SIGKILL leaves the attempt unsettled. Each event that
joins a running task is one more turn; an event whose turn could not be given waits for a task
of its own."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from core.dispatch_prompt import dispatch_prompt, follow_up_prompt
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
from core.worker_stream import StreamFacts, WorkerAccount, account, init_problem
from shell import processes
from shell.clock import Clock, SystemClock
from shell.worker.command import StreamWatch, WorkerCommand, close_input
from shell.worker.spawn import (
    REPOSITORY,
    RunningWorker,
    SessionSetupError,
    SpawnFailed,
    remove_session,
    spawn,
    sweep_sessions,
)

if TYPE_CHECKING:
    from shell.ledger.tasks import Launch

__all__ = [  # the names the shell imports from here
    "CommandDriver",
    "SessionSetupError",
    "SpawnFailed",
    "WorkerCommand",
    "release",
    "sweep_sessions",
]

log = logging.getLogger("connector.worker")

DEFAULT_GRACE_SECONDS = 30.0
AFTER_RESULT_SECONDS = 10.0
DEFAULT_STILL_RUNNING_SECONDS = 600.0
POLL_SECONDS = 0.05


@dataclass(frozen=True, slots=True)
class Supervision:
    """How a supervised worker ended: the stop reason, and the facts it was named from."""

    stop_reason: StopReason
    end: WorkerEnd
    signals: tuple[str, ...] = ()  # what the driver sent the group, in order
    still_running: int = 0  # still-running ticks reported
    survivors: bool = False  # members of the group outlived SIGKILL
    facts: StreamFacts | None = None  # what a stream-json worker said


class StopSignal(Protocol):
    def is_set(self) -> bool: ...


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
    watch: StreamWatch | None = None,
    permission_mode: str = "",
    after_result_seconds: float = AFTER_RESULT_SECONDS,
) -> Supervision:
    """Wait for the worker to end; tick while it runs; stop it at the deadline or at shutdown."""
    if still_running_every <= 0:
        raise ValueError("the still-running interval is positive")
    signals: tuple[str, ...] = ()
    survivors = False
    try:
        requested, ticks = _wait(
            running, watch, stop_event, deadline_at, clock, on_tick=on_tick, every=still_running_every,
            poll=poll_seconds, mode=permission_mode, after_result=after_result_seconds,
        )  # fmt: skip
        if requested is not None:
            log.info("worker attempt=%s stop=%s pid=%d", running.attempt_id, requested, running.pid)
        # Whether it was asked to stop or exited and left members behind, the group ends now,
        # while the unreaped leader still holds its number.
        if running.leads_its_group:
            signals, survivors = processes.end_child_group(
                running.pid, running.process_started, grace_seconds, clock, poll_seconds
            )
        ending = _reap(running, poll_seconds, clock)
    finally:
        running.mcp_config.unlink(missing_ok=True)
        if running.turns is not None:
            running.turns.close()
    end = WorkerEnd(ending if ending is not None else Vanished(), requested)
    reason = stop_reason(end)
    log.info("worker attempt=%s ended stop_reason=%s ending=%s signals=%s",
             running.attempt_id, reason, end.ending, ",".join(signals) or "-")  # fmt: skip
    facts = watch.poll() if watch is not None else None
    return Supervision(reason, end, signals, ticks, survivors or ending is None, facts)


def _wait(
    running: RunningWorker,
    watch: StreamWatch | None,
    stop_event: StopSignal,
    deadline_at: datetime | None,
    clock: Clock,
    *,
    on_tick: Callable[[], None] | None,
    every: float,
    poll: float,
    mode: str,
    after_result: float,
) -> tuple[StopRequest | None, int]:
    """Poll until the leader ends (None) or a stop is due (which); and the ticks reported."""
    next_tick = clock.monotonic() + every
    ticks = 0
    hang_after: float | None = None
    while _observe(running) is None:
        if watch is not None:
            said = watch.poll()
            if said.init is not None and init_problem(said.init, permission_mode=mode):
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
            _tick(running, on_tick)
            next_tick += every
            if next_tick <= clock.monotonic():  # a slow report skips ticks; it never bunches them
                next_tick = clock.monotonic() + every
        clock.sleep(poll)
    return None, ticks


def _ending_from_status(returncode: int | None) -> Ending | None:
    if returncode is None:
        return None
    if returncode < 0:
        return Signaled(-returncode)
    return Exited(returncode)


def _observe(running: RunningWorker) -> Ending | None:
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
    if result.si_code == os.CLD_EXITED:
        return Exited(result.si_status)
    return Signaled(result.si_status)


def _reap(running: RunningWorker, poll: float, clock: Clock) -> Ending | None:
    """Reap the leader once it has exited; how it ended, or ``None`` if it would not exit."""
    until = clock.monotonic() + processes.KILL_WAIT_SECONDS
    while (ending := _observe(running)) is None:
        if clock.monotonic() >= until:
            return None
        clock.sleep(poll)
    if running.pid > 1 and not isinstance(ending, Vanished):
        running.process.wait()
    return ending


def _answered(running: RunningWorker, said: StreamFacts) -> bool:
    """Every turn given has its result, and the input is closed; True once it is. A worker that
    replays no message (no ``--replay-user-messages``) is answered by any result."""
    if running.turns is None:
        close_input(running.process.stdin)
        return True
    return running.turns.close_if_answered(said.answered if said.replays else running.turns.given)


def _tick(running: RunningWorker, on_tick: Callable[[], None] | None) -> None:
    if on_tick is None:
        return
    try:
        on_tick()
    except Exception:
        log.exception("worker attempt=%s: the still-running report failed", running.attempt_id)


def never_started(failed: SpawnFailed) -> Supervision:
    end = WorkerEnd(NeverStarted(failed.detail))
    return Supervision(stop_reason(end), end)


def release(running: RunningWorker) -> None:
    remove_session(running.session_dir)


@dataclass
class CommandDriver:
    command: WorkerCommand
    private_dir: Path
    ledger_path: Path
    clock: Clock = field(default_factory=SystemClock)
    grace_seconds: float = DEFAULT_GRACE_SECONDS
    still_running_every: float = DEFAULT_STILL_RUNNING_SECONDS
    after_result_seconds: float = AFTER_RESULT_SECONDS
    repository: Path = REPOSITORY
    environ: Mapping[str, str] | None = None
    agent_id: int | None = None  # the agent's Person id: the MCP server strips its own mentions

    def spawn(self, launch: Launch, work_dir: Path) -> RunningWorker | SpawnFailed:
        """Start the worker, resuming the conversation's session when the launch names one."""
        return spawn(
            self.command,
            attempt_id=launch.attempt_id,
            prompt=dispatch_prompt(launch.task_id, launch.event_ids[0], launch.trigger, launch.recording_url),
            work_dir=work_dir,
            private_dir=self.private_dir,
            ledger_path=self.ledger_path,
            token=launch.token,
            repository=self.repository,
            environ=self.environ,
            agent_id=self.agent_id,
            resume_session=launch.resume_session,
        )

    def follow_up(self, started: object, event_ids: tuple[int, ...]) -> tuple[int, ...]:
        """The events whose turn was given to the running worker."""
        if not isinstance(started, RunningWorker) or started.turns is None:
            return ()
        return tuple(event_id for event_id in event_ids if started.turns.give(follow_up_prompt(event_id)))

    def supervise(
        self, started: object, deadline_at: datetime, stop: StopSignal, on_tick: Callable[[], None]
    ) -> WorkerAccount | None:
        """How the worker ended; None when members of its group outlived SIGKILL (not settled)."""
        if not isinstance(started, RunningWorker):
            raise TypeError("this driver supervises only the workers it started")
        mode = self.command.permission_mode
        supervision = supervise(
            started,
            deadline_at=deadline_at,
            stop_event=stop,
            clock=self.clock,
            still_running_every=self.still_running_every,
            on_tick=on_tick,
            grace_seconds=self.grace_seconds,
            watch=StreamWatch(started.stdout) if self.command.speaks_stream_json else None,
            permission_mode=mode,
            after_result_seconds=self.after_result_seconds,
        )
        if supervision.survivors:
            return None
        cut_short = supervision.end.stop_requested in (StopRequest.deadline, StopRequest.shutdown)
        told = account(supervision.stop_reason, supervision.facts, permission_mode=mode, cut_short=cut_short)
        if told.not_started:
            log.warning("worker attempt=%s never began its work: %s", started.attempt_id, told.not_started)
        return told

    def release(self, started: object) -> None:
        if isinstance(started, RunningWorker):
            release(started)

    def end_recorded_group(self, pid: int, pgid: int, process_started: str) -> bool:
        """Recovery: True when the group a previous connector recorded is gone (ended now, or already)."""
        result = processes.terminate_group(pgid, pid, process_started, self.grace_seconds, self.clock)
        log.info("worker recovery pgid=%d outcome=%s: %s", pgid, result.outcome, result.reason)
        return result.outcome in (
            processes.Termination.gone,
            processes.Termination.terminated,
            processes.Termination.killed,
        )
