"""Why an attempt ended, from what the worker driver saw.

The driver reports facts: how the worker's process ended, and whether the dispatcher asked it
to stop. This module alone turns them into the attempt's stop reason.

Rules:
1. A worker that could not be started at all ended ``failed`` (and its attempt is marked
   spawn-failed: no process existed, so it cannot have acted).
2. A stop the dispatcher asked for is named for its cause, whatever the worker's exit looked
   like: ``deadline`` when the task's deadline passed, ``shutdown`` when the connector shut
   down. "An exit the dispatcher caused is not a failure."
3. Otherwise, exit status 0 is ``finished``: the worker ended its turn and exited cleanly.
4. Otherwise, a non-zero exit status, or death by a signal the dispatcher did not send, is
   ``failed``.
5. A worker that went away without an exit status the driver could read (it was not the
   driver's child, or its status was taken by someone else) is ``lost``: it may have acted.
6. A worker the driver ended because its own account proved it never began its work
   (``not_started``: Claude Code's init was not what was asked) ended ``failed``; one the driver
   ended because it outlived its own ``result`` (``after_result``) ended ``finished``: its turn
   was over, and only its exit was waited for in vain.
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
