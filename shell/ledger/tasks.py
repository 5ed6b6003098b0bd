"""The dispatcher's transitions on tasks and attempts, and the rows they read: each in its caller's
``Ledger.write()``, a compare-and-set with checked row counts, every state asked of ``core.edges``.

A launch creates the task, its attempt and the event's exposure, and moves the records to
``dispatched``, in one transaction before the driver starts anything: one live task per
conversation, working directory and event, one live attempt per task, a record starting only as the
oldest waiting on its conversation, nothing under the hold. A task's token is returned once and
stored only as its SHA-256 and its fingerprints. An attempt's end is one transaction: the attempt ends, the settlement's
plan is applied, the task is superseded (a redispatch pending on it admits its record there), the
replies listed before are adopted, and the completion intent read back from those rows is written."""

from __future__ import annotations

import secrets
import sqlite3
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from core.dispatch import LiveWork, joining, startable, task_free
from core.edges import ATTEMPT_EDGES, DELIVERY_EDGES, RECORD_EDGES, TASK_EDGES, Actor
from core.hold import may_launch
from core.message_kinds import Intent, completion_intent, still_running_intent
from core.notes import RESENDABLE_NOTES
from core.settlement import LeftLaunch, LiveRow, SettledRow, read_back, settlement_plan
from core.snapshots import StopReason, WorkerResult
from core.states import AttemptState, DeliveryState, EventOutcome, RecordState, TaskState
from core.task_token import token_sha256
from core.timestamps import format_timestamp
from core.worker_stream import LatestAttempt, WorkerAccount, resumable
from shell.crashpoints import pause_at
from shell.ledger import deliveries, fingerprints, outbox, records, snapshots
from shell.ledger import hold as hold_marker
from shell.ledger.rules import asked

if TYPE_CHECKING:
    from core.settlement import LaunchSettlement, ListedReplies, RowSettlement, RowStep


class NotStartable(Exception):
    """The record cannot start now: it moved, or its conversation or directory is busy."""


class TransitionRefused(Exception):
    """A compare-and-set found a row no longer where the transition expected it."""


@dataclass(frozen=True, slots=True)
class Launch:
    """A task and its first attempt, created: the token (here once, never stored) and what its prompt names."""

    task_id: int
    attempt_id: str
    token: str
    event_ids: tuple[int, ...]
    trigger: str
    recording_url: str
    resume_session: str = ""  # the conversation's Claude Code session to go on with, or ""
    conversation: str = ""  # its conversation's key


@dataclass(frozen=True, slots=True)
class LiveAttemptRow:
    attempt_id: str
    task_id: int
    launching: bool
    pid: int | None
    pgid: int | None
    process_started: str


@dataclass(frozen=True, slots=True)
class RecordedWorker:
    """The live attempt's recorded process, as a person's redispatch stops it (None: not recorded)."""

    attempt_id: str | None
    pid: int | None
    pgid: int | None
    process_started: str


def _checked(cursor: sqlite3.Cursor, what: str) -> None:
    if cursor.rowcount != 1:
        raise TransitionRefused(what)


def startable_records(connection: sqlite3.Connection, buckets: frozenset[int], limit: int) -> list[tuple[int, int]]:
    """(event id, project) of the oldest startable record of each free conversation, oldest first."""
    if not buckets or not may_launch(hold_marker.standing(connection)):
        return []
    return startable(records.live_work(connection), buckets, limit)


def launch(connection: sqlite3.Connection, event_id: int, *, work_dir: str, driver: str,
           deadline_at: datetime, now: datetime) -> Launch:
    conversation, work, trigger, recording_url = _startable(connection, event_id, work_dir)
    stamp = format_timestamp(now)
    token = secrets.token_urlsafe(32)
    resume = resume_session(connection, conversation)  # before this task's attempt
    task_id = connection.execute(
        "INSERT INTO tasks (token_sha256, conversation_key, originating_event_id, created_at, deadline_at,"
        " driver, work_dir) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (token_sha256(token), conversation, event_id, stamp, format_timestamp(deadline_at), driver, work_dir),
    ).lastrowid
    assert task_id is not None
    fingerprints.record_task_token(connection, task_id, token, now)  # before any worker can hold it
    joined = _join(connection, task_id, (conversation, work), stamp, first=event_id)
    attempt_id = "att_" + secrets.token_hex(12)
    sql = "INSERT INTO attempts (id, task_id, seq, state, launched_at) VALUES (?, ?, 1, 'launching', ?)"
    connection.execute(sql, (attempt_id, task_id, stamp))
    sql = "SELECT delivery FROM task_events WHERE task_id = ? AND event_id = ?"
    (delivery,) = connection.execute(sql, (task_id, event_id)).fetchone()
    exposed = asked(DELIVERY_EDGES, DeliveryState(delivery), DeliveryState.exposed, Actor.dispatcher)
    moved = deliveries.expose_on_launch(connection, task_id, event_id, attempt_id, stamp, exposed=exposed)
    _checked(moved, f"event {event_id} could not be exposed on task {task_id}")
    return Launch(task_id, attempt_id, token, joined, str(trigger), str(recording_url), resume, conversation)


def _startable(connection: sqlite3.Connection, event_id: int, work_dir: str) -> tuple[str, LiveWork, str, str]:
    """Conversation, snapshot, trigger and URL of a record startable in ``work_dir``; else NotStartable."""
    found = connection.execute(
        "SELECT state, conversation_key, snapshot IS NOT NULL, trigger_name, recording_url FROM events"
        " WHERE id = ?",
        (event_id,),
    ).fetchone()
    if found is None:
        raise NotStartable(f"event {event_id} has no record")
    state, conversation, has_snapshot, trigger, recording_url = found
    if not may_launch(hold_marker.standing(connection)):
        raise NotStartable(f"event {event_id} waits: the connector is held until `bin/connect release`")
    if state not in ("admitted", "queued") or not has_snapshot or not conversation:
        raise NotStartable(f"event {event_id} is {state}; it cannot start")
    work = records.live_work(connection, conversation)
    if not task_free(work, conversation, work_dir):
        raise NotStartable(f"event {event_id}: its conversation or directory has a live task")
    return str(conversation), work, str(trigger), str(recording_url)


def resume_session(connection: sqlite3.Connection, conversation: str) -> str:
    """The Claude Code session the conversation's next task resumes, or "": what the newest launched
    attempt of any task on it left, as ``core.worker_stream.resumable`` reads it."""
    found = connection.execute(
        "SELECT a.stop_reason, a.not_started, a.session_id,"
        " EXISTS (SELECT 1 FROM task_events te WHERE te.task_id = t.id AND te.outcome = 'unknown')"
        " FROM attempts a JOIN tasks t ON t.id = a.task_id WHERE t.conversation_key = ?"
        " ORDER BY a.launched_at DESC, a.rowid DESC LIMIT 1",
        (conversation,),
    ).fetchone()
    if found is None:
        return ""
    stop_reason, not_started, session_id, left_unknown = found
    return resumable(LatestAttempt(str(stop_reason), str(not_started), str(session_id), bool(left_unknown)))


def _join(connection: sqlite3.Connection, task_id: int, on: tuple[str, LiveWork], stamp: str,
          first: int | None = None) -> tuple[int, ...]:
    """Join and dispatch the records ``core.dispatch.joining`` finds waiting on ``on``, oldest first."""
    found = joining(on[1], on[0])
    waiting = tuple(record.event_id for record in found)
    if first is not None and first not in waiting:
        raise NotStartable(f"event {first} is not waiting on its conversation")
    for record in found:
        deliveries.join(connection, task_id, record.event_id)
        dispatched = asked(RECORD_EDGES, record.state, RecordState.dispatched, Actor.dispatcher)
        moved = records.dispatch(connection, record.event_id, stamp, dispatched)
        _checked(moved, f"event {record.event_id} moved while joining task {task_id}")
    return waiting


def join_follow_ups(connection: sqlite3.Connection, task_id: int, now: datetime) -> tuple[int, ...]:
    """Records that arrived on a live task's conversation join it, to be pulled by its worker; none
    joins a task whose token a person's redispatch retired (its worker could never pull them)."""
    found = connection.execute(
        "SELECT conversation_key FROM tasks WHERE id = ? AND superseded_at IS NULL AND token_retired_at IS NULL",
        (task_id,),
    ).fetchone()
    if found is None:
        return ()
    work = records.live_work(connection, found[0])
    return _join(connection, task_id, (found[0], work), format_timestamp(now))


def mark_running(connection: sqlite3.Connection, attempt_id: str, *, pid: int, pgid: int,
                 process_started: str, now: datetime) -> None:
    found = connection.execute("SELECT state FROM attempts WHERE id = ?", (attempt_id,)).fetchone()
    if found is None:
        raise TransitionRefused(f"attempt {attempt_id} does not exist")
    running = asked(ATTEMPT_EDGES, AttemptState(found[0]), AttemptState.running, Actor.dispatcher)
    moved = connection.execute(
        "UPDATE attempts SET state = ?, pid = ?, pgid = ?, process_started = ?, running_at = ?"
        " WHERE id = ? AND state = ?",
        (str(running), pid, pgid, process_started, format_timestamp(now), attempt_id, found[0]),
    )
    _checked(moved, f"attempt {attempt_id} is no longer launching")


def live_attempts(connection: sqlite3.Connection) -> list[LiveAttemptRow]:
    return [
        LiveAttemptRow(attempt_id, task_id, state == "launching", pid, pgid, started)
        for attempt_id, task_id, state, pid, pgid, started in connection.execute(
            "SELECT id, task_id, state, pid, pgid, process_started FROM attempts WHERE state <> 'ended' ORDER BY launched_at"
        )
    ]


def _record_account(connection: sqlite3.Connection, attempt_id: str, account: WorkerAccount) -> None:
    result = account.result or WorkerResult(is_error=False)  # none written: nothing said
    connection.execute(
        "UPDATE attempts SET not_started = ?, worker_result = ?, result_is_error = ?, result_error = ?,"
        " result_turns = ?, result_cost_usd = ?, result_duration_ms = ?, denied_tools = ?, refusals = ?,"
        " session_id = ?, ended_because = ? WHERE id = ?",
        (
            account.not_started, int(account.result is not None), int(result.is_error), result.error,
            max(result.turns, 0), max(result.cost_usd, 0.0), max(result.duration_ms, 0), ",".join(result.denials),
            len(result.denials), account.session_id, account.ended_because, attempt_id,
        ),
    )


def end_attempt(
    connection: sqlite3.Connection, attempt_id: str, stop_reason: StopReason, *, spawn_failed: bool, now: datetime,
    replies: ListedReplies | None = None, account: WorkerAccount | None = None,
) -> tuple[RowSettlement, ...]:  # fmt: skip
    """End the attempt and settle its task; ``replies``: what the adopted-reply rule reads (None: no
    listing was made, nothing is adopted); ``account``: what the worker's driver told of its end."""
    stamp = format_timestamp(now)
    task_id = _end(connection, attempt_id, stop_reason, spawn_failed, stamp)
    if account is not None:
        _record_account(connection, attempt_id, account)
    plan = settlement_plan(_live_rows(connection, task_id, attempt_id), spawn_failed)
    _apply(connection, task_id, plan.before, stamp)
    _supersede(connection, task_id, stamp)
    _apply(connection, task_id, plan.after, stamp)
    if replies is not None:
        deliveries.adopt_listed(connection, task_id, replies)
    notice = completion(connection, attempt_id, now)
    if notice is not None:
        outbox.write_intents(connection, (notice,), now)
    pause_at("in_settlement")  # a crash test kills the process here, before the settlement commits
    return plan.settled


def _end(connection: sqlite3.Connection, attempt_id: str, stop_reason: StopReason, spawn_failed: bool, stamp: str) -> int:
    sql = "SELECT task_id, state FROM attempts WHERE id = ? AND state <> 'ended'"
    found = connection.execute(sql, (attempt_id,)).fetchone()
    if found is None:
        raise TransitionRefused(f"attempt {attempt_id} has already ended or does not exist")
    task_id, attempt_state = found
    ended = asked(ATTEMPT_EDGES, AttemptState(attempt_state), AttemptState.ended, Actor.dispatcher)
    moved = connection.execute(
        "UPDATE attempts SET state = ?, stop_reason = ?, spawn_failed = ?, ended_at = ?"
        " WHERE id = ? AND state = ?",
        (str(ended), str(stop_reason), int(spawn_failed), stamp, attempt_id, attempt_state),
    )
    _checked(moved, f"attempt {attempt_id} ended under us")
    return int(task_id)


def _supersede(connection: sqlite3.Connection, task_id: int, stamp: str) -> None:
    """The task ends; a redispatch pending on it admits its record (the trigger's move, asked first)."""
    for pending in snapshots.redispatches_pending_on(connection, task_id):
        (record_state,) = connection.execute("SELECT state FROM events WHERE id = ?", (pending,)).fetchone()
        asked(RECORD_EDGES, RecordState(record_state), RecordState.admitted, Actor.person)  # the trigger's move
    sql = "SELECT CASE WHEN superseded_at IS NULL THEN 'live' ELSE 'superseded' END FROM tasks WHERE id = ?"
    (task_state,) = connection.execute(sql, (task_id,)).fetchone()
    asked(TASK_EDGES, TaskState(task_state), TaskState.superseded, Actor.dispatcher)
    sql = "UPDATE tasks SET superseded_at = ?, ended_at = ? WHERE id = ? AND superseded_at IS NULL"
    moved = connection.execute(sql, (stamp, stamp, task_id))
    _checked(moved, f"task {task_id} was already superseded")


def _live_rows(connection: sqlite3.Connection, task_id: int, attempt_id: str) -> list[LiveRow]:
    """The task's live (unretired) rows as the attempt's end finds them (``core.settlement``)."""
    return [
        LiveRow(
            event_id=event_id, delivery=DeliveryState(delivery), exposed_by_this_attempt=exposed_by == attempt_id,
            pulled=pulled_at is not None, withdrawn_before=bool(withdrawn_before),
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


def _settled_rows(connection: sqlite3.Connection, task_id: int) -> list[SettledRow]:
    """Every row of the task as its settlement and adoption left it, with whether a worker's reply
    is on its way for it (an outbox intent not canceled), or was canceled with no message made."""
    not_posted = sorted(RESENDABLE_NOTES)
    rows = connection.execute(
        "SELECT te.event_id, te.delivery, te.outcome, te.reply_id, te.withdrawn_at, e.state, e.reason,"
        " te.adopted_reply_id, EXISTS (SELECT 1 FROM outbox o WHERE o.event_id = te.event_id"
        " AND o.task_id = te.task_id AND o.kind = 'worker_reply' AND o.state <> 'canceled'),"
        " EXISTS (SELECT 1 FROM outbox o WHERE o.event_id = te.event_id AND o.task_id = te.task_id"
        f" AND o.kind = 'worker_reply' AND o.state = 'canceled' AND o.note IN ({', '.join('?' for _ in not_posted)}))"
        " FROM task_events te JOIN events e ON e.id = te.event_id WHERE te.task_id = ? ORDER BY te.event_id",
        (*not_posted, task_id),
    )
    return [
        SettledRow(
            event_id=event_id, delivery=DeliveryState(delivery), outcome=EventOutcome(outcome), reply_id=reply_id,
            withdrawn=withdrawn_at is not None, record_state=RecordState(state), record_reason=reason,
            adopted_reply_id=adopted, reply_on_its_way=bool(on_its_way), reply_not_posted=bool(not_made),
        )
        for event_id, delivery, outcome, reply_id, withdrawn_at, state, reason, adopted, on_its_way, not_made in rows
    ]


def completion(connection: sqlite3.Connection, attempt_id: str, now: datetime, *, written: bool = False) -> Intent | None:
    """The completion notice the ended attempt calls for (``core.message_kinds``), read back from the rows its
    settlement wrote and whether a still-running notice of it is in flight; None when none is due.
    One already ``written`` stays a notice: read again, it says at least how the task ended."""
    attempt = snapshots.attempt(connection, attempt_id)
    if attempt is None or attempt.live:
        raise TransitionRefused(f"attempt {attempt_id} has not ended")
    sql = "SELECT originating_event_id FROM tasks WHERE id = ?"
    (originating_event_id,) = connection.execute(sql, (attempt.task_id,)).fetchone()
    origin = None if originating_event_id is None else snapshots.record(connection, originating_event_id)
    if origin is None:
        raise TransitionRefused(f"task {attempt.task_id} has no originating record")
    settled = [read_back(row) for row in _settled_rows(connection, attempt.task_id)]
    in_flight = written or snapshots.still_running_in_flight(connection, attempt_id)
    return completion_intent(attempt, settled, origin, now, notice_in_flight=in_flight)


def read_completion_again(connection: sqlite3.Connection, task_id: int, now: datetime) -> None:
    """A worker's reply on task ``task_id`` was refused or given up, or a person resent it: once the
    task's attempt has ended, its completion notice, read back again, is written, or rewritten
    while still pending, so it says what became of the reply. A live attempt's end reads the same
    rows itself."""
    sql = ("SELECT a.id, EXISTS (SELECT 1 FROM outbox WHERE kind = 'completion' AND attempt_id = a.id)"
           " FROM attempts a JOIN tasks t ON t.id = a.task_id WHERE a.task_id = ?"
           " AND a.state = 'ended' AND t.ended_at IS NOT NULL ORDER BY a.seq DESC LIMIT 1")
    found = connection.execute(sql, (task_id,)).fetchone()
    if found is None:
        return
    notice = completion(connection, str(found[0]), now, written=bool(found[1]))
    if notice is not None:
        outbox.write_or_rewrite_pending(connection, notice, now)


def still_running(connection: sqlite3.Connection, attempt_id: str, now: datetime) -> Intent | None:
    sql = "UPDATE attempts SET still_running = still_running + 1 WHERE id = ? AND state <> 'ended'"
    counted = connection.execute(sql, (attempt_id,)).rowcount
    if counted != 1:
        return None
    occurrence, originating_event_id = connection.execute(
        "SELECT a.still_running, t.originating_event_id FROM attempts a JOIN tasks t ON t.id = a.task_id"
        " WHERE a.id = ?",
        (attempt_id,),
    ).fetchone()
    attempt = snapshots.attempt(connection, attempt_id)
    origin = None if originating_event_id is None else snapshots.record(connection, originating_event_id)
    if attempt is None or origin is None:
        raise TransitionRefused(f"attempt {attempt_id} has no task or no originating record")
    intent = still_running_intent(attempt, origin, occurrence, now)
    if intent is not None:
        outbox.write_intents(connection, (intent,), now)
    return intent


def _apply(connection: sqlite3.Connection, task_id: int, steps: tuple[RowStep, ...], stamp: str) -> None:
    for step in steps:
        if step.complete_delivery:
            completed = asked(DELIVERY_EDGES, step.delivery, DeliveryState.completed, Actor.dispatcher)
            deliveries.settle_unknown(connection, task_id, step.event_id, stamp, completed)
        if step.withdraw:
            deliveries.withdraw(connection, task_id, step.event_id, stamp)
        if step.record_to is not None:
            (record_state,) = connection.execute("SELECT state FROM events WHERE id = ?", (step.event_id,)).fetchone()
            moved = asked(RECORD_EDGES, RecordState(record_state), step.record_to, Actor.dispatcher)
            records.settle(connection, step.event_id, moved, step.record_reason, stamp)


def mark_left(connection: sqlite3.Connection, attempt_id: str, now: datetime) -> None:
    """A start's recovery found ``attempt_id`` launching with no recorded process: left for a person
    (``core.settlement.settle_launch``). Marked once; the first finding's time is kept."""
    connection.execute(
        "UPDATE attempts SET left_at = COALESCE(left_at, ?) WHERE id = ? AND state = 'launching' AND pid IS NULL",
        (format_timestamp(now), attempt_id),
    )


def left_launch(connection: sqlite3.Connection, event_id: int) -> LeftLaunch | None:
    """The live attempt of the live task carrying ``event_id``, as a settlement reads it, or None."""
    found = connection.execute(
        "SELECT t.id, a.id, a.state = 'launching', a.left_at IS NOT NULL,"
        " EXISTS (SELECT 1 FROM task_events p WHERE p.task_id = t.id AND p.pulled_at IS NOT NULL)"
        " FROM task_events te JOIN tasks t ON t.id = te.task_id AND t.ended_at IS NULL"
        " JOIN attempts a ON a.task_id = t.id AND a.state <> 'ended'"
        " WHERE te.event_id = ? AND te.retired_at IS NULL",
        (event_id,),
    ).fetchone()
    if found is None:
        return None
    task_id, attempt_id, launching, left, pulled = found
    return LeftLaunch(event_id, int(task_id), str(attempt_id), bool(launching), bool(left), bool(pulled))


def settle_left_launch(connection: sqlite3.Connection, plan: LaunchSettlement, by: str, now: datetime) -> None:
    """A person's settlement of an attempt left mid-launch: who and what they found, then the
    attempt's end as the dispatcher's own settlement, in the caller's one transaction."""
    moved = connection.execute(
        "UPDATE attempts SET settled_by = ?, settled_as = ? WHERE id = ? AND state = 'launching'"
        " AND left_at IS NOT NULL",
        (by, str(plan.claim), plan.facts.attempt_id),
    )
    _checked(moved, f"attempt {plan.facts.attempt_id} is no longer left mid-launch")
    end_attempt(connection, plan.facts.attempt_id, plan.stop_reason, spawn_failed=plan.spawn_failed, now=now)


def retire_token(connection: sqlite3.Connection, task_id: int, now: datetime) -> RecordedWorker:
    """A person's redispatch retires live task ``task_id``'s token (its worker's tools are refused
    from this transaction on); the task runs on until its attempt ends. Its recorded worker."""
    moved = connection.execute(
        "UPDATE tasks SET token_retired_at = COALESCE(token_retired_at, ?) WHERE id = ? AND superseded_at IS NULL",
        (format_timestamp(now), task_id),
    )
    _checked(moved, f"task {task_id} is no longer live")
    sql = "SELECT id, pid, pgid, process_started FROM attempts WHERE task_id = ? AND state <> 'ended'"
    found = connection.execute(sql, (task_id,)).fetchone()
    if found is None:
        return RecordedWorker(None, None, None, "")
    return RecordedWorker(str(found[0]), found[1], found[2], str(found[3]))
