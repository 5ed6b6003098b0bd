"""The worker driver: start the worker program for an attempt, and supervise it to its end.

The dispatcher calls ``CommandDriver``; its parts are ``shell.worker.command``, ``sessions``,
``spawn`` and ``supervision``, one concern each. Signals go through ``shell.processes`` alone.

Rules:
1. ``spawn`` builds the prompt from the ``Launch`` and starts the worker (resuming the
   conversation's session when ``Launch.resume_session`` names one); a fault of the private
   directory raises ``SessionSetupError``, a program that cannot start is ``SpawnFailed``.
2. ``supervise`` answers why the worker ended, or ``None`` when its group outlived SIGKILL (the
   attempt is not settled). A stream-json worker is read as it runs
   (``shell.worker.claude_stream``) into a ``core.worker_stream.WorkerAccount``.
3. ``release`` removes the session directory; ``end_recorded_group`` is recovery's SIGTERM,
   grace, SIGKILL of a group a previous connector recorded.
4. ``follow_up`` gives a running stream-json worker one more turn for each event that joined its
   task (``core.dispatch_prompt.follow_up_prompt``); an event whose turn could not be given is
   left unpulled, to wait for a task of its own."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Protocol

from core.dispatch_prompt import dispatch_prompt, follow_up_prompt
from core.worker_stream import StopRequest, WorkerAccount, account
from shell import processes
from shell.clock import Clock, SystemClock
from shell.worker.claude_stream import StreamWatch
from shell.worker.command import WorkerCommand
from shell.worker.sessions import SessionSetupError, remove_session, sweep_sessions
from shell.worker.spawn import REPOSITORY, RunningWorker, SpawnFailed, spawn
from shell.worker.supervision import (
    AFTER_RESULT_SECONDS,
    DEFAULT_GRACE_SECONDS,
    DEFAULT_STILL_RUNNING_SECONDS,
    StopSignal,
    supervise,
)

__all__ = [  # the names the shell imports from here
    "CommandDriver",
    "SessionSetupError",
    "SpawnFailed",
    "WorkerCommand",
    "release",
    "sweep_sessions",
]

log = logging.getLogger("connector.worker")


def release(running: RunningWorker) -> None:
    """Remove the attempt's session directory (its config and output)."""
    remove_session(running.session_dir)


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
    @property
    def resume_session(self) -> str: ...


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
    after_result_seconds: float = AFTER_RESULT_SECONDS
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
            resume_session=launch.resume_session,
        )

    def follow_up(self, started: object, event_ids: tuple[int, ...]) -> tuple[int, ...]:
        """Rule 4: the events whose turn was given to the running worker."""
        if not isinstance(started, RunningWorker) or started.turns is None:
            return ()
        return tuple(event_id for event_id in event_ids if started.turns.give(follow_up_prompt(event_id)))

    def supervise(
        self, started: object, deadline_at: datetime, stop: StopSignal, on_tick: Callable[[], None]
    ) -> WorkerAccount | None:
        """How the worker ended; None when members of its group outlived SIGKILL (not settled)."""
        if not isinstance(started, RunningWorker):
            raise TypeError("this driver supervises only the workers it started")
        stream = self.command.speaks_stream_json
        supervision = supervise(
            started,
            deadline_at=deadline_at,
            stop_event=stop,
            clock=self.clock,
            still_running_every=self.still_running_every,
            on_tick=on_tick,
            grace_seconds=self.grace_seconds,
            watch=StreamWatch(started.stdout) if stream else None,
            permission_mode=self.command.permission_mode,
            after_result_seconds=self.after_result_seconds,
        )
        if supervision.survivors:
            return None
        cut_short = supervision.end.stop_requested in (StopRequest.deadline, StopRequest.shutdown)
        told = account(
            supervision.stop_reason,
            supervision.facts,
            permission_mode=self.command.permission_mode,
            cut_short=cut_short,
        )
        if told.not_started:
            log.warning("worker attempt=%s never began its work: %s", started.attempt_id, told.not_started)
        return told

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
