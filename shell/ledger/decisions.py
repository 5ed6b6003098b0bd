"""A person's decisions on records -- a redispatch or a discard, an import's entries, the settlement
of an attempt left mid-launch -- each read, asked of core and written in one ``BEGIN IMMEDIATE``, so
each is safe while the connector runs; none posts or reads Basecamp.

A decision writes its row (who, when, the record as it was) and the record's move, a compare-and-set
on its revision (migration 0006's triggers let a completed or dispatched record move only under a
decision at that revision). A discard cancels the record's pending notices, and those of a task
whose every record is now discarded; one already sending cannot be called back: it is reported. A
redispatch of a record a live task carries is pending on that task, whose token it retires; the
record moves when the task ends (migration 0009's trigger) and the worker is returned for the caller
to stop. An import's entry decided done is a discard; an import that cannot be applied writes nothing."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from returns.result import Result, Success

from core import decisions, import_file, settlement
from core.admission import DiscardReason
from core.decisions import Action, DecisionRefused, Plan, RecordFacts
from core.edges import IntentState, RecordState
from core.import_file import Entry, ImportPlan, RecordNow, Unappliable
from core.notes import DISCARDED_BY_PERSON
from core.settlement import LaunchFinding, LaunchSettlement
from core.timestamps import format_timestamp
from shell.ledger import hold, outbox, records, tasks
from shell.ledger.connection import Ledger, stored_time
from shell.ledger.tasks import RecordedWorker


@dataclass(frozen=True, slots=True)
class Decided:
    decision_id: int
    plan: Plan
    decided_by: str
    canceled_intents: tuple[int, ...]
    sending_intents: tuple[int, ...]  # being sent already: they cannot be called back
    worker: RecordedWorker | None = None  # a live task's worker, for the caller to stop
    held: bool = False  # the hold stood when it was decided: nothing launches until release


@dataclass(frozen=True, slots=True)
class Imported:
    plan: ImportPlan
    canceled_intents: tuple[int, ...]


class UnknownEvent(Exception):
    """The ledger holds no record with this event id."""


def decide(ledger: Ledger, event_id: int, action: Action, by: str, now: datetime, *,
           served: frozenset[int]) -> Result[Decided, DecisionRefused]:
    """``by``'s ``action`` on record ``event_id`` (``served``: the projects routed), or ``UnknownEvent``."""
    with ledger.write() as connection:
        facts = read_facts(connection, event_id, served)
        if facts is None:
            raise UnknownEvent(event_id)
        planned = decisions.redispatch(facts, now) if action is Action.redispatch else decisions.discard(facts)
        held = hold.standing(connection) is not None
        return planned.map(lambda plan: replace(_apply(connection, plan, by, now), held=held))


def read_facts(connection: sqlite3.Connection, event_id: int, served: frozenset[int]) -> RecordFacts | None:
    found = connection.execute(
        "SELECT state, reason, revision, retry_at, bucket_id,"
        " COALESCE((SELECT outcome FROM task_events WHERE event_id = e.id ORDER BY task_id DESC LIMIT 1), ''),"
        " EXISTS (SELECT 1 FROM task_events WHERE event_id = e.id AND retired_at IS NULL),"
        " NOT EXISTS (SELECT 1 FROM task_events WHERE event_id = e.id"
        "             AND (delivery <> 'admitted' OR pulled_at IS NOT NULL)),"
        " COALESCE((SELECT action FROM decisions WHERE event_id = e.id ORDER BY id DESC LIMIT 1), ''),"
        " (SELECT task_id FROM task_events WHERE event_id = e.id AND retired_at IS NULL),"
        " (SELECT pending_task_id FROM decisions d WHERE event_id = e.id AND action = 'redispatch'"
        "  AND id = (SELECT MAX(id) FROM decisions WHERE event_id = e.id)"
        "  AND NOT EXISTS (SELECT 1 FROM revoked_redispatches r WHERE r.decision_id = d.id))"
        " FROM events e WHERE id = ?",
        (event_id,),
    ).fetchone()
    if found is None:
        return None
    state, reason, revision, retry_at, bucket_id, outcome, carried, unhanded, last_action, live_task, pending_on = found
    return RecordFacts(
        event_id=event_id, state=RecordState(state), reason=str(reason), revision=int(revision),
        outcome=str(outcome), carried=bool(carried), discarded_by_person=last_action == Action.discard,
        retry_at=stored_time(retry_at), unhanded=bool(carried) and bool(unhanded),
        served=bucket_id in served, live_task=live_task, pending_on=pending_on,
    )


def _apply(connection: sqlite3.Connection, plan: Plan, by: str, now: datetime) -> Decided:
    stamp = format_timestamp(now)
    facts = plan.facts
    pending = plan.stop_task is not None
    decision_id = connection.execute(
        "INSERT INTO decisions (action, event_id, decided_by, decided_at, from_state, from_reason,"
        " from_outcome, from_revision, to_state, pending_task_id, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (str(plan.action), facts.event_id, by, stamp, str(facts.state), facts.reason, facts.outcome,
         facts.revision, str(RecordState.admitted) if pending else str(plan.to_state), plan.stop_task,
         f"pending: admitted when task {plan.stop_task} ends" if pending else ""),
    ).lastrowid
    assert decision_id is not None
    if plan.stop_task is not None:  # nothing moves now; the task's end applies it
        worker = tasks.retire_token(connection, plan.stop_task, now)
        return Decided(int(decision_id), plan, by, (), (), worker)
    moved = records.decide(connection, facts.event_id, facts.revision, state=plan.to_state,
                           reason=plan.to_reason, offer_at=plan.offer_at, stamp=stamp)
    if moved != 1:  # pragma: no cover -- the facts were read in this same transaction
        raise sqlite3.IntegrityError(f"event {facts.event_id} moved during its own decision")
    canceled, sending = _cancel_pending(connection, facts.event_id, now) if plan.cancel_pending else ((), ())
    return Decided(int(decision_id), plan, by, canceled, sending)


def _cancel_pending(connection: sqlite3.Connection, event_id: int, now: datetime) -> tuple[tuple[int, ...], tuple[int, ...]]:
    ours = (
        "(event_id = ? OR task_id IN (SELECT te.task_id FROM task_events te WHERE te.event_id = ?"
        "  AND NOT EXISTS (SELECT 1 FROM task_events other JOIN events e ON e.id = other.event_id"
        "                  WHERE other.task_id = te.task_id AND e.state <> 'discarded')))"
    )
    sql = f"SELECT id FROM outbox WHERE state = 'pending' AND {ours} ORDER BY id"
    pending = [row[0] for row in connection.execute(sql, (event_id, event_id))]
    for intent_id in pending:
        outbox.cancel(connection, intent_id, IntentState.pending, DISCARDED_BY_PERSON, now)
    sql = f"SELECT id FROM outbox WHERE state = 'sending' AND {ours} ORDER BY id"
    sending = tuple(row[0] for row in connection.execute(sql, (event_id, event_id)))
    return tuple(pending), sending


def apply_import(ledger: Ledger, entries: Sequence[Entry], by: str, now: datetime,
                 source: str) -> Result[Imported, Unappliable]:
    """Apply ``entries`` from the file ``source``: the discards, the tombstones of events never
    seen and the review tags (``core.import_file.plan``), or nothing."""
    with ledger.write() as connection:
        recorded = records.recorded_among(connection, [entry.event_id for entry in entries])
        known = {event_id: found for event_id in recorded if (found := _record_now(connection, event_id))}
        open_ids = [event_id for event_id, _, _ in records.open_records(connection)]

        def apply(plan: ImportPlan) -> Imported:
            note = f"imported from {source}: decided done"
            canceled: list[int] = []
            for record in plan.discard:
                canceled += _discard_imported(connection, record, by, now, note)
            records.tombstone(connection, plan.tombstones, format_timestamp(now))
            records.tag_for_review(connection, plan.review, format_timestamp(now))
            return Imported(plan, tuple(canceled))

        return import_file.plan(entries, known, open_ids).map(apply)


def _record_now(connection: sqlite3.Connection, event_id: int) -> RecordNow | None:
    facts = read_facts(connection, event_id, frozenset())
    if facts is None:
        return None
    return RecordNow(event_id, facts.state, facts.reason, facts.outcome, facts.revision, facts.carried)


def _discard_imported(connection: sqlite3.Connection, record: RecordNow, by: str, now: datetime,
                      note: str) -> tuple[int, ...]:
    stamp = format_timestamp(now)
    connection.execute(
        "INSERT INTO decisions (action, event_id, decided_by, decided_at, from_state, from_reason,"
        " from_outcome, from_revision, to_state, note) VALUES ('discard', ?, ?, ?, ?, ?, ?, ?, 'discarded', ?)",
        (record.event_id, by, stamp, str(record.state), record.reason, record.outcome, record.revision, note),
    )
    moved = records.decide(connection, record.event_id, record.revision, state=RecordState.discarded,
                           reason=DiscardReason.imported_done, offer_at=None, stamp=stamp)  # fmt: skip
    if moved != 1:  # pragma: no cover -- the record was read in this same transaction
        raise sqlite3.IntegrityError(f"event {record.event_id} moved during its own import")
    return _cancel_pending(connection, record.event_id, now)[0]


def settle_launch(ledger: Ledger, event_id: int, claim: LaunchFinding, by: str, now: datetime) -> Result[LaunchSettlement, str]:
    """``by`` settles the attempt left mid-launch for ``event_id``'s task as ``claim``: its attempt
    belongs to a process that is gone, and the dispatcher starts what it frees."""
    with ledger.write() as connection:
        planned = settlement.settle_launch(tasks.left_launch(connection, event_id), event_id, claim)
        if isinstance(planned, Success):
            tasks.settle_left_launch(connection, planned.unwrap(), by, now)
    return planned
