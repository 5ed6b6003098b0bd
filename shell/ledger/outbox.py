"""The outbox's SQL: intents written, the next one to claim and the snapshot its claim reads, and
core's decisions written back.

Every function runs inside a transaction its caller opened (``Ledger.write()`` or
``Ledger.read()``) and none commits, so a decision is applied in the transaction whose snapshot
it was made from. Every state change is a compare-and-set on the state it was decided from, its
move asked of ``core.edges`` before any SQL runs, and its row count checked: a row that moved
under us raises ``IntentMoved`` and the caller's transaction rolls back. A second write of an
intent's key writes nothing.

The next intent to claim is one ordered query: the oldest due for ``STARVING_AFTER`` first,
whatever its kind, else the most urgent kind's oldest (urgency is the kind table's), never while
the hold stands. Its order is the index ``CLAIM_ORDER`` that the ledger's generated rules keep
(``shell.ledger.rules``, from the kind table), so a change of the table needs no migration.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence, Set
from dataclasses import dataclass
from datetime import datetime

from core.adoption import Neighbour
from core.destinations import Destination, MessageKind
from core.edges import INTENT_EDGES, Actor, IntentState
from core.intent_kinds import WORKER_KINDS, IntentKind
from core.message_kinds import KINDS, STARVING_AFTER, ClaimFacts, ClaimNeeds, Intent, guard_key
from core.resolution import Move
from core.timestamps import format_timestamp, parse_timestamp
from shell.ledger import snapshots
from shell.ledger.connection import stored_time
from shell.ledger.rules import CLAIM_ORDER, URGENCY, asked


class IntentMoved(Exception):
    """A compare-and-set found the intent no longer in the state it was decided from."""


@dataclass(frozen=True, slots=True)
class IntentRow:
    id: int
    key: str
    kind: IntentKind
    state: IntentState
    event_id: int | None
    task_id: int | None
    attempt_id: str | None
    occurrence: int
    destination: Destination
    body: str
    created_at: datetime
    not_before: datetime
    sending_at: datetime | None
    finished_at: datetime | None
    receipt_id: int | None
    note: str
    resolved_by: str
    reconcile_failures: int
    reconcile_at: datetime | None
    retrying_since: datetime | None = None


def _intent_row(found: sqlite3.Row) -> IntentRow:
    return IntentRow(
        id=found["id"], key=found["intent_key"], kind=IntentKind(found["kind"]), body=found["body"],
        state=IntentState(found["state"]), event_id=found["event_id"], task_id=found["task_id"],
        attempt_id=found["attempt_id"], occurrence=found["occurrence"], receipt_id=found["receipt_id"],
        destination=Destination(MessageKind(found["message_kind"]), found["bucket_id"], found["recording_id"]),
        created_at=parse_timestamp(found["created_at"]), not_before=parse_timestamp(found["not_before"]),
        sending_at=stored_time(found["sending_at"]), finished_at=stored_time(found["finished_at"]),
        note=found["note"], resolved_by=found["resolved_by"], reconcile_failures=found["reconcile_failures"],
        reconcile_at=stored_time(found["reconcile_at"]), retrying_since=stored_time(found["retrying_since"]),
    )  # fmt: skip


def _intents(connection: sqlite3.Connection, where: str, values: Sequence[object] = ()) -> list[IntentRow]:
    cursor = connection.execute(f"SELECT * FROM outbox {where}", values)
    cursor.row_factory = sqlite3.Row
    return [_intent_row(found) for found in cursor]


def write_intents(connection: sqlite3.Connection, intents: Iterable[Intent], now: datetime) -> int:
    written = 0
    for intent in intents:
        written += connection.execute(
            "INSERT INTO outbox (intent_key, kind, event_id, task_id, attempt_id, occurrence, bucket_id,"
            " message_kind, recording_id, body, created_at, not_before)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (intent_key) DO NOTHING",
            (
                intent.key, str(intent.kind), intent.event_id, intent.task_id, intent.attempt_id,
                intent.occurrence, intent.destination.bucket_id, str(intent.destination.kind),
                intent.destination.recording_id, intent.body, format_timestamp(now),
                format_timestamp(intent.not_before),
            ),
        ).rowcount  # fmt: skip
    return written


def write_or_rewrite_pending(connection: sqlite3.Connection, written: Intent, now: datetime) -> None:
    """``written``, or its words over those of the intent of its key while that is still pending
    (no request was made for it, so no listing could have matched the old words)."""
    connection.execute(
        "INSERT INTO outbox (intent_key, kind, event_id, task_id, attempt_id, occurrence, bucket_id,"
        " message_kind, recording_id, body, created_at, not_before)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (intent_key) DO UPDATE SET body = excluded.body WHERE outbox.state = 'pending'",
        (
            written.key, str(written.kind), written.event_id, written.task_id, written.attempt_id,
            written.occurrence, written.destination.bucket_id, str(written.destination.kind),
            written.destination.recording_id, written.body, format_timestamp(now),
            format_timestamp(written.not_before),
        ),
    )  # fmt: skip


def intent(connection: sqlite3.Connection, intent_id: int) -> IntentRow | None:
    found = _intents(connection, "WHERE id = ?", (intent_id,))
    return found[0] if found else None


def intents_in(connection: sqlite3.Connection, states: Sequence[IntentState]) -> list[IntentRow]:
    marks = ", ".join("?" for _ in states)
    return _intents(connection, f"WHERE state IN ({marks}) ORDER BY id", [str(s) for s in states])


def next_due(
    connection: sqlite3.Connection, now: datetime, passed_over: Set[int] = frozenset(),
    leaving: Set[IntentKind] = frozenset(),
) -> IntentRow | None:  # fmt: skip
    """The pending intent to claim next among those due by ``now``, none of a kind in ``leaving``
    (those stay pending, untouched) and none in ``passed_over`` (this flush claimed them already:
    a person may have put one back to pending mid-flush). None while the hold stands."""
    skipped = sorted(passed_over)
    found = _next_due(connection, now, leaving, ())
    if found is not None and found.id in passed_over:
        found = _next_due(connection, now, leaving, skipped)
    return found


def _next_due(connection: sqlite3.Connection, now: datetime, leaving: Set[IntentKind],
              skipped: Sequence[int]) -> IntentRow | None:
    condition = "state = 'pending' AND not_before <= ?"
    values: list[object] = []
    if leaving:
        condition += f" AND kind NOT IN ({', '.join('?' for _ in leaving)})"
        values += sorted(str(kind) for kind in leaving)
    if skipped:
        condition += f" AND id NOT IN ({', '.join('?' for _ in skipped)})"
        values += skipped
    found = _intents(
        connection, f"WHERE NOT EXISTS (SELECT 1 FROM hold_marker) AND id = coalesce("

        f"(SELECT id FROM outbox WHERE {condition} ORDER BY not_before, id LIMIT 1),"
        f" (SELECT id FROM outbox INDEXED BY {CLAIM_ORDER} WHERE {condition}"
        f" ORDER BY {URGENCY}, not_before, id LIMIT 1))",
        [format_timestamp(now - STARVING_AFTER), *values, format_timestamp(now), *values],
    )
    return found[0] if found else None


def held(connection: sqlite3.Connection) -> bool:
    return connection.execute("SELECT 1 FROM hold_marker").fetchone() is not None


def claim_snapshot(connection: sqlite3.Connection, row: IntentRow) -> ClaimFacts:
    match KINDS[row.kind].needs:
        case ClaimNeeds.event:
            if row.event_id is None:
                return ClaimFacts()
            return ClaimFacts(
                record=snapshots.record(connection, row.event_id),
                task_events=snapshots.task_events_of_event(connection, row.event_id),
            )
        case ClaimNeeds.attempt:
            found = None if row.attempt_id is None else snapshots.attempt(connection, row.attempt_id)
            task_rows = [] if found is None else snapshots.task_events_of_task(connection, found.task_id)
            return ClaimFacts(attempt=found, task_events=task_rows)
        case ClaimNeeds.words:
            return ClaimFacts(earlier_words_waiting=earlier_words_waiting(connection, row))


def earlier_words_waiting(connection: sqlite3.Connection, row: IntentRow) -> bool:
    """Whether a worker's word of ``row``'s task, written before it, is still pending or sending."""
    if row.task_id is None:
        return False
    kinds = sorted(str(kind) for kind in WORKER_KINDS)
    found = connection.execute(
        "SELECT 1 FROM outbox WHERE state IN ('pending', 'sending') AND task_id = ? AND id < ?"
        f" AND kind IN ({', '.join('?' for _ in kinds)}) LIMIT 1",
        (row.task_id, row.id, *kinds),
    ).fetchone()
    return found is not None


def due_for_reconciliation(connection: sqlite3.Connection, sent_before: datetime, now: datetime,
                           limit: int | None) -> list[IntentRow]:
    """Sending intents whose request was made before ``sent_before`` and whose backoff has
    passed by ``now``, oldest request first."""
    return _intents(
        connection,
        "WHERE state = 'sending' AND sending_at <= ? AND (reconcile_at IS NULL OR reconcile_at <= ?)"
        " ORDER BY sending_at, id LIMIT ?",
        (format_timestamp(sent_before), format_timestamp(now), -1 if limit is None else limit),
    )


def receipts_owned_by_others(connection: sqlite3.Connection, intent_id: int, kind: MessageKind,
                             candidates: Iterable[int]) -> frozenset[int]:
    owned: set[int] = set()
    wanted = sorted(set(candidates))
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        sql = f"SELECT receipt_id FROM outbox WHERE message_kind = ? AND id <> ? AND receipt_id IN ({marks})"
        owned.update(row[0] for row in connection.execute(sql, [str(kind), intent_id, *chunk]))
    return frozenset(owned)


def without_receipt_at(connection: sqlite3.Connection, row: IntentRow) -> list[Neighbour]:
    found = connection.execute(
        "SELECT id, state, body FROM outbox WHERE message_kind = ? AND recording_id = ? AND receipt_id IS NULL",
        [str(row.destination.kind), row.destination.recording_id],
    )
    return [Neighbour(intent_id=identifier, state=state, body=body) for identifier, state, body in found]


def lifecycle_at(connection: sqlite3.Connection, destination: Destination) -> tuple[frozenset[int], list[str]]:
    """The receipts of every intent at ``destination`` and the bodies of every one there not
    canceled (a canceled intent's message provably does not exist)."""
    receipts: set[int] = set()
    bodies: list[str] = []
    sql = "SELECT state, receipt_id, body FROM outbox WHERE message_kind = ? AND recording_id = ?"
    for state, receipt_id, body in connection.execute(sql, [str(destination.kind), destination.recording_id]):
        if receipt_id is not None:
            receipts.add(int(receipt_id))
        if state != IntentState.canceled:
            bodies.append(str(body))
    return frozenset(receipts), bodies


def unclaimed_guard(connection: sqlite3.Connection, event_id: int) -> int | None:
    """The event's pending guard, unless a claim of it told a task row it fired."""
    sql = ("SELECT id FROM outbox WHERE intent_key = ? AND state = 'pending' AND NOT EXISTS"
           " (SELECT 1 FROM task_events WHERE event_id = ? AND guard = 'fired')")
    found = connection.execute(sql, (guard_key(event_id), event_id)).fetchone()
    return None if found is None else int(found[0])


def _move(
    connection: sqlite3.Connection, intent_id: int, expected: IntentState, to: IntentState | None,
    edge_note: str = "", /, **columns: object,
) -> None:  # fmt: skip
    if to is not None:
        columns = {"state": str(asked(INTENT_EDGES, expected, to, Actor.automatic, edge_note)), **columns}
    assignments = ", ".join(f"{column} = ?" for column in columns)
    sql = f"UPDATE outbox SET {assignments} WHERE id = ? AND state = ?"
    cursor = connection.execute(sql, [*columns.values(), intent_id, str(expected)])
    if cursor.rowcount != 1:
        raise IntentMoved(f"intent {intent_id} is no longer {expected}")


def claim(connection: sqlite3.Connection, intent_id: int, now: datetime) -> None:
    _move(connection, intent_id, IntentState.pending, IntentState.sending, sending_at=format_timestamp(now))


def cancel(connection: sqlite3.Connection, intent_id: int, expected: IntentState, note: str, now: datetime) -> None:
    _move(connection, intent_id, expected, IntentState.canceled, note=note, finished_at=format_timestamp(now))


def record_receipt(connection: sqlite3.Connection, intent_id: int, receipt_id: int, note: str, now: datetime) -> None:
    done = {"receipt_id": receipt_id, "note": note, "finished_at": format_timestamp(now)}
    _move(connection, intent_id, IntentState.sending, IntentState.sent, **done)


def defer(connection: sqlite3.Connection, intent_id: int, reconcile_at: datetime, failures: int | None = None) -> None:
    counted = {} if failures is None else {"reconcile_failures": failures}
    _move(connection, intent_id, IntentState.sending, None, reconcile_at=format_timestamp(reconcile_at), **counted)


def retry(connection: sqlite3.Connection, intent_id: int, note: str, due_at: datetime, since: datetime) -> None:
    """Back to pending a sending intent whose request provably never reached Basecamp, due at
    ``due_at``, with ``note`` its cause; ``since`` starts or keeps its run of retries."""
    _move(
        connection, intent_id, IntentState.sending, IntentState.pending, note,
        note=note, not_before=format_timestamp(due_at), retrying_since=format_timestamp(since), sending_at=None,
    )  # fmt: skip


def make_indeterminate(connection: sqlite3.Connection, intent_id: int, note: str, now: datetime,
                       failures: int | None = None) -> None:
    counted = {} if failures is None else {"reconcile_failures": failures}
    _move(connection, intent_id, IntentState.sending, IntentState.indeterminate, note=note,
          finished_at=format_timestamp(now), **counted)


def resolve(connection: sqlite3.Connection, row: IntentRow, move: Move) -> int:
    """A person's ``move`` (``core.resolution``) written onto ``row`` by compare-and-set on the
    state and note it was decided from; the row count. The ledger's triggers and its receipt
    index raise ``sqlite3.IntegrityError`` for the caller to word."""
    columns: dict[str, object] = {"state": str(move.state), "note": move.note, "resolved_by": move.resolved_by}
    if move.receipt_id is not None:
        columns["receipt_id"] = move.receipt_id
    if move.reset_reconciliation:
        cleared = dict.fromkeys(("sending_at", "finished_at", "reconcile_at", "retrying_since"))
        columns |= cleared | {"reconcile_failures": 0}
    elif move.finished_at is not None:
        columns["finished_at"] = format_timestamp(move.finished_at)
    if move.not_before is not None:
        columns["not_before"] = format_timestamp(move.not_before)
    assignments = ", ".join(f"{column} = ?" for column in columns)
    return connection.execute(f"UPDATE outbox SET {assignments} WHERE id = ? AND state = ? AND note = ?",
                              [*columns.values(), row.id, str(row.state), row.note]).rowcount
