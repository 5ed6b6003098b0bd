"""A person settles an attempt left mid-launch, as a pure function.

A connector killed between committing a launch and recording its worker's process leaves an
attempt ``launching`` with no pid. Recovery cannot tell whether a worker ran, so it keeps the
task live and marks the attempt ``left``; ``settle(facts, claim)`` turns what a person found into
the attempt's end.

Rules:
1. Only an attempt marked ``left``, still launching, is settled here (its launcher is gone:
   recovery runs under the next one's instance lock); anything else is refused.
2. ``did_not_run``: as a proven spawn failure, the attempt ends ``failed`` with ``spawn_failed``,
   its exposure withdrawn and the record waiting to run again (or blocked ``spawn_failed`` once
   withdrawn before). Refused when a worker pulled an instruction of the task: one did run.
3. ``ran``: a worker may have acted: the attempt ends ``lost``, each exposed row ``unknown``, as
   recovery settles a worker it ended.
4. Either way the task is superseded in the same transaction, and the project's later records
   move again."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from returns.result import Failure, Result, Success

from core.snapshots import StopReason


class LaunchFinding(StrEnum):
    """What the person found."""

    ran = "ran"
    did_not_run = "did_not_run"


@dataclass(frozen=True, slots=True)
class LeftLaunch:
    """The live attempt of the task carrying the event, as the settlement's transaction reads it."""

    event_id: int
    task_id: int
    attempt_id: str
    launching: bool
    left: bool  # a start's recovery marked it left mid-launch
    pulled: bool  # a row of its task was pulled by a worker


@dataclass(frozen=True, slots=True)
class Settle:
    """How the attempt ends."""

    facts: LeftLaunch
    claim: LaunchFinding
    stop_reason: StopReason
    spawn_failed: bool
    summary: str


def settle(facts: LeftLaunch | None, event_id: int, claim: LaunchFinding) -> Result[Settle, str]:
    """The end of the attempt left mid-launch for ``event_id``'s task (rules 1-3), or why not."""
    if facts is None:
        return Failure(f"Event {event_id} is on no live task: there is no launch to settle")
    task, attempt = facts.task_id, facts.attempt_id
    if not (facts.launching and facts.left):
        return Failure(
            f"Event {event_id}'s task {task} has no attempt left mid-launch ({attempt} is not one a"
            " start's recovery found launching with no recorded process); nothing to settle"
        )
    if claim is LaunchFinding.did_not_run:
        if facts.pulled:
            return Failure(
                f"Event {event_id}'s task {task}: the ledger shows a worker pulled its instruction, so a"
                " worker did run; settle it with --ran"
            )
        summary = (f"Attempt {attempt} settled as never run: task {task} ended, its records wait to "
                   "run again, and the project moves on")
        return Success(Settle(facts, claim, StopReason.failed, True, summary))
    summary = (f"Attempt {attempt} settled as run: task {task} ended, its records' outcome is unknown "
               f"(redispatch or discard each), and the project moves on")
    return Success(Settle(facts, claim, StopReason.lost, False, summary))
