"""``shadow promote``'s next step, decided from what is on disk.

Promote turns the shadow run's ledger into the connector's under the hold, in steps a crash may
interrupt anywhere: write the durable marker; set the hold and tag every open shadow record for
review in one transaction; set the old ledger aside; move the shadow ledger into its place; remove
the marker. The shell observes, asks ``next_step``, takes that step, observes again. A step is
known done by its own mark (the marker, its cause on a ledger's hold, the set-aside file, the
shadow ledger gone), so a rerun after a crash finishes it and never sets a second hold. Anything
unforeseen is ``Stuck``, in one line: promote never guesses. A ledger with something in flight is
never set aside, before or after promote begins (``bin/outbox-resolve`` takes no lock and may make
an intent pending meanwhile): nothing would settle it there.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

CAUSE_PREFIX = "shadow promote"  # every promote's hold cause: Finished(already=True) knows one by it


class Step(StrEnum):
    begin = "begin"
    hold = "hold"
    set_aside = "set_aside"
    move = "move"
    finish = "finish"


@dataclass(frozen=True, slots=True)
class Marker:
    """The durable marker ``begin`` writes: the hold's cause, and the old ledger's new name."""
    cause: str
    aside: str | None


@dataclass(frozen=True, slots=True)
class OnDisk:
    """What the state directory holds. ``*_hold``: the cause of the hold standing in that ledger."""
    marker: Marker | None
    shadow_ledger: bool
    shadow_hold: str | None
    ledger: bool
    ledger_hold: str | None
    aside: bool = False
    ledger_unsettled: str | None = None  # what the connector's ledger has in flight, in words


@dataclass(frozen=True, slots=True)
class Finished:
    already: bool  # nothing was left to do: an earlier promote finished


@dataclass(frozen=True, slots=True)
class Stuck:
    why: str


Next = Step | Finished | Stuck


def marker_for(ledger_exists: bool, stamp: str) -> Marker:
    """``begin``'s marker: the old ledger, if any, is set aside under a name that says when."""
    safe = stamp.replace(":", "").replace(".", "-")
    aside = f"ledger.before-promote-{safe}.sqlite3" if ledger_exists else None
    return Marker(f"{CAUSE_PREFIX} {stamp}", aside)


def next_step(disk: OnDisk) -> Next:
    marker = disk.marker
    if marker is None:
        if disk.shadow_ledger and disk.ledger and disk.ledger_unsettled:
            return Stuck(_in_flight(disk.ledger_unsettled))
        if disk.shadow_ledger:
            return Step.begin
        if disk.ledger and (disk.ledger_hold or "").startswith(CAUSE_PREFIX):
            return Finished(already=True)
        return Stuck("there is no shadow ledger to promote: run `bin/connect run --shadow` first")
    if disk.shadow_ledger:
        if disk.shadow_hold != marker.cause:
            return Step.hold
        if marker.aside is not None and disk.ledger and not disk.aside:
            if disk.ledger_unsettled:  # again: something may have changed it since begin
                return Stuck(_in_flight(disk.ledger_unsettled))
            return Step.set_aside
        if disk.ledger:
            return Stuck("a ledger appeared in the connector's state directory after promote began; "
                         "move it away, then run promote again")
        return Step.move
    if disk.ledger and disk.ledger_hold == marker.cause:
        return Step.finish
    return Stuck("promote began, but neither the shadow ledger nor a ledger held by it is there; "
                 "restore the shadow ledger from a copy")


def _in_flight(what: str) -> str:
    return (f"the connector's ledger still holds {what}: set aside, nothing would settle them; run "
            "the connector until they settle (or settle them with bin/outbox-resolve and bin/connect "
            "status's advice), then promote")
