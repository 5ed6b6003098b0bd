"""The hold marker and its generations: set and released in one transaction each, and read.

Setting the hold writes ``core.hold.hold``'s plan in one ``BEGIN IMMEDIATE``: a new generation, the
marker, the review tags, the waiting records moved to held (their pending guards canceled, but one
whose claim told a task row it fired: that one is held to it) and every
redispatch waiting on a live task revoked. A release deletes the marker and closes its generation;
held records stay held. The writing side's modules are imported by the two functions that write: a
reader of the marker (``status``) imports none of them."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime

from core import hold as rules
from core.hold import HoldPlan, RecordAtHold, StandingHold, WaitingRedispatch
from core.notes import CANCELED_BY_HOLD
from core.states import IntentState, RecordState
from core.timestamps import format_timestamp
from shell.ledger.connection import Ledger


@dataclass(frozen=True, slots=True)
class HoldSet:
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


def standing(connection: sqlite3.Connection) -> StandingHold | None:
    found = connection.execute("SELECT held_by, held_at, cause, generation FROM hold_marker WHERE id = 1").fetchone()
    return None if found is None else StandingHold(str(found[0]), str(found[1]), str(found[2]), int(found[3]))


def set_hold(ledger: Ledger, by: str, cause: str, now: datetime) -> HoldSet:
    from core.edges import RECORD_EDGES, Actor  # noqa: PLC0415 -- the writing side's
    from shell.ledger import outbox, records  # noqa: PLC0415 -- the writing side's
    from shell.ledger.rules import asked  # noqa: PLC0415 -- the writing side's

    stamp = format_timestamp(now)
    with ledger.write() as connection:
        before = standing(connection)
        open_records = [RecordAtHold(*row) for row in records.open_records(connection)]
        plan = rules.hold(before, open_records, by, cause, stamp, waiting_redispatches(connection))
        sql = "INSERT INTO generations (held_by, held_at, cause) VALUES (?, ?, ?)"
        generation = connection.execute(sql, (by, stamp, cause)).lastrowid
        assert generation is not None
        connection.execute(
            "INSERT INTO hold_marker (id, held_by, held_at, cause, generation) VALUES (1, ?, ?, ?, ?)"
            " ON CONFLICT (id) DO UPDATE SET cause = excluded.cause, generation = excluded.generation",
            (plan.marker_by, plan.marker_at, plan.cause, generation),
        )
        records.tag_for_review(connection, plan.review, stamp)
        for waiting in plan.revoke:
            connection.execute(
                "INSERT INTO revoked_redispatches (decision_id, generation, revoked_at, note) VALUES (?, ?, ?, ?)",
                (waiting.decision_id, generation, stamp, rules.revocation_note(int(generation), waiting)),
            )
        canceled: list[int] = []
        for record in plan.to_hold:
            held = asked(RECORD_EDGES, record.state, RecordState.held, Actor.operator)
            if records.hold(connection, record.event_id, record.revision, held, stamp) != 1:
                raise sqlite3.IntegrityError(f"event {record.event_id} moved during the hold's own transaction")
            guard = outbox.unclaimed_guard(connection, record.event_id)
            if guard is not None:
                outbox.cancel(connection, guard, IntentState.pending, CANCELED_BY_HOLD, now)
                canceled.append(guard)
    return HoldSet(int(generation), plan, tuple(canceled))


def waiting_redispatches(connection: sqlite3.Connection) -> list[WaitingRedispatch]:
    """Each record's newest decision, when a redispatch not revoked pending on a task still carrying it."""
    return [
        WaitingRedispatch(int(decision_id), int(event_id), int(task_id))
        for decision_id, event_id, task_id in connection.execute(
            "SELECT d.id, d.event_id, d.pending_task_id FROM decisions d"
            " WHERE d.action = 'redispatch' AND d.pending_task_id IS NOT NULL"
            "   AND d.id = (SELECT MAX(id) FROM decisions WHERE event_id = d.event_id)"
            "   AND EXISTS (SELECT 1 FROM task_events te WHERE te.event_id = d.event_id"
            "               AND te.task_id = d.pending_task_id AND te.retired_at IS NULL)"
            "   AND NOT EXISTS (SELECT 1 FROM revoked_redispatches r WHERE r.decision_id = d.id)"
            " ORDER BY d.id"
        )
    ]


def release(ledger: Ledger, by: str, now: datetime) -> Released:
    """``by`` releases the hold; with none standing it writes nothing."""
    from shell.ledger import records  # noqa: PLC0415 -- the writing side's

    with ledger.write() as connection:
        before = standing(connection)
        if before is not None:
            connection.execute("DELETE FROM hold_marker WHERE id = 1")
            sql = "UPDATE generations SET released_by = ?, released_at = ? WHERE released_at IS NULL"
            connection.execute(sql, (by, format_timestamp(now)))
        return Released(before, records.held_count(connection))
