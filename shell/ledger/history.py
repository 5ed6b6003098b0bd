"""One event's history, read from a ledger opened read-only in one read transaction
(``core.presentation.event_history`` tells it): its record, each task row with the task's attempts,
every intent of the event or of an attempt of a task carrying it with no event of its own (a
completion or still-running notice), and each person's decision on it. Never a body, a token hash or
a feed position."""

from __future__ import annotations

import sqlite3

from core.presentation.event_history import (
    EventHistory,
    HistoryAttempt,
    HistoryDecision,
    HistoryIntent,
    HistoryRecord,
    HistoryTask,
)
from core.snapshots import WorkerResult
from shell.ledger.connection import Ledger

_RECORD = ("id, state, reason, event_type, bucket_id, recording_id, creator_id, trigger_name, lane, seen_at,"
           " updated_at, created_at, decided_at, blocked_at, next_retry_at, performed_by_id, recording_url, review")
_TASK = ("te.task_id, t.conversation_key, t.created_at, te.delivery, te.guard, te.outcome, t.ended_at,"
         " te.exposed_at, te.pulled_at, te.delivered_at, te.completed_at, te.withdrawn_at, te.ack_id, te.reply_id,"
         " te.adopted_reply_id")
_ATTEMPT = ("id, seq, state, stop_reason, launched_at, pid, session_id, running_at, ended_at, spawn_failed,"
            " not_started, left_at, settled_by, settled_as, worker_result, result_is_error, result_error,"
            " result_turns, result_cost_usd, result_duration_ms, denied_tools")
_INTENT = ("id, kind, state, message_kind, bucket_id, recording_id, created_at, not_before, task_id, attempt_id,"
           " retrying_since, sending_at, reconcile_at, reconcile_failures, finished_at, receipt_id, note, resolved_by")
_DECISION = ("d.id, d.action, d.decided_by, d.decided_at, d.from_state, d.from_reason, d.from_outcome, d.to_state,"
             " d.note, d.pending_task_id, r.revoked_at, COALESCE(r.note, '')")  # fmt: skip


def read_history(ledger: Ledger, event_id: int) -> EventHistory | None:
    """The event's history, or None when the ledger holds no record of it."""
    with ledger.read() as connection:
        found = connection.execute(f"SELECT {_RECORD} FROM events WHERE id = ?", (event_id,)).fetchone()
        if found is None:
            return None
        *head, review = tuple(found)
        tasks = _tasks(connection, event_id)
        return EventHistory(HistoryRecord(*head, review=bool(review)), tasks, _intents(connection, event_id, tasks),
                            _decisions(connection, event_id))  # fmt: skip


def _tasks(connection: sqlite3.Connection, event_id: int) -> tuple[HistoryTask, ...]:
    sql = f"SELECT {_TASK} FROM task_events te JOIN tasks t ON t.id = te.task_id WHERE te.event_id = ? ORDER BY te.task_id"
    return tuple(HistoryTask(*row, attempts=_attempts(connection, int(row[0])))
                 for row in connection.execute(sql, (event_id,)).fetchall())  # fmt: skip


def _attempts(connection: sqlite3.Connection, task_id: int) -> tuple[HistoryAttempt, ...]:
    sql = f"SELECT {_ATTEMPT} FROM attempts WHERE task_id = ? ORDER BY seq"
    told = []
    for row in connection.execute(sql, (task_id,)).fetchall():
        (*head, spawn_failed, not_started, left_at, settled_by, settled_as, said, is_error, error, turns, cost,
         duration, denied) = tuple(row)  # fmt: skip
        result = WorkerResult(bool(is_error), int(turns), float(cost), int(duration),
                              tuple(name for name in str(denied).split(",") if name), str(error)) if said else None
        told.append(HistoryAttempt(*head, spawn_failed=bool(spawn_failed), not_started=not_started, left_at=left_at,
                                   settled_by=settled_by, settled_as=settled_as, result=result))  # fmt: skip
    return tuple(told)


def _intents(connection: sqlite3.Connection, event_id: int, tasks: tuple[HistoryTask, ...]) -> tuple[HistoryIntent, ...]:
    attempt_ids = [attempt.attempt_id for task in tasks for attempt in task.attempts]
    sql = (f"SELECT {_INTENT} FROM outbox WHERE event_id = ? OR (event_id IS NULL AND attempt_id IN"
           f" ({', '.join('?' * len(attempt_ids))})) ORDER BY id")  # fmt: skip
    return tuple(HistoryIntent(*row) for row in connection.execute(sql, (event_id, *attempt_ids)).fetchall())


def _decisions(connection: sqlite3.Connection, event_id: int) -> tuple[HistoryDecision, ...]:
    sql = (f"SELECT {_DECISION} FROM decisions d LEFT JOIN revoked_redispatches r ON r.decision_id = d.id"
           " WHERE d.event_id = ? ORDER BY d.id")
    return tuple(HistoryDecision(*row) for row in connection.execute(sql, (event_id,)).fetchall())
