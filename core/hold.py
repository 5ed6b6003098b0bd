"""The durable hold a person sets and releases, as pure functions.

``hold(standing, records, by, cause)`` answers what the setting transaction writes;
``release(standing, held)`` what ``release`` says. No clock, no ledger.

Rules:
1. A hold is a new generation, always, keeping who set it, when and why. A hold already standing
   keeps its first setter and time on the marker; only its generation and cause move on.
2. Every record not terminal is tagged for review; those waiting to run (admitted, queued) move
   to ``held`` and their guard's pending notice is canceled (``CANCELED_BY_HOLD``), for a person
   to redispatch or discard. Seen, blocked and dispatched records keep their state with the tag.
3. While the hold stands nothing launches (``may_launch``), no worker gets its first pull
   (``core.dispatch_tools``), the outbox sends nothing; intake, admission and reconciliation go
   on. Records admitted after the hold are not held: they run once it is released.
4. A release clears the marker and closes its generation; held records stay held. With no hold
   standing it changes nothing and says so.
5. A hold revokes every redispatch still waiting on a live task: its record is tagged for review
   (even one its worker completed) with a note to redispatch again after the release
   (``revocation_note``). A redispatch already applied is a record like any other."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.states import RecordState

_R = RecordState
TERMINAL = frozenset({_R.completed, _R.discarded})
WAITING = frozenset({_R.admitted, _R.queued})


@dataclass(frozen=True, slots=True)
class StandingHold:
    """The hold marker as the ledger holds it."""

    held_by: str
    held_at: str
    cause: str
    generation: int


@dataclass(frozen=True, slots=True)
class RecordAtHold:
    """One record as the hold's transaction reads it: id, state, revision."""

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
    """What the hold's one transaction writes (rules 1, 2)."""

    marker_by: str
    marker_at: str
    cause: str
    review: tuple[int, ...]  # every record tagged for review
    to_hold: tuple[RecordAtHold, ...]  # the waiting ones, moved to held
    already: bool  # a hold stood already
    revoke: tuple[WaitingRedispatch, ...] = ()  # redispatches waiting on a live task (rule 5)

    def summary(self, generation: int) -> str:
        moved = f"{len(self.to_hold)} waiting record{'' if len(self.to_hold) == 1 else 's'} held"
        tagged = f"{len(self.review)} tagged for review"
        verb = "Hold renewed" if self.already else "Held"
        revoked = (f", {len(self.revoke)} waiting redispatch{'' if len(self.revoke) == 1 else 'es'} revoked"
                   if self.revoke else "")  # fmt: skip
        return (f"{verb} (generation {generation}): nothing launches or posts until "
                f"`bin/connect release`; {moved}, {tagged}{revoked}")


def hold(  # noqa: PLR0917 -- the hold's facts, each its own value
    standing: StandingHold | None,
    records: Sequence[RecordAtHold],
    by: str,
    cause: str,
    stamp: str,
    waiting: Sequence[WaitingRedispatch] = (),
) -> HoldPlan:
    """The hold ``by`` sets at ``stamp`` for ``cause`` (rules 1, 2, 5); ``waiting``: the
    redispatches still waiting on a live task."""
    open_records = [record for record in records if record.state not in TERMINAL]
    tagged = [record.event_id for record in open_records]
    return HoldPlan(
        marker_by=by if standing is None else standing.held_by,
        marker_at=stamp if standing is None else standing.held_at,
        cause=cause,
        review=(*tagged, *sorted({one.event_id for one in waiting} - set(tagged))),
        to_hold=tuple(record for record in open_records if record.state in WAITING),
        already=standing is not None,
        revoke=tuple(waiting),
    )


def revocation_note(generation: int, revoked: WaitingRedispatch) -> str:
    """What a person reads on a redispatch the hold revoked (rule 5)."""
    return (f"revoked by the hold (generation {generation}) before task {revoked.task_id} ended; "
            f"redispatch event {revoked.event_id} again after `bin/connect release`")


def may_launch(standing: StandingHold | None) -> bool:
    """Rule 3: nothing launches while a hold stands."""
    return standing is None


def release_summary(standing: StandingHold | None, held_records: int) -> str:
    """What ``release`` says (rule 4)."""
    if standing is None:
        return "No hold stood"
    records = f"{held_records} held record{'' if held_records == 1 else 's'}"
    return f"Released; {records} {'stays' if held_records == 1 else 'stay'} held"
