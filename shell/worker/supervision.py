"""Supervise a running worker to its end, and name the stop.

Rules:
1. ``supervise`` never reaps the worker before its group is done: an unreaped leader's number,
   and its group's, cannot be reused, so every signal reaches only the worker's own processes.
   Members left by a worker that exited are stopped the same way before the attempt ends.
2. At the deadline or shutdown the group gets SIGTERM, the grace, then SIGKILL
   (``shell.processes.end_child_group``); only a group the worker leads. ``core.worker_stream``
   names the stop.
3. A still-running tick that fails is logged and never abandons supervision; a slow tick skips
   ticks, never bunches them.
4. Claude Code's stream (a ``watch``) is read as it runs: an init not as asked
   (``core.worker_stream.init_problem``) ends the group at once (``not_started``); once a
   ``result`` answers every message given (``core.worker_stream`` rule 3) stdin is closed, and a
   worker still running ``after_result_seconds`` later is ended (``after_result``). Its last
   output is read once more after it ended."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from core.snapshots import StopReason
from core.worker_stream import (
    Ending,
    Exited,
    NeverStarted,
    Signaled,
    StopRequest,
    StreamFacts,
    Vanished,
    WorkerEnd,
    init_problem,
    stop_reason,
)
from shell import processes
from shell.clock import Clock
from shell.worker.claude_stream import StreamWatch, close_input
from shell.worker.spawn import RunningWorker, SpawnFailed

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
    facts: StreamFacts | None = None  # what a stream-json worker said (rule 4)


class StopSignal(Protocol):
    def is_set(self) -> bool: ...


def _ending_from_status(returncode: int | None) -> Ending | None:
    if returncode is None:
        return None
    if returncode < 0:
        return Signaled(-returncode)
    return Exited(returncode)


def _observe(running: RunningWorker) -> Ending | None:
    """How the leader ended, without reaping it; ``None`` while it runs (rule 1)."""
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
    next_tick = clock.monotonic() + still_running_every
    ticks = 0
    requested: StopRequest | None = None
    signals: tuple[str, ...] = ()
    survivors = False
    hang_after: float | None = None
    try:
        while (ending := _observe(running)) is None:
            if watch is not None:
                said = watch.poll()
                if said.init is not None and init_problem(said.init, permission_mode=permission_mode):
                    requested = StopRequest.not_started
                    break
                if said.results and hang_after is None and _answered(running, said):
                    hang_after = clock.monotonic() + after_result_seconds
                if hang_after is not None and clock.monotonic() >= hang_after:
                    requested = StopRequest.after_result
                    break
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
    log.info(
        "worker attempt=%s ended stop_reason=%s ending=%s signals=%s",
        running.attempt_id,
        reason,
        end.ending,
        ",".join(signals) or "-",
    )
    facts = watch.poll() if watch is not None else None
    return Supervision(reason, end, signals, ticks, survivors or ending is None, facts)


def _answered(running: RunningWorker, said: StreamFacts) -> bool:
    """Every turn given has its result (rule 4): the input is closed (``Turns``); True once it is.
    A worker that replays no message (no ``--replay-user-messages``) is answered by any result."""
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
        # A failed still-running report must not abandon a running worker's supervision.
        log.exception("worker attempt=%s: the still-running report failed", running.attempt_id)


def never_started(failed: SpawnFailed) -> Supervision:
    """The supervision of a worker that never started: ``failed``, spawn-failed."""
    end = WorkerEnd(NeverStarted(failed.detail))
    return Supervision(stop_reason(end), end)
