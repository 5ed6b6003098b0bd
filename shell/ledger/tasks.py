"""The dispatcher's transitions: one transaction each, compare-and-set, in the lifecycle's order.

Rules (spec 1.6, the dispatch invariants):
1. Exposure before hand-off: a launch creates the task, its attempt (``launching``) and the
   originating event's exposure, and moves the records to ``dispatched``, in one transaction,
   before the driver is asked to start anything.
2. One live task per conversation, per working directory and per event; one live attempt per
   task. A record starts only if it is the oldest waiting on its conversation.
3. A task's token is returned once and stored only as its SHA-256.
4. An attempt's end is one transaction: the attempt ends, each live row is settled by
   ``core.settlement.settle``, the task is superseded (its token refused, its rows retired), and
   the completion intent is written by the hook from the rows the settlement wrote.
5. The functions here never commit: callers hold ``Ledger.write()``.
"""

from __future__ import annotations

import secrets
import sqlite3
from dataclasses import dataclass
from datetime import datetime

from core.edges import DeliveryState, RecordState
from core.settlement import LiveRow, RowSettlement, settle
from core.snapshots import Settlement, StopReason
from core.task_token import token_sha256
from core.timestamps import format_timestamp
from shell.crashpoints import pause_at
from shell.lifecycle_hooks import LifecycleHooks


class NotStartable(Exception):
    """The record cannot start now: it moved, or its conversation or directory is busy."""


class TransitionRefused(Exception):
    """A compare-and-set found a row no longer where the transition expected it."""


@dataclass(frozen=True, slots=True)
class Launch:
    """A task and its first attempt, created; the token is returned here once and never stored.

    It carries what the worker's prompt names besides ids, read in the launch's transaction:
    the originating record's trigger and recording URL (the rest the worker only pulls)."""

    task_id: int
    attempt_id: str
    token: str
    event_ids: tuple[int, ...]
    trigger: str
    recording_url: str


@dataclass(frozen=True, slots=True)
class LiveAttempt:
    attempt_id: str
    task_id: int
    launching: bool
    pid: int | None
    pgid: int | None
    process_started: str


def _checked(cursor: sqlite3.Cursor, what: str) -> None:
    if cursor.rowcount != 1:
        raise TransitionRefused(what)


def startable_records(
    connection: sqlite3.Connection, buckets: frozenset[int], limit: int
) -> list[tuple[int, int]]:
    """(event id, project) of the oldest startable record of each free conversation, oldest first.

    Startable: admitted or queued, with its snapshot and a conversation, in a routed project,
    not on a live task, no live task on its conversation, and no older record waiting there.
    """
    if not buckets:
        return []
    marks = ", ".join("?" for _ in buckets)
    rows = connection.execute(
        "SELECT e.id, e.bucket_id FROM events e"
        " WHERE e.state IN ('admitted', 'queued') AND e.snapshot IS NOT NULL AND e.conversation_key <> ''"
        f" AND e.bucket_id IN ({marks})"
        " AND NOT EXISTS (SELECT 1 FROM task_events te WHERE te.event_id = e.id AND te.retired_at IS NULL)"
        " AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.conversation_key = e.conversation_key AND t.ended_at IS NULL)"
        " AND NOT EXISTS (SELECT 1 FROM events o WHERE o.conversation_key = e.conversation_key AND o.id < e.id"
        "                 AND o.state IN ('admitted', 'queued', 'dispatched'))"
        " ORDER BY e.id LIMIT ?",
        [*sorted(buckets), limit],
    ).fetchall()
    return [(row[0], row[1]) for row in rows]


def launch(
    connection: sqlite3.Connection,
    event_id: int,
    *,
    work_dir: str,
    driver: str,
    deadline_at: datetime,
    now: datetime,
) -> Launch:
    """Create the task for ``event_id``'s conversation and its first attempt, exposing the event."""
    found = connection.execute(
        "SELECT state, conversation_key, snapshot IS NOT NULL, trigger_name, recording_url FROM events"
        " WHERE id = ?",
        (event_id,),
    ).fetchone()
    if found is None:
        raise NotStartable(f"event {event_id} has no record")
    state, conversation, has_snapshot, trigger, recording_url = found
    if state not in ("admitted", "queued") or not has_snapshot or not conversation:
        raise NotStartable(f"event {event_id} is {state}; it cannot start")
    busy = connection.execute(
        "SELECT 1 FROM tasks WHERE ended_at IS NULL AND (conversation_key = ? OR work_dir = ?)",
        (conversation, work_dir),
    ).fetchone()
    if busy is not None:
        raise NotStartable(f"event {event_id}: its conversation or directory has a live task")
    stamp = format_timestamp(now)
    token = secrets.token_urlsafe(32)
    task_id = connection.execute(
        "INSERT INTO tasks (token_sha256, conversation_key, originating_event_id, created_at, deadline_at,"
        " driver, work_dir) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            token_sha256(token),
            conversation,
            event_id,
            stamp,
            format_timestamp(deadline_at),
            driver,
            work_dir,
        ),
    ).lastrowid
    assert task_id is not None
    joined = _join(connection, task_id, conversation, stamp, first=event_id)
    attempt_id = "att_" + secrets.token_hex(12)
    connection.execute(
        "INSERT INTO attempts (id, task_id, seq, state, launched_at) VALUES (?, ?, 1, 'launching', ?)",
        (attempt_id, task_id, stamp),
    )
    _checked(
        connection.execute(
            "UPDATE task_events SET delivery = 'exposed', exposed_at = ?, exposed_attempt_id = ?"
            " WHERE task_id = ? AND event_id = ? AND delivery = 'admitted'",
            (stamp, attempt_id, task_id, event_id),
        ),
        f"event {event_id} could not be exposed on task {task_id}",
    )
    return Launch(task_id, attempt_id, token, joined, str(trigger), str(recording_url))


def _join(
    connection: sqlite3.Connection, task_id: int, conversation: str, stamp: str, first: int | None = None
) -> tuple[int, ...]:
    """Put every record waiting on the conversation onto the task, oldest first, then dispatch them."""
    waiting = [
        row[0]
        for row in connection.execute(
            "SELECT e.id FROM events e WHERE e.conversation_key = ? AND e.state IN ('admitted', 'queued')"
            " AND e.snapshot IS NOT NULL"
            " AND NOT EXISTS (SELECT 1 FROM task_events te WHERE te.event_id = e.id AND te.retired_at IS NULL)"
            " ORDER BY e.id",
            (conversation,),
        )
    ]
    if first is not None and first not in waiting:
        raise NotStartable(f"event {first} is not waiting on its conversation")
    for joining in waiting:
        connection.execute(
            "INSERT INTO task_events (task_id, event_id, conversation_key, guard)"
            " SELECT ?, id, conversation_key, CASE acknowledge WHEN 1 THEN 'armed' ELSE '' END FROM events WHERE id = ?",
            (task_id, joining),
        )
        _checked(
            connection.execute(
                "UPDATE events SET state = 'dispatched', revision = revision + 1, updated_at = ?"
                " WHERE id = ? AND state IN ('admitted', 'queued')",
                (stamp, joining),
            ),
            f"event {joining} moved while joining task {task_id}",
        )
    return tuple(waiting)


def join_follow_ups(connection: sqlite3.Connection, task_id: int, now: datetime) -> tuple[int, ...]:
    """Records that arrived on a live task's conversation join it, to be pulled by its worker."""
    found = connection.execute(
        "SELECT conversation_key FROM tasks WHERE id = ? AND superseded_at IS NULL", (task_id,)
    ).fetchone()
    if found is None:
        return ()
    return _join(connection, task_id, found[0], format_timestamp(now))


def mark_running(
    connection: sqlite3.Connection,
    attempt_id: str,
    *,
    pid: int,
    pgid: int,
    process_started: str,
    now: datetime,
) -> None:
    _checked(
        connection.execute(
            "UPDATE attempts SET state = 'running', pid = ?, pgid = ?, process_started = ?, running_at = ?"
            " WHERE id = ? AND state = 'launching'",
            (pid, pgid, process_started, format_timestamp(now), attempt_id),
        ),
        f"attempt {attempt_id} is no longer launching",
    )


def live_attempts(connection: sqlite3.Connection) -> list[LiveAttempt]:
    return [
        LiveAttempt(attempt_id, task_id, state == "launching", pid, pgid, started)
        for attempt_id, task_id, state, pid, pgid, started in connection.execute(
            "SELECT id, task_id, state, pid, pgid, process_started FROM attempts WHERE state <> 'ended' ORDER BY launched_at"
        )
    ]


def end_attempt(
    connection: sqlite3.Connection,
    attempt_id: str,
    stop_reason: StopReason,
    *,
    spawn_failed: bool,
    now: datetime,
    hooks: LifecycleHooks | None,
) -> tuple[RowSettlement, ...]:
    """End the attempt and settle its task, in the caller's one transaction (rule 4)."""
    stamp = format_timestamp(now)
    found = connection.execute(
        "SELECT task_id FROM attempts WHERE id = ? AND state <> 'ended'", (attempt_id,)
    ).fetchone()
    if found is None:
        raise TransitionRefused(f"attempt {attempt_id} has already ended or does not exist")
    (task_id,) = found
    _checked(
        connection.execute(
            "UPDATE attempts SET state = 'ended', stop_reason = ?, spawn_failed = ?, ended_at = ?"
            " WHERE id = ? AND state <> 'ended'",
            (str(stop_reason), int(spawn_failed), stamp, attempt_id),
        ),
        f"attempt {attempt_id} ended under us",
    )
    rows = [
        LiveRow(
            event_id=event_id,
            delivery=DeliveryState(delivery),
            exposed_by_this_attempt=exposed_by == attempt_id,
            pulled=pulled_at is not None,
            withdrawn_before=bool(withdrawn_before),
            record_state=RecordState(record_state),
        )
        for event_id, delivery, exposed_by, pulled_at, withdrawn_before, record_state in connection.execute(
            "SELECT te.event_id, te.delivery, te.exposed_attempt_id, te.pulled_at,"
            " EXISTS (SELECT 1 FROM task_events w WHERE w.event_id = te.event_id AND w.withdrawn_at IS NOT NULL),"
            " e.state FROM task_events te JOIN events e ON e.id = te.event_id"
            " WHERE te.task_id = ? AND te.retired_at IS NULL ORDER BY te.event_id",
            (task_id,),
        )
    ]
    decisions = settle(rows, spawn_failed)
    for decision in decisions:
        if decision.settlement is Settlement.unknown:
            connection.execute(
                "UPDATE task_events SET delivery = 'completed', outcome = 'unknown', completed_at = ?"
                " WHERE task_id = ? AND event_id = ? AND delivery IN ('exposed', 'delivered')",
                (stamp, task_id, decision.event_id),
            )
            _move_record(connection, decision, stamp)
    _checked(
        connection.execute(
            "UPDATE tasks SET superseded_at = ?, ended_at = ? WHERE id = ? AND superseded_at IS NULL",
            (stamp, stamp, task_id),
        ),
        f"task {task_id} was already superseded",
    )
    for decision in decisions:
        if decision.settlement in (Settlement.withdrawn, Settlement.blocked_again):
            connection.execute(
                "UPDATE task_events SET withdrawn_at = ? WHERE task_id = ? AND event_id = ?",
                (stamp, task_id, decision.event_id),
            )
        if decision.settlement in (Settlement.withdrawn, Settlement.blocked_again, Settlement.returned):
            _move_record(connection, decision, stamp)
    if hooks is not None:
        hooks.attempt_ended(connection, attempt_id, now)
    pause_at("in_settlement")  # a crash test kills the process here, before the settlement commits
    return decisions


def _move_record(connection: sqlite3.Connection, decision: RowSettlement, stamp: str) -> None:
    if decision.record_to is None:
        return
    connection.execute(
        "UPDATE events SET state = ?, reason = ?, revision = revision + 1, updated_at = ?"
        " WHERE id = ? AND state = 'dispatched'",
        (str(decision.record_to), decision.record_reason, stamp, decision.event_id),
    )
