"""The lifecycle snapshots core decides on, read from their tables: a record, its task rows, an
attempt, the redispatches pending on a task.

Reads only, inside a transaction the caller opened, so a decision is made from one consistent
snapshot and applied in the same transaction. A task's rows are the instructions its live attempt
answers for: a retired row, or one whose record a person discarded, is none. Lists of ids are
asked in chunks, under SQLite's bound on a statement's parameters.
"""

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
    found = connection.execute(f"SELECT {_RECORD} FROM events e WHERE e.id = ?", (event_id,)).fetchone()
    return None if found is None else _record(event_id, found)


_RECORD = (
    "e.state, e.reason, e.bucket_id, e.recording_id, e.acknowledge, e.reply_kind, e.reply_bucket_id,"
    " e.reply_recording_id"
)


def _record(event_id: int, found: Sequence[Any]) -> RecordSnapshot:
    state, reason, bucket, recording, acknowledge, reply_kind, reply_bucket, reply_recording = found
    return RecordSnapshot(
        event_id=event_id,
        state=RecordState(state),
        reason=reason,
        bucket_id=bucket,
        recording_id=recording,
        acknowledge=bool(acknowledge),
        reply_kind=MessageKind(reply_kind) if reply_kind else None,
        reply_bucket_id=reply_bucket,
        reply_recording_id=reply_recording,
    )


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


def _task_event(found: Sequence[object]) -> TaskEventSnapshot:
    event_id, delivery, guard, ack_id, reply_id, adopted = found
    return TaskEventSnapshot(
        event_id=int(str(event_id)),
        delivery=DeliveryState(str(delivery)),
        guard=GuardState(str(guard)),
        ack_id=None if ack_id is None else int(str(ack_id)),
        reply_id=None if reply_id is None else int(str(reply_id)),
        adopted_reply_id=None if adopted is None else int(str(adopted)),
    )


def still_running_in_flight(connection: sqlite3.Connection, attempt_id: str) -> bool:
    """Whether a still-running notice of the attempt is ``sending``: claimed, its one request
    perhaps not yet made (the attempt's completion notice then says how it ended)."""
    found = connection.execute(
        "SELECT 1 FROM outbox WHERE attempt_id = ? AND kind = 'still_running' AND state = 'sending' LIMIT 1",
        (attempt_id,),
    ).fetchone()
    return found is not None


def attempt(connection: sqlite3.Connection, attempt_id: str) -> AttemptSnapshot | None:
    found = connection.execute(
        "SELECT id, task_id, state, launched_at, progress_at, stop_reason FROM attempts WHERE id = ?",
        (attempt_id,),
    ).fetchone()
    if found is None:
        return None
    identifier, task_id, state, launched_at, progress_at, stop_reason = found
    return AttemptSnapshot(
        attempt_id=identifier,
        task_id=task_id,
        state=AttemptState(state),
        started_at=parse_timestamp(launched_at),
        progress_at=stored_time(progress_at),
        stop_reason=stop_reason,
    )


def worker_task_events(connection: sqlite3.Connection, candidates: Iterable[int]) -> list[TaskEventSnapshot]:
    """Task rows whose worker reported (or had adopted) one of ``candidates`` as its message."""
    wanted = sorted(set(candidates))
    found: list[TaskEventSnapshot] = []
    for start in range(0, len(wanted), 300):
        chunk = wanted[start : start + 300]
        marks = ", ".join("?" for _ in chunk)
        found.extend(
            _task_event(row)
            for row in connection.execute(
                "SELECT event_id, delivery, guard, ack_id, reply_id, adopted_reply_id FROM task_events"
                f" WHERE ack_id IN ({marks}) OR reply_id IN ({marks}) OR adopted_reply_id IN ({marks})",
                [*chunk, *chunk, *chunk],
            )
        )
    return found


def redispatches_pending_on(connection: sqlite3.Connection, task_id: int) -> list[int]:
    """The records a person's redispatch pending on task ``task_id`` admits as the task's rows
    retire (migration 0009's trigger, whose condition this is): completed unknown or failed, with
    a redispatch on this task their latest decision."""
    return [
        int(event_id)
        for (event_id,) in connection.execute(
            "SELECT te.event_id FROM task_events te JOIN events e ON e.id = te.event_id"
            " WHERE te.task_id = ? AND te.retired_at IS NULL AND te.outcome IN ('unknown', 'failed')"
            " AND e.state = 'completed' AND EXISTS (SELECT 1 FROM decisions d"
            " WHERE d.id = (SELECT MAX(id) FROM decisions WHERE event_id = te.event_id)"
            " AND d.action = 'redispatch' AND d.pending_task_id = te.task_id)",
            (task_id,),
        )
    ]
