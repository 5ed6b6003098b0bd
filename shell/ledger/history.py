"""One event's history, read from a ledger opened read-only in one read transaction
(``core.presentation.event_history`` tells it): its record, each task row with the task's attempts,
every intent of the event or of an attempt of a task carrying it (a completion or still-running
notice), and each person's decision on it. Never a body, a token hash or
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
from shell.ledger.connection import Ledger
from shell.ledger.status import worker_result

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
        (_, state, reason, event_type, bucket_id, recording_id, creator_id, trigger, lane, seen_at, updated_at,
         created_at, decided_at, blocked_at, next_retry_at, performed_by_id, recording_url, review) = found
        record = HistoryRecord(
            event_id, str(state), str(reason), str(event_type), int(bucket_id), int(recording_id), int(creator_id),
            str(trigger), str(lane), str(seen_at), str(updated_at), created_at, decided_at, blocked_at,
            next_retry_at, performed_by_id, str(recording_url), bool(review))  # fmt: skip
        tasks = _tasks(connection, event_id)
        return EventHistory(record, tasks, _intents(connection, event_id, tasks), _decisions(connection, event_id))


def _tasks(connection: sqlite3.Connection, event_id: int) -> tuple[HistoryTask, ...]:
    sql = f"SELECT {_TASK} FROM task_events te JOIN tasks t ON t.id = te.task_id WHERE te.event_id = ? ORDER BY te.task_id"
    return tuple(
        HistoryTask(int(task_id), str(conversation), str(created_at), str(delivery), str(guard), str(outcome),
                    ended_at, exposed_at, pulled_at, delivered_at, completed_at, withdrawn_at, ack_id, reply_id,
                    adopted_reply_id, _attempts(connection, int(task_id)))
        for (task_id, conversation, created_at, delivery, guard, outcome, ended_at, exposed_at, pulled_at,
             delivered_at, completed_at, withdrawn_at, ack_id, reply_id, adopted_reply_id)
        in connection.execute(sql, (event_id,)).fetchall()
    )  # fmt: skip


def _attempts(connection: sqlite3.Connection, task_id: int) -> tuple[HistoryAttempt, ...]:
    sql = f"SELECT {_ATTEMPT} FROM attempts WHERE task_id = ? ORDER BY seq"
    return tuple(
        HistoryAttempt(str(attempt_id), int(seq), str(state), str(stop_reason), str(launched_at), pid,
                       str(session_id), running_at, ended_at, bool(spawn_failed), str(not_started), left_at,
                       settled_by, str(settled_as), worker_result(said) if said[0] else None)
        for attempt_id, seq, state, stop_reason, launched_at, pid, session_id, running_at, ended_at, spawn_failed,
        not_started, left_at, settled_by, settled_as, *said in connection.execute(sql, (task_id,)).fetchall()
    )  # fmt: skip


def _intents(connection: sqlite3.Connection, event_id: int, tasks: tuple[HistoryTask, ...]) -> tuple[HistoryIntent, ...]:
    attempt_ids = [attempt.attempt_id for task in tasks for attempt in task.attempts]
    sql = f"SELECT {_INTENT} FROM outbox WHERE event_id = ? OR attempt_id IN ({', '.join('?' * len(attempt_ids))}) ORDER BY id"
    return tuple(HistoryIntent(*row) for row in connection.execute(sql, (event_id, *attempt_ids)).fetchall())


def _decisions(connection: sqlite3.Connection, event_id: int) -> tuple[HistoryDecision, ...]:
    sql = (f"SELECT {_DECISION} FROM decisions d LEFT JOIN revoked_redispatches r ON r.decision_id = d.id"
           " WHERE d.event_id = ? ORDER BY d.id")
    return tuple(HistoryDecision(*row) for row in connection.execute(sql, (event_id,)).fetchall())
