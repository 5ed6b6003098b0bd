"""A worker's moves: the statements ``shell.ledger.worker_calls`` writes, and nothing else.

These are the only writes a worker's call makes, each its own statement and a compare-and-set
returning its row count for the caller to check (``record_progress``'s is a stamp); the other
statements of these tables are their owners' (``tests/ledger/test_table_writers.py`` holds this
module to exactly these). It imports nothing of the dispatcher's, admission's or the outbox's: the
MCP server runs these statements and no others, and a worker waits on the server's start. Nothing
here decides or commits: ``core.dispatch_tools`` decided the move, the caller holds the write."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta

from core.timestamps import format_timestamp
from core.worker_words import WorkerMessage


def expose(connection: sqlite3.Connection, now: str, task_id: int, event_id: int) -> int:
    return connection.execute(
        "UPDATE task_events SET delivery = 'exposed', exposed_at = ?"
        " WHERE task_id = ? AND event_id = ? AND retired_at IS NULL AND delivery = 'admitted'",
        (now, task_id, event_id),
    ).rowcount


def pull(connection: sqlite3.Connection, now: str, task_id: int, event_id: int) -> int:
    return connection.execute(
        "UPDATE task_events SET pulled_at = ?"
        " WHERE task_id = ? AND event_id = ? AND retired_at IS NULL AND pulled_at IS NULL"
        " AND delivery = 'exposed'",
        (now, task_id, event_id),
    ).rowcount


def cancel_guard(connection: sqlite3.Connection, task_id: int, event_id: int) -> int:
    """get_dispatch cancels an armed guard: the worker answers for the acknowledgement now."""
    return connection.execute(
        "UPDATE task_events SET guard = 'canceled'"
        " WHERE task_id = ? AND event_id = ? AND retired_at IS NULL AND guard = 'armed'",
        (task_id, event_id),
    ).rowcount


def acknowledge(connection: sqlite3.Connection, now: str, ack_id: int | None, task_id: int, event_id: int) -> int:
    return connection.execute(  # ack_id is NULL until now: NULL again when the worker gave none
        "UPDATE task_events SET delivery = 'delivered', delivered_at = ?, ack_id = ?"
        " WHERE task_id = ? AND event_id = ? AND retired_at IS NULL AND pulled_at IS NOT NULL"
        " AND delivery = 'exposed' AND ack_id IS NULL",
        (now, ack_id, task_id, event_id),
    ).rowcount


def complete(connection: sqlite3.Connection, task_id: int, event_id: int, *, now: str, outcome: str,
             links: str, reply_id: int | None) -> int:
    columns = (
        "delivery = 'completed', delivered_at = COALESCE(delivered_at, ?), completed_at = ?,"
        " outcome = ?, links = ?"
    )
    parameters: list[object] = [now, now, outcome, links]
    if reply_id is not None:
        columns += ", reply_id = ?"
        parameters.append(reply_id)
    return connection.execute(
        f"UPDATE task_events SET {columns}"
        " WHERE task_id = ? AND event_id = ? AND retired_at IS NULL AND pulled_at IS NOT NULL"
        " AND delivery IN ('exposed', 'delivered')",
        (*parameters, task_id, event_id),
    ).rowcount


def complete_record(connection: sqlite3.Connection, event_id: int, now: str) -> int:
    return connection.execute(
        "UPDATE events SET state = 'completed', revision = revision + 1, updated_at = ?"
        " WHERE id = ? AND state = 'dispatched'",
        (now, event_id),
    ).rowcount


PROGRESS_STAMP_EVERY = timedelta(seconds=30)  # a worker's report is its attempt's progress, stamped this often


def record_progress(connection: sqlite3.Connection, task_id: int, now: datetime) -> None:
    """A worker reported: stamp its task's live attempt's ``progress_at``, at most once every
    ``PROGRESS_STAMP_EVERY``, so a still-running notice can say when it last moved."""
    connection.execute(
        "UPDATE attempts SET progress_at = ? WHERE task_id = ? AND state <> 'ended'"
        " AND (progress_at IS NULL OR progress_at <= ?)",
        (format_timestamp(now), task_id, format_timestamp(now - PROGRESS_STAMP_EVERY)),
    )


def record_words_refused(connection: sqlite3.Connection, task_id: int, why: str) -> None:
    """The worker's words were refused for holding a credential: its live attempt says ``why``."""
    connection.execute("UPDATE attempts SET words_refused = ? WHERE task_id = ? AND state <> 'ended'", (why, task_id))


def write_words(connection: sqlite3.Connection, message: WorkerMessage, task_id: int, event_id: int,
                now: datetime) -> int:
    stamp = format_timestamp(now)
    return connection.execute(
        "INSERT INTO outbox (intent_key, kind, event_id, task_id, bucket_id, message_kind, recording_id,"
        " body, created_at, not_before) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (intent_key) DO NOTHING",
        (message.key, str(message.kind), event_id, task_id, message.bucket_id, str(message.message_kind),
         message.recording_id, message.body, stamp, stamp),
    ).rowcount
