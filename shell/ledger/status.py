"""What ``bin/connect status`` and the demo read from a ledger opened read-only: status's snapshot in
one read transaction, so the numbers agree beside a connector committing, and the demo's looks at an
event for its narration, in the caller's. Nothing secret leaves the ledger: a position is read only as
whether one is kept, a token hash or a message body never for status. Each record is stepped over
once: blocked ones counted by reason (their own index), the count by state takes blocked's from that
sum. A lapsed token is read from the intents pending with ``notes.TOKEN_REFUSED``, as doctor does."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from core import notes
from core.posting import TokenOutage
from core.presentation.status_values import (
    LAST_DISPATCHES,
    LAST_WAITING_RECORDS,
    Dispatch,
    DispatchedEvent,
    FeedCheckpoint,
    HeldRecord,
    Hold,
    LedgerSnapshot,
    LiveAttempt,
    LiveTask,
    WaitingIntent,
    WaitingRecord,
)
from core.snapshots import WorkerResult
from core.states import AttemptState, IntentState, RecordState
from shell.ledger import hold
from shell.ledger.connection import Ledger


def read_snapshot(ledger: Ledger) -> LedgerSnapshot:
    with ledger.read() as connection:
        blocked = _blocked(connection)
        return LedgerSnapshot(
            hold=_hold(connection), feed=_feed(connection), state_counts=_state_counts(connection, blocked),
            blocked=blocked, live_tasks=_live_tasks(connection), waiting=_waiting(connection),
            dispatches=_dispatches(connection), held=_held(connection),
            not_running=_not_running(connection), outbox=_outbox(connection),
            token_outage=token_outage(connection),
        )  # fmt: skip


def queue_counts(connection: sqlite3.Connection) -> tuple[tuple[tuple[str, str, int], ...],
                                                            tuple[tuple[str, int], ...], tuple[tuple[str, int], ...]]:
    """What status and the metrics both count: intents by state and kind, records by state, blocked by reason."""
    blocked = _blocked(connection)
    return _outbox(connection), _state_counts(connection, blocked), blocked


def _outbox(connection: sqlite3.Connection) -> tuple[tuple[str, str, int], ...]:
    """Every intent, counted by state and kind (the ``outbox_due_by_kind`` index covers it)."""
    sql = "SELECT state, kind, COUNT(*) FROM outbox GROUP BY state, kind ORDER BY state, kind"
    return tuple((str(state), str(kind), int(count)) for state, kind, count in connection.execute(sql))


def token_outage(connection: sqlite3.Connection) -> TokenOutage | None:
    """When sending began waiting on a token Basecamp refused, and how many messages pend; None: none waits."""
    sql = "SELECT MIN(not_before) FROM outbox WHERE state = 'pending' AND note = ?"
    (since,) = connection.execute(sql, (notes.TOKEN_REFUSED,)).fetchone()
    if since is None:
        return None
    (count,) = connection.execute("SELECT COUNT(*) FROM outbox WHERE state = 'pending'").fetchone()
    return TokenOutage(int(count), str(since))


def _hold(connection: sqlite3.Connection) -> Hold | None:
    found = hold.standing(connection)
    return None if found is None else Hold(found.held_by, found.held_at, found.cause, found.generation)


def _feed(connection: sqlite3.Connection) -> tuple[FeedCheckpoint, ...]:
    sql = "SELECT position <> '', last_served_id, updated_at FROM checkpoints ORDER BY filter_digest"
    return tuple(
        FeedCheckpoint(bool(has_position), int(last_served_id), str(updated_at))
        for has_position, last_served_id, updated_at in connection.execute(sql)
    )


def _state_counts(connection: sqlite3.Connection,
                  blocked: tuple[tuple[str, int], ...]) -> tuple[tuple[str, int], ...]:
    sql = (
        "SELECT state, COUNT(*) FROM events WHERE state < 'blocked' GROUP BY state UNION ALL"
        " SELECT state, COUNT(*) FROM events WHERE state > 'blocked' GROUP BY state"
    )
    counts = [(str(state), int(count)) for state, count in connection.execute(sql)]
    if blocked:
        counts.append((str(RecordState.blocked), sum(count for _, count in blocked)))
    return tuple(sorted(counts))


def _blocked(connection: sqlite3.Connection) -> tuple[tuple[str, int], ...]:
    sql = "SELECT reason, COUNT(*) FROM events WHERE state = 'blocked' GROUP BY reason ORDER BY reason"
    return tuple((str(reason), int(count)) for reason, count in connection.execute(sql))


def _event_ids(connection: sqlite3.Connection, task_id: int) -> tuple[int, ...]:
    sql = "SELECT event_id FROM task_events WHERE task_id = ? ORDER BY event_id"
    return tuple(int(event_id) for (event_id,) in connection.execute(sql, (task_id,)))


def _live_tasks(connection: sqlite3.Connection) -> tuple[LiveTask, ...]:
    rows = connection.execute(
        "SELECT t.id, t.superseded_at IS NOT NULL, t.conversation_key, t.created_at, t.deadline_at,"
        " a.id, a.state, a.pid, a.launched_at, a.left_at"
        " FROM tasks t LEFT JOIN attempts a ON a.task_id = t.id"
        "  AND a.seq = (SELECT MAX(seq) FROM attempts WHERE task_id = t.id)"
        " WHERE t.ended_at IS NULL ORDER BY t.id"
    ).fetchall()
    return tuple(
        LiveTask(
            int(task_id), bool(superseded), str(key), str(created), None if deadline is None else str(deadline),
            None if attempt_id is None else LiveAttempt(str(attempt_id), AttemptState(state), pid, launched, left),
            _event_ids(connection, int(task_id)),
        )
        for task_id, superseded, key, created, deadline, attempt_id, state, pid, launched, left in rows
    )


def _waiting(connection: sqlite3.Connection) -> tuple[WaitingIntent, ...]:
    rows = connection.execute(
        "SELECT id, kind, state, note, event_id, attempt_id, message_kind, bucket_id, recording_id"
        " FROM outbox WHERE state = 'indeterminate' OR (state = 'canceled' AND note IN"
        f" ({', '.join('?' * len(notes.RESENDABLE_NOTES))})) ORDER BY id",
        sorted(notes.RESENDABLE_NOTES),
    )
    return tuple(
        WaitingIntent(
            intent_id=int(intent_id), kind=str(kind), state=IntentState(state),
            refused=state == IntentState.canceled, event_id=event_id, attempt_id=attempt_id,
            message_kind=str(message_kind), bucket_id=int(bucket_id), recording_id=int(recording_id), note=str(note),
        )
        for intent_id, kind, state, note, event_id, attempt_id, message_kind, bucket_id, recording_id in rows
    )


def _dispatched_events(connection: sqlite3.Connection, task_id: int) -> tuple[DispatchedEvent, ...]:
    return tuple(
        DispatchedEvent(int(event_id), str(delivery), str(outcome), bool(withdrawn), str(record_state), str(guard),
                        ack_id, reply_id)
        for event_id, delivery, outcome, withdrawn, record_state, guard, ack_id, reply_id in connection.execute(
            "SELECT te.event_id, te.delivery, te.outcome, te.withdrawn_at IS NOT NULL, e.state, te.guard,"
            " te.ack_id, te.reply_id"
            " FROM task_events te JOIN events e ON e.id = te.event_id"
            " WHERE te.task_id = ? ORDER BY te.event_id",
            (task_id,),
        )
    )


def _dispatches(connection: sqlite3.Connection) -> tuple[Dispatch, ...]:
    rows = connection.execute(
        "SELECT id, task_id, seq, state, stop_reason, spawn_failed, launched_at, ended_at, not_started,"
        " words_refused, ended_because, worker_result, result_is_error, result_error, result_turns, result_cost_usd,"
        " result_duration_ms, denied_tools"
        " FROM attempts ORDER BY launched_at DESC, rowid DESC LIMIT ?",
        (LAST_DISPATCHES,),
    ).fetchall()
    return tuple(
        Dispatch(
            attempt_id=str(attempt_id), task_id=int(task_id), seq=int(seq), state=AttemptState(state),
            stop_reason=str(stop_reason), spawn_failed=bool(spawn_failed), launched_at=str(launched_at),
            ended_at=None if ended_at is None else str(ended_at), events=_dispatched_events(connection, int(task_id)),
            not_started=str(not_started), words_refused=str(refused), ended_because=str(because),
            result=worker_result(said) if said[0] else None,
        )
        for attempt_id, task_id, seq, state, stop_reason, spawn_failed, launched_at, ended_at, not_started, refused,
        because, *said in rows
    )


def worker_result(said: list[object]) -> WorkerResult:
    """Migration 18's columns of an attempt, from ``worker_result`` on, as the result they record."""
    _, is_error, error, turns, cost, duration, denied = said
    return WorkerResult(
        is_error=bool(is_error), turns=int(str(turns)), cost_usd=float(str(cost)), duration_ms=int(str(duration)),
        denials=tuple(name for name in str(denied).split(",") if name), error=str(error),
    )  # fmt: skip


def _held(connection: sqlite3.Connection) -> tuple[HeldRecord, ...]:
    sql = "SELECT id, event_type, trigger_name, recording_url FROM events WHERE state = 'held' ORDER BY id"
    return tuple(
        HeldRecord(int(event_id), str(event_type), str(trigger), str(url))
        for event_id, event_type, trigger, url in connection.execute(sql)
    )


def _not_running(connection: sqlite3.Connection) -> tuple[WaitingRecord, ...]:
    return tuple(
        WaitingRecord(int(event_id), str(state), str(reason), str(event_type), next_retry_at)
        for event_id, state, reason, event_type, next_retry_at in connection.execute(
            "SELECT id, state, reason, event_type, next_retry_at FROM events"
            " WHERE state IN ('blocked', 'admitted', 'queued') ORDER BY id LIMIT ?",
            (LAST_WAITING_RECORDS,),
        )
    )


@dataclass(frozen=True, slots=True)
class EventRows:
    """One event's rows as the demo narrates them: its record, its latest task row, that task's
    latest attempt, and every notice of the event or of that task's attempts (None: absent)."""

    record: tuple[Any, ...]
    joined: tuple[Any, ...] | None
    attempt: tuple[Any, ...] | None
    intents: list[tuple[Any, ...]]


def event_of_recording(connection: sqlite3.Connection, recording_id: int) -> int | None:
    sql = "SELECT id FROM events WHERE recording_id = ? ORDER BY id LIMIT 1"
    found = connection.execute(sql, (recording_id,)).fetchone()
    return None if found is None else int(found[0])


def live_processes(connection: sqlite3.Connection) -> list[tuple[str, int, int, str]]:
    rows = connection.execute(
        "SELECT id, pid, pgid, process_started FROM attempts"
        " WHERE state <> 'ended' AND pid IS NOT NULL AND pgid IS NOT NULL"
    ).fetchall()
    return [(str(row[0]), int(row[1]), int(row[2]), str(row[3])) for row in rows]


def event_rows(connection: sqlite3.Connection, event_id: int) -> EventRows | None:
    record = connection.execute("SELECT state, reason, trigger_name FROM events WHERE id = ?", (event_id,)).fetchone()
    if record is None:
        return None
    joined = connection.execute(
        "SELECT task_id, pulled_at IS NOT NULL, ack_id, outcome, reply_id FROM task_events"
        " WHERE event_id = ? ORDER BY task_id DESC LIMIT 1",
        (event_id,),
    ).fetchone()
    task_id = None if joined is None else joined[0]
    sql = "SELECT state, stop_reason FROM attempts WHERE task_id = ? ORDER BY seq DESC LIMIT 1"
    attempt = connection.execute(sql, (task_id,)).fetchone()  # None where no task carries it
    intents = connection.execute(
        "SELECT id, kind, state, receipt_id, note, body FROM outbox WHERE event_id = ?"
        " OR attempt_id IN (SELECT id FROM attempts WHERE task_id = ?) ORDER BY id",
        (event_id, task_id if task_id is not None else -1),
    ).fetchall()
    return EventRows(tuple(record), None if joined is None else tuple(joined), attempt, intents)
