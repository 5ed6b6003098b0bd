"""Why an attempt ended, from what the worker driver saw.

The driver reports facts (how the process ended, whether the dispatcher asked it to stop); this
module alone turns them into the attempt's stop reason.

Rules:
1. A worker that could not be started ended ``failed``, its attempt spawn-failed: no process
   existed, so it cannot have acted.
2. A stop the dispatcher asked for is named for its cause whatever the exit: ``deadline`` or
   ``shutdown``. An exit the dispatcher caused is not a failure.
3. Otherwise, exit status 0 is ``finished``.
4. Otherwise, a non-zero exit, or death by a signal the dispatcher did not send, is ``failed``.
5. A worker gone without an exit status the driver could read (not its child, or reaped by
   another) is ``lost``: it may have acted.
6. A worker the driver ended because its account proved it never began (``not_started``) ended
   ``failed``; one ended for outliving its own ``result`` (``after_result``) ended ``finished``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from core.snapshots import StopReason


class StopRequest(StrEnum):
    """A stop the dispatcher asked for: the signals it sent were its own."""

    deadline = "deadline"
    shutdown = "shutdown"
    not_started = "not_started"  # its init proved it never began its work (rule 6)
    after_result = "after_result"  # it outlived its own result (rule 6)


@dataclass(frozen=True, slots=True)
class Exited:
    """The worker exited with this status."""

    status: int


@dataclass(frozen=True, slots=True)
class Signaled:
    """The worker was ended by this signal."""

    signal: int


@dataclass(frozen=True, slots=True)
class NeverStarted:
    """The worker program could not be started: no process ever ran it."""

    reason: str


@dataclass(frozen=True, slots=True)
class Vanished:
    """The worker is gone and the driver could read no exit status for it."""


Ending = Exited | Signaled | NeverStarted | Vanished


@dataclass(frozen=True, slots=True)
class WorkerEnd:
    """What the driver saw: how the worker ended, and the stop the dispatcher asked for, if any."""

    ending: Ending
    stop_requested: StopRequest | None = None


def stop_reason(end: WorkerEnd) -> StopReason:
    """The attempt's stop reason for ``end`` (rules 1-6)."""
    match end:
        case WorkerEnd(ending=NeverStarted()):
            return StopReason.failed
        case WorkerEnd(stop_requested=StopRequest.deadline):
            return StopReason.deadline
        case WorkerEnd(stop_requested=StopRequest.shutdown):
            return StopReason.shutdown
        case WorkerEnd(stop_requested=StopRequest.not_started):
            return StopReason.failed
        case WorkerEnd(stop_requested=StopRequest.after_result):
            return StopReason.finished
        case WorkerEnd(ending=Exited(status=0)):
            return StopReason.finished
        case WorkerEnd(ending=Exited() | Signaled()):
            return StopReason.failed
        case _:
            return StopReason.lost


def spawn_failed(end: WorkerEnd) -> bool:
    """True when no worker process ever existed for the attempt (rule 1)."""
    return isinstance(end.ending, NeverStarted)
