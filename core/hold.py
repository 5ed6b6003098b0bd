"""The durable hold a person sets and releases.

A hold is a new generation, always, keeping who set it, when and why; one already standing keeps
its first setter and time, and only its generation and cause move on. Every record not terminal
is tagged for review; those waiting to run (admitted, queued) move to ``held`` and their guard's
pending notice is canceled, for a person to redispatch or discard. A redispatch still waiting on
a live task is revoked: its record is tagged too (even one its worker completed). While the hold
stands nothing launches, no worker gets its first pull and the outbox sends nothing; intake,
admission and reconciliation go on, and records admitted meanwhile run once it is released. A
release clears the marker and closes its generation; held records stay held.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.states import RecordState

_R = RecordState
TERMINAL = frozenset({_R.completed, _R.discarded})
WAITING = frozenset({_R.admitted, _R.queued})


@dataclass(frozen=True, slots=True)
class StandingHold:
    held_by: str
    held_at: str
    cause: str
    generation: int


@dataclass(frozen=True, slots=True)
class RecordAtHold:
    event_id: int
    state: RecordState
    revision: int


@dataclass(frozen=True, slots=True)
class WaitingRedispatch:
    """A person's redispatch authorized while a live task carried the record: not applied yet."""
    decision_id: int
    event_id: int
    task_id: int


@dataclass(frozen=True, slots=True)
class HoldPlan:
    marker_by: str
    marker_at: str
    cause: str
    review: tuple[int, ...]  # every record tagged for review
    to_hold: tuple[RecordAtHold, ...]  # the waiting ones, moved to held
    already: bool  # a hold stood already
    revoke: tuple[WaitingRedispatch, ...] = ()  # redispatches waiting on a live task

    def summary(self, generation: int) -> str:
        moved = f"{len(self.to_hold)} waiting record{'' if len(self.to_hold) == 1 else 's'} held"
        tagged = f"{len(self.review)} tagged for review"
        verb = "Hold renewed" if self.already else "Held"
        revoked = (f", {len(self.revoke)} waiting redispatch{'' if len(self.revoke) == 1 else 'es'} revoked"
                   if self.revoke else "")  # fmt: skip
        return (f"{verb} (generation {generation}): nothing launches or posts until "
                f"`bin/connect release`; {moved}, {tagged}{revoked}")


def hold(  # noqa: PLR0917 -- the hold's facts, each its own value
    standing: StandingHold | None, records: Sequence[RecordAtHold], by: str, cause: str, stamp: str,
    waiting: Sequence[WaitingRedispatch] = (),
) -> HoldPlan:
    open_records = [record for record in records if record.state not in TERMINAL]
    tagged = [record.event_id for record in open_records]
    return HoldPlan(
        marker_by=by if standing is None else standing.held_by,
        marker_at=stamp if standing is None else standing.held_at, cause=cause,
        review=(*tagged, *sorted({one.event_id for one in waiting} - set(tagged))),
        to_hold=tuple(record for record in open_records if record.state in WAITING),
        already=standing is not None, revoke=tuple(waiting),
    )


def revocation_note(generation: int, revoked: WaitingRedispatch) -> str:
    return (f"revoked by the hold (generation {generation}) before task {revoked.task_id} ended; "
            f"redispatch event {revoked.event_id} again after `bin/connect release`")


def may_launch(standing: StandingHold | None) -> bool:
    return standing is None


def release_summary(standing: StandingHold | None, held_records: int) -> str:
    if standing is None:
        return "No hold stood"
    records = f"{held_records} held record{'' if held_records == 1 else 's'}"
    return f"Released; {records} {'stays' if held_records == 1 else 'stay'} held"
