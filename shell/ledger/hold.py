"""The hold marker and its generations: set and released in one transaction each (spec 5.5).

Rules:
1. ``set_hold`` reads the marker and every open record, asks ``core.hold.hold`` and writes its
   plan inside one ``BEGIN IMMEDIATE`` transaction: a new generation, the marker (a standing
   hold keeps its first setter and time), the review tag on every open record, the waiting
   ones moved to held (a person's move, asked of ``core.edges``) and their pending guard
   notices canceled with the note ``held``. All commit together or not at all.
2. ``release`` deletes the marker and closes its generation in one transaction; held records
   stay held. With no hold standing it writes nothing.
3. ``shell.ledger.hold_marker.standing`` reads the marker in the caller's transaction: the
   dispatcher asks it before it launches (``core.hold.may_launch``); the triggers of migration
   0009 are the second wall.
4. This module writes ``hold_marker`` and ``generations`` only; a record's move is
   ``shell.ledger.records``' and a notice's cancellation ``shell.ledger.outbox``'s.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime

from core import hold as rules
from core.edges import RECORD_EDGES, Actor, IntentState, RecordState
from core.hold import HoldPlan, RecordAtHold, StandingHold
from core.notes import CANCELED_BY_HOLD
from core.timestamps import format_timestamp
from shell.ledger import outbox, records
from shell.ledger.connection import Ledger
from shell.ledger.hold_marker import standing
from shell.ledger.moves import asked


@dataclass(frozen=True, slots=True)
class HoldSet:
    """A hold the ledger committed: its generation, the plan, the notices it canceled."""

    generation: int
    plan: HoldPlan
    canceled_intents: tuple[int, ...]

    @property
    def summary(self) -> str:
        return self.plan.summary(self.generation)


@dataclass(frozen=True, slots=True)
class Released:
    """What a release found: the hold that stood (None: none did) and the records still held."""

    hold: StandingHold | None
    held_records: int

    @property
    def summary(self) -> str:
        return rules.release_summary(self.hold, self.held_records)


def set_hold(ledger: Ledger, by: str, cause: str, now: datetime) -> HoldSet:
    """``by`` sets the hold for ``cause`` (rule 1)."""
    stamp = format_timestamp(now)
    with ledger.write() as connection:
        before = standing(connection)
        open_records = [RecordAtHold(*row) for row in records.open_records(connection)]
        plan = rules.hold(before, open_records, by, cause, stamp)
        generation = connection.execute(
            "INSERT INTO generations (held_by, held_at, cause) VALUES (?, ?, ?)", (by, stamp, cause)
        ).lastrowid
        assert generation is not None
        connection.execute(
            "INSERT INTO hold_marker (id, held_by, held_at, cause, generation) VALUES (1, ?, ?, ?, ?)"
            " ON CONFLICT (id) DO UPDATE SET cause = excluded.cause, generation = excluded.generation",
            (plan.marker_by, plan.marker_at, plan.cause, generation),
        )
        records.tag_for_review(connection, plan.review, stamp)
        canceled: list[int] = []
        for record in plan.to_hold:
            held = asked(RECORD_EDGES, record.state, RecordState.held, Actor.operator)
            if records.hold(connection, record.event_id, record.revision, held, stamp) != 1:
                raise sqlite3.IntegrityError(f"event {record.event_id} moved during the hold's own transaction")
            guard = outbox.pending_guard(connection, record.event_id)
            if guard is not None:
                outbox.cancel(connection, guard, IntentState.pending, CANCELED_BY_HOLD, now)
                canceled.append(guard)
    return HoldSet(int(generation), plan, tuple(canceled))


def release(ledger: Ledger, by: str, now: datetime) -> Released:
    """``by`` releases the hold (rule 2)."""
    with ledger.write() as connection:
        before = standing(connection)
        if before is not None:
            connection.execute("DELETE FROM hold_marker WHERE id = 1")
            connection.execute(
                "UPDATE generations SET released_by = ?, released_at = ? WHERE released_at IS NULL",
                (by, format_timestamp(now)),
            )
        return Released(before, records.held_count(connection))
