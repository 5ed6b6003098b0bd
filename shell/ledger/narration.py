"""The demo's reads of a connector's ledger, for narration (``shell.demo.play``).

Rules:
1. Reads only, inside a transaction the caller opened (``Ledger.read()``); plain values out, so
   the narration's types stay with the demo.
2. An event's look is its record, its latest task row, that task's latest attempt, and every
   notice of the event or of that task's attempts.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class EventRows:
    """One event's rows as the demo narrates them (rule 2); ``joined``/``attempt`` None when absent."""

    record: tuple[Any, ...]
    joined: tuple[Any, ...] | None
    attempt: tuple[Any, ...] | None
    intents: list[tuple[Any, ...]]


def event_of_recording(connection: sqlite3.Connection, recording_id: int) -> int | None:
    """The first event recorded for ``recording_id``."""
    found = connection.execute(
        "SELECT id FROM events WHERE recording_id = ? ORDER BY id LIMIT 1", (recording_id,)
    ).fetchone()
    return None if found is None else int(found[0])


def live_processes(connection: sqlite3.Connection) -> list[tuple[str, int, int, str]]:
    """(attempt id, pid, pgid, process start) of every attempt not ended with a recorded process."""
    rows = connection.execute(
        "SELECT id, pid, pgid, process_started FROM attempts"
        " WHERE state <> 'ended' AND pid IS NOT NULL AND pgid IS NOT NULL"
    ).fetchall()
    return [(str(row[0]), int(row[1]), int(row[2]), str(row[3])) for row in rows]


def event_rows(connection: sqlite3.Connection, event_id: int) -> EventRows | None:
    """Rule 2; None when the ledger holds no record ``event_id``."""
    record = connection.execute(
        "SELECT state, reason, trigger_name FROM events WHERE id = ?", (event_id,)
    ).fetchone()
    if record is None:
        return None
    joined = connection.execute(
        "SELECT task_id, pulled_at IS NOT NULL, ack_id, outcome, reply_id FROM task_events"
        " WHERE event_id = ? ORDER BY task_id DESC LIMIT 1",
        (event_id,),
    ).fetchone()
    task_id = None if joined is None else joined[0]
    attempt = (
        connection.execute(
            "SELECT state, stop_reason FROM attempts WHERE task_id = ? ORDER BY seq DESC LIMIT 1", (task_id,)
        ).fetchone()
        if task_id is not None
        else None
    )
    intents = connection.execute(
        "SELECT id, kind, state, receipt_id, note, body FROM outbox WHERE event_id = ?"
        " OR attempt_id IN (SELECT id FROM attempts WHERE task_id = ?) ORDER BY id",
        (event_id, task_id if task_id is not None else -1),
    ).fetchall()
    return EventRows(tuple(record), None if joined is None else tuple(joined), attempt, intents)
