"""The task rows (``task_events``): which records a task carries, and how far each delivery went.

The dispatcher's transitions and the outbox's claim ask this module, inside the transaction they
opened; nothing here commits or decides. A move is a compare-and-set on the state it was decided
from (as core's lifecycle tables answered), its row count returned for the caller to check. A
worker's own moves are ``shell.ledger.worker_moves``' statements, so the MCP server runs them
without importing this module's adoption and outbox reads."""

from __future__ import annotations

import logging
import sqlite3
from typing import TYPE_CHECKING

from core.destinations import Destination, MessageKind
from core.edges import GUARD_EDGES, Actor, DeliveryState, GuardState, IntentState
from core.intent_kinds import REPORTED_AS, IntentKind
from core.message_kinds import guard_key
from core.settlement import AdoptionRow, LifecycleMessages, choose_reply, is_candidate, next_acknowledgement
from core.states import EventOutcome
from core.text import message_text
from shell.ledger import outbox, snapshots
from shell.ledger.connection import stored_time
from shell.ledger.rules import asked
from shell.log_format import ids

if TYPE_CHECKING:
    from core.settlement import ListedReplies

log = logging.getLogger("connector.adoption")


def join(connection: sqlite3.Connection, task_id: int, event_id: int) -> None:
    """Put record ``event_id`` on task ``task_id``, its guard armed when it asked for one -- fired
    when an earlier row of the event was told its guard went out, and that guard waits for a retry;
    abandoned, as the schema's fired would not say, when a person abandoned that guard."""
    connection.execute(
        "INSERT INTO task_events (task_id, event_id, conversation_key, guard)"
        " SELECT ?, id, conversation_key, CASE acknowledge WHEN 1 THEN 'armed' ELSE '' END FROM events WHERE id = ?",
        (task_id, event_id),
    )
    sql = "SELECT 1 FROM task_events WHERE event_id = ? AND guard = ? LIMIT 1"
    if connection.execute(sql, (event_id, str(GuardState.fired))).fetchone() is not None:
        fire_guard(connection, event_id)
    sql = "SELECT 1 FROM outbox WHERE intent_key = ? AND state = ?"
    if connection.execute(sql, (guard_key(event_id), str(IntentState.abandoned))).fetchone() is not None:
        guard_never_went_out(connection, event_id, GuardState.abandoned, Actor.automatic)


def expose_on_launch(connection: sqlite3.Connection, task_id: int, event_id: int, attempt_id: str, stamp: str,
                     *, exposed: DeliveryState) -> sqlite3.Cursor:
    """The launch's exposure of its originating event, by its first attempt (the state core answered)."""
    return connection.execute(
        "UPDATE task_events SET delivery = ?, exposed_at = ?, exposed_attempt_id = ?"
        " WHERE task_id = ? AND event_id = ? AND delivery = 'admitted'",
        (str(exposed), stamp, attempt_id, task_id, event_id),
    )


def settle_unknown(connection: sqlite3.Connection, task_id: int, event_id: int, stamp: str,
                   completed: DeliveryState) -> None:
    """An exposed or delivered row whose attempt ended without a report: completed, unknown."""
    connection.execute(
        "UPDATE task_events SET delivery = ?, outcome = 'unknown', completed_at = ?"
        " WHERE task_id = ? AND event_id = ? AND delivery IN ('exposed', 'delivered')",
        (str(completed), stamp, task_id, event_id),
    )


def withdraw(connection: sqlite3.Connection, task_id: int, event_id: int, stamp: str) -> None:
    """A row its attempt's end withdrew (never handed over, or blocked again)."""
    sql = "UPDATE task_events SET withdrawn_at = ? WHERE task_id = ? AND event_id = ?"
    connection.execute(sql, (stamp, task_id, event_id))


def fire_guard(connection: sqlite3.Connection, event_id: int) -> int:
    """Mark every armed task row of the event fired: the guard is reported from its claim."""
    return _settle_guard(connection, event_id, (GuardState.armed,), GuardState.fired, Actor.automatic)


def guard_never_went_out(connection: sqlite3.Connection, event_id: int, to: GuardState, actor: Actor) -> int:
    """Mark every fired task row of the event ``to`` (refused, abandoned): the guard its claim
    reported never went out, and a worker pulling it now is told so."""
    return _settle_guard(connection, event_id, (GuardState.fired,), to, actor)


def _settle_guard(connection: sqlite3.Connection, event_id: int, sources: tuple[GuardState, ...], to: GuardState,
                  actor: Actor) -> int:
    """Each move asked from the guard read on its row, by compare-and-set; the row count."""
    marks = ", ".join("?" for _ in sources)
    sql = f"SELECT task_id, guard FROM task_events WHERE event_id = ? AND guard IN ({marks})"
    found = connection.execute(sql, (event_id, *(str(source) for source in sources))).fetchall()
    count = 0
    for task_id, guard in found:
        settled = asked(GUARD_EDGES, GuardState(guard), to, actor)
        sql = "UPDATE task_events SET guard = ? WHERE task_id = ? AND event_id = ? AND guard = ?"
        count += connection.execute(sql, (str(settled), task_id, event_id, guard)).rowcount
    return count


def record_worker_message(connection: sqlite3.Connection, kind: IntentKind, task_id: int | None,
                          event_id: int | None, receipt_id: int) -> int:
    """A worker message the outbox posted (or a person found) recorded as its task row's
    ``ack_id`` or ``reply_id``, unless the row already holds one; the row count."""
    column = REPORTED_AS.get(kind)
    if column is None or task_id is None or event_id is None:
        return 0
    sql = f"UPDATE task_events SET {column} = ? WHERE task_id = ? AND event_id = ? AND {column} IS NULL"
    changed = connection.execute(sql, (receipt_id, task_id, event_id)).rowcount
    log.info("worker words task=%s event=%s: %s %d recorded (%d)", task_id, event_id, column, receipt_id, changed,
             extra=ids(task=task_id, event_id=event_id, kind=kind))
    return changed


def settled_rows(connection: sqlite3.Connection, task_id: int, *,
                 settled: bool = True) -> list[tuple[AdoptionRow, Destination | None]]:
    """Every row of a superseded task (``settled=False``: of a live one) as ``core.settlement`` reads it,
    with its record's reply destination (None: it names none)."""
    found: list[tuple[AdoptionRow, Destination | None]] = []
    for event_id, outcome, delivered_at, reply_id, adopted, kind, bucket_id, recording_id in connection.execute(
        "SELECT te.event_id, te.outcome, te.delivered_at, te.reply_id, te.adopted_reply_id,"
        " e.reply_kind, e.reply_bucket_id, e.reply_recording_id"
        " FROM task_events te JOIN events e ON e.id = te.event_id"
        " JOIN tasks t ON t.id = te.task_id WHERE te.task_id = ?"
        " AND (t.superseded_at IS NOT NULL) = ? ORDER BY te.event_id",
        (task_id, settled),
    ):
        row = AdoptionRow(event_id, EventOutcome(outcome), stored_time(delivered_at), reply_id, adopted)
        destination = Destination(MessageKind(kind), bucket_id, recording_id) if kind and recording_id > 0 else None
        found.append((row, destination))
    return found


def adopt_reply(connection: sqlite3.Connection, task_id: int, event_id: int, reply_id: int) -> int:
    return connection.execute(
        "UPDATE task_events SET adopted_reply_id = ? WHERE task_id = ? AND event_id = ?"
        " AND outcome = 'unknown' AND reply_id IS NULL AND adopted_reply_id IS NULL",
        (reply_id, task_id, event_id),
    ).rowcount


def adopt_listed(connection: sqlite3.Connection, task_id: int, replies: ListedReplies) -> list[tuple[int, int]]:
    """Inside the settlement's transaction: for each candidate row whose destination was listed, the one
    reply ``choose_reply`` answers, written by compare-and-set; the (event id, reply id) pairs written."""
    task_rows = settled_rows(connection, task_id)
    adopted: list[tuple[int, int]] = []
    for row, destination in task_rows:
        listed = replies.listed.get(row.event_id)
        if listed is None or destination is None or not is_candidate(row):
            continue
        worker = {
            identifier
            for found in snapshots.worker_task_events(connection, [message.id for message in listed])
            for identifier in (found.ack_id, found.reply_id, found.adopted_reply_id)
            if identifier is not None
        }
        receipts, bodies = outbox.lifecycle_at(connection, destination)
        reply_id = choose_reply(
            row, listed, agent_id=replies.agent_id,
            next_ack_at=next_acknowledgement(row, [found for found, _ in task_rows]), workers_own=frozenset(worker),
            lifecycle=LifecycleMessages(receipts, frozenset(message_text(body) for body in bodies)),
        )
        if reply_id is not None and adopt_reply(connection, task_id, row.event_id, reply_id) == 1:
            adopted.append((row.event_id, reply_id))
            log.info("adoption task=%d event=%d: adopted reply %d", task_id, row.event_id, reply_id,
                     extra=ids(task=task_id, event_id=row.event_id))
    return adopted
