"""The lifecycle snapshots core decides on: a record, its task rows, an attempt, the redispatches pending.

Reads only, inside a transaction the caller opened, so a decision is made from one consistent
snapshot and applied in the same transaction. A task's rows are the instructions its live attempt
answers for: a retired row, or one whose record a person discarded, is none. Lists of ids are
asked in chunks, under SQLite's bound on a statement's parameters."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from core.destinations import MessageKind
from core.edges import AttemptState, DeliveryState, GuardState, RecordState
from core.snapshots import AttemptSnapshot, RecordSnapshot, TaskEventSnapshot
from core.timestamps import parse_timestamp
from shell.ledger.connection import stored_time


def record(connection: sqlite3.Connection, event_id: int) -> RecordSnapshot | None:
    found = connection.execute(
        "SELECT state, reason, bucket_id, recording_id, acknowledge, reply_kind, reply_bucket_id, reply_recording_id"
        " FROM events WHERE id = ?",
        (event_id,),
    ).fetchone()
    if found is None:
        return None
    state, reason, bucket, recording, acknowledge, reply_kind, reply_bucket, reply_recording = found
    return RecordSnapshot(event_id, RecordState(state), reason, bucket, recording, bool(acknowledge),
                          MessageKind(reply_kind) if reply_kind else None, reply_bucket, reply_recording)


_TASK_EVENT = "te.event_id, te.delivery, te.guard, te.ack_id, te.reply_id, te.adopted_reply_id"


def task_events_of_event(connection: sqlite3.Connection, event_id: int) -> list[TaskEventSnapshot]:
    """Every task row of the event, live or retired: what a guard's claim reads."""
    rows = connection.execute(f"SELECT {_TASK_EVENT} FROM task_events te WHERE te.event_id = ?", (event_id,))
    return [_task_event(found) for found in rows]


def task_events_of_task(connection: sqlite3.Connection, task_id: int) -> list[TaskEventSnapshot]:
    """The task's rows not yet retired: the instructions its live attempt answers for. A row
    whose record a person discarded is no instruction any more (it is never handed out)."""
    rows = connection.execute(
        f"SELECT {_TASK_EVENT} FROM task_events te JOIN events e ON e.id = te.event_id"
        " WHERE te.task_id = ? AND te.retired_at IS NULL AND e.state <> 'discarded'",
        (task_id,),
    ).fetchall()
    return [_task_event(found) for found in rows]


def _task_event(found: Sequence[Any]) -> TaskEventSnapshot:
    event_id, delivery, guard, *ids = found  # every table is STRICT: an id read is an int or NULL
    return TaskEventSnapshot(event_id, DeliveryState(delivery), GuardState(guard), *ids)


def still_running_in_flight(connection: sqlite3.Connection, attempt_id: str) -> bool:
    """Whether a still-running notice of the attempt is ``sending``: claimed, its one request
    perhaps not yet made (the attempt's completion notice then says how it ended)."""
    sql = "SELECT 1 FROM outbox WHERE attempt_id = ? AND kind = 'still_running' AND state = 'sending' LIMIT 1"
    return connection.execute(sql, (attempt_id,)).fetchone() is not None


def attempt(connection: sqlite3.Connection, attempt_id: str) -> AttemptSnapshot | None:
    sql = "SELECT id, task_id, state, launched_at, progress_at, stop_reason FROM attempts WHERE id = ?"
    found = connection.execute(sql, (attempt_id,)).fetchone()
    if found is None:
        return None
    identifier, task_id, state, launched_at, progress_at, stop_reason = found
    return AttemptSnapshot(identifier, task_id, AttemptState(state), parse_timestamp(launched_at),
                           stored_time(progress_at), stop_reason)


def worker_task_events(connection: sqlite3.Connection, candidates: Iterable[int]) -> list[TaskEventSnapshot]:
    """Task rows whose worker reported (or had adopted) one of ``candidates`` as its message."""
    wanted = sorted(set(candidates))
    found: list[TaskEventSnapshot] = []
    for start in range(0, len(wanted), 300):
        chunk = wanted[start : start + 300]
        marks = ", ".join("?" for _ in chunk)
        rows = connection.execute(
            "SELECT event_id, delivery, guard, ack_id, reply_id, adopted_reply_id FROM task_events"
            f" WHERE ack_id IN ({marks}) OR reply_id IN ({marks}) OR adopted_reply_id IN ({marks})",
            [*chunk, *chunk, *chunk],
        )
        found.extend(map(_task_event, rows))
    return found


def redispatches_pending_on(connection: sqlite3.Connection, task_id: int) -> list[int]:
    """The records a person's redispatch pending on task ``task_id`` admits as the task's rows
    retire (migration 0009's trigger, whose condition this is): completed unknown or failed, with
    a redispatch on this task their latest decision."""
    rows = connection.execute(
        "SELECT te.event_id FROM task_events te JOIN events e ON e.id = te.event_id"
        " WHERE te.task_id = ? AND te.retired_at IS NULL AND te.outcome IN ('unknown', 'failed')"
        " AND e.state = 'completed' AND EXISTS (SELECT 1 FROM decisions d"
        " WHERE d.id = (SELECT MAX(id) FROM decisions WHERE event_id = te.event_id)"
        " AND d.action = 'redispatch' AND d.pending_task_id = te.task_id)",
        (task_id,),
    )
    return [event_id for (event_id,) in rows]
