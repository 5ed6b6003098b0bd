"""The outbox's SQL: its rows read for core, and core's decisions written back (what a claim
reads first is ``shell.ledger.outbox_due``; the record, task rows and attempt it also reads are
``shell.ledger.snapshots``).

Rules:
1. Every function runs inside a transaction its caller opened (``Ledger.write()`` or
   ``Ledger.read()``); none commits. A decision is applied in the transaction whose snapshot
   it was made from.
2. Every state change is a compare-and-set on the state it was decided from
   (``UPDATE ... WHERE id = ? AND state = ?``), and its row count is checked: a row that moved
   under us raises ``IntentMoved``, and the caller's transaction rolls back.
3. ``write_intents`` inserts with ``ON CONFLICT (intent_key) DO NOTHING``: a second write for a
   key writes nothing (invariant 2).
4. Nothing here posts, lists or decides; it only reads and writes rows.
5. Every state it writes (an intent's, a guard's) is the connector's move as ``core.edges``
   answers it (``shell.ledger.moves``): an illegal move is refused before any SQL runs.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any

from core.adoption import Neighbour
from core.destinations import Destination, MessageKind
from core.edges import (
    INTENT_EDGES,
    Actor,
    IntentState,
)
from core.intents import Intent, IntentKind
from core.message_kinds import guard_key
from core.resolution import Move
from core.timestamps import format_timestamp, parse_timestamp
from shell.ledger.connection import stored_time
from shell.ledger.moves import asked


class IntentMoved(Exception):
    """A compare-and-set found the intent no longer in the state it was decided from."""


@dataclass(frozen=True, slots=True)
class IntentRow:
    """One outbox row, as the sender and a person see it."""

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


_COLUMNS = (
    "id, intent_key, kind, state, event_id, task_id, attempt_id, occurrence, bucket_id, message_kind,"
    " recording_id, body, created_at, not_before, sending_at, finished_at, receipt_id, note,"
    " resolved_by, reconcile_failures, reconcile_at, retrying_since"
)


def _row(values: Sequence[Any]) -> IntentRow:
    """An outbox row as selected by ``_COLUMNS``: SQLite's own types (the columns' CHECKs hold
    them), read as they come; the sender makes one a claim. Its words become the enums' members
    by a look-up of each enum's own table (a call of the enum costs several times more)."""
    (
        identifier, key, kind, state, event_id, task_id, attempt_id, occurrence, bucket_id, message_kind,
        recording_id, body, created_at, not_before, sending_at, finished_at, receipt_id, note, resolved_by,
        failures, reconcile_at, retrying_since,
    ) = values  # fmt: skip
    return IntentRow(
        identifier, key, _KIND[kind], _STATE[state], event_id, task_id, attempt_id, occurrence,
        Destination(_MESSAGE_KIND[message_kind], bucket_id, recording_id), body, parse_timestamp(created_at),
        parse_timestamp(not_before), None if sending_at is None else parse_timestamp(sending_at),
        None if finished_at is None else parse_timestamp(finished_at), receipt_id, note, resolved_by, failures,
        stored_time(reconcile_at), stored_time(retrying_since),
    )  # fmt: skip


_KIND: dict[str, IntentKind] = {str(kind): kind for kind in IntentKind}
_STATE: dict[str, IntentState] = {str(state): state for state in IntentState}
_MESSAGE_KIND: dict[str, MessageKind] = {str(kind): kind for kind in MessageKind}


# -- writing intents (the transitions that call for them) -----------------------------------


def write_intents(connection: sqlite3.Connection, intents: Iterable[Intent], now: datetime) -> int:
    """Insert each intent unless its key exists; the number actually written."""
    written = 0
    for intent in intents:
        cursor = connection.execute(
            "INSERT INTO outbox (intent_key, kind, event_id, task_id, attempt_id, occurrence, bucket_id,"
            " message_kind, recording_id, body, created_at, not_before)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (intent_key) DO NOTHING",
            (
                intent.key,
                str(intent.kind),
                intent.event_id,
                intent.task_id,
                intent.attempt_id,
                intent.occurrence,
                intent.destination.bucket_id,
                str(intent.destination.kind),
                intent.destination.recording_id,
                intent.body,
                format_timestamp(now),
                format_timestamp(intent.not_before),
            ),
        )
        written += cursor.rowcount
    return written


# -- reading ------------------------------------------------------------------------------


def intent(connection: sqlite3.Connection, intent_id: int) -> IntentRow | None:
    found = connection.execute(f"SELECT {_COLUMNS} FROM outbox WHERE id = ?", (intent_id,)).fetchone()
    return None if found is None else _row(found)


def intents_in(connection: sqlite3.Connection, states: Sequence[IntentState]) -> list[IntentRow]:
    marks = ", ".join("?" for _ in states)
    rows = connection.execute(
        f"SELECT {_COLUMNS} FROM outbox WHERE state IN ({marks}) ORDER BY id", [str(s) for s in states]
    ).fetchall()
    return [_row(found) for found in rows]


def _stamp(now: datetime) -> str:
    """``format_timestamp``, kept for the last moment asked: a claim's ``sending_at`` is the
    ``now`` its ``due_now`` read by, the same object, formatted once. Known by identity, not by
    hash: hashing an aware datetime cost more than the look-up saved (``bin/bench outbox``).
    The pair is replaced whole, so another thread reads an old pair or a new one, never half."""
    moment, text = _LAST_STAMP[0]
    if moment is not now:
        text = format_timestamp(now)
        _LAST_STAMP[0] = (now, text)
    return text


_LAST_STAMP: list[tuple[datetime | None, str]] = [(None, "")]  # one pair, replaced whole


def due_for_reconciliation(
    connection: sqlite3.Connection, sent_before: datetime, now: datetime, limit: int | None
) -> list[IntentRow]:
    """Sending intents older than ``sent_before`` whose backoff has passed, oldest first."""
    rows = connection.execute(
        f"SELECT {_COLUMNS} FROM outbox WHERE state = 'sending' AND sending_at <= ?"
        " AND (reconcile_at IS NULL OR reconcile_at <= ?) ORDER BY sending_at, id LIMIT ?",
        (format_timestamp(sent_before), format_timestamp(now), -1 if limit is None else limit),
    ).fetchall()
    return [_row(found) for found in rows]


def receipts_owned_by_others(
    connection: sqlite3.Connection, intent_id: int, kind: MessageKind, candidates: Iterable[int]
) -> frozenset[int]:
    """Which of ``candidates`` are already another intent's receipt of the same message kind."""
    owned: set[int] = set()
    wanted = sorted(set(candidates))
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        owned.update(
            row[0]
            for row in connection.execute(
                "SELECT receipt_id FROM outbox WHERE message_kind = ? AND id <> ?"
                f" AND receipt_id IN ({marks})",
                [str(kind), intent_id, *chunk],
            )
        )
    return frozenset(owned)


def without_receipt_at(connection: sqlite3.Connection, row: IntentRow) -> list[Neighbour]:
    """Every intent at ``row``'s destination (kind and recording) that holds no receipt; which of
    them are rivals is ``core.adoption.rivals``'s rule."""
    return [
        Neighbour(intent_id=identifier, state=state, body=body)
        for identifier, state, body in connection.execute(
            "SELECT id, state, body FROM outbox WHERE message_kind = ? AND recording_id = ? AND receipt_id IS NULL",
            [str(row.destination.kind), row.destination.recording_id],
        )
    ]


# -- moving intents ------------------------------------------------------------------------


def _move(
    connection: sqlite3.Connection,
    intent_id: int,
    expected: IntentState,
    sql: str,
    values: Sequence[object],
    *,
    to: IntentState | None,
    note: str = "",
) -> None:
    """Compare-and-set from ``expected``; a move ``to`` a state is asked of ``core.edges`` first (rule 5)."""
    if to is None:
        cursor = connection.execute(_update(sql, False), [*values, intent_id, _WORD[expected]])
    else:
        cursor = connection.execute(_update(sql, True), [_moved(expected, to, note), *values, intent_id, _WORD[expected]])
    if cursor.rowcount != 1:
        raise IntentMoved(f"intent {intent_id} is no longer {expected}")


@cache
def _moved(expected: IntentState, to: IntentState, note: str) -> str:
    """The state ``core.edges`` lets the connector write for this move (rule 5), as the ledger's
    word, kept: its table is a constant, so an answer once given stands; a refusal raises, and is
    never kept."""
    return _WORD[asked(INTENT_EDGES, expected, to, Actor.automatic, note)]


_WORD: dict[IntentState, str] = {state: str(state) for state in IntentState}
"""Each state as the plain word bound into a statement: ``sqlite3`` asks a ``str`` subclass (an
enum member) how to adapt itself before it binds it, which cost a move more than its lookup here
(``bin/bench outbox``)."""


@cache
def _update(assignments: str, moving: bool) -> str:
    """The compare-and-set of a move: ``moving`` sets the state first (``state = ?``)."""
    return f"UPDATE outbox SET {'state = ?, ' if moving else ''}{assignments} WHERE id = ? AND state = ?"


def claim(connection: sqlite3.Connection, intent_id: int, now: datetime) -> None:
    _move(
        connection,
        intent_id,
        IntentState.pending,
        "sending_at = ?",
        [_stamp(now)],
        to=IntentState.sending,
    )


def cancel(
    connection: sqlite3.Connection, intent_id: int, expected: IntentState, note: str, now: datetime
) -> None:
    _move(
        connection,
        intent_id,
        expected,
        "note = ?, finished_at = ?",
        [note, format_timestamp(now)],
        to=IntentState.canceled,
    )


def record_receipt(
    connection: sqlite3.Connection, intent_id: int, receipt_id: int, note: str, now: datetime
) -> None:
    _move(
        connection,
        intent_id,
        IntentState.sending,
        "receipt_id = ?, note = ?, finished_at = ?",
        [receipt_id, note, format_timestamp(now)],
        to=IntentState.sent,
    )


def defer(
    connection: sqlite3.Connection, intent_id: int, reconcile_at: datetime, failures: int | None = None
) -> None:
    """Leave a sending intent for reconciliation at ``reconcile_at``: no move, the state stays."""
    assignments = _counting("reconcile_at = ?", [format_timestamp(reconcile_at)], failures)
    _move(connection, intent_id, IntentState.sending, *assignments, to=None)


def retry(
    connection: sqlite3.Connection, intent_id: int, note: str, due_at: datetime, since: datetime
) -> None:
    """Back to pending a sending intent whose request provably never reached Basecamp, due at
    ``due_at``, with ``note`` its cause; ``since`` starts or keeps its run of retries."""
    _move(
        connection,
        intent_id,
        IntentState.sending,
        "note = ?, not_before = ?, retrying_since = ?, sending_at = NULL",
        [note, format_timestamp(due_at), format_timestamp(since)],
        to=IntentState.pending,
        note=note,
    )


def make_indeterminate(
    connection: sqlite3.Connection, intent_id: int, note: str, now: datetime, failures: int | None = None
) -> None:
    assignments = _counting("note = ?, finished_at = ?", [note, format_timestamp(now)], failures)
    _move(connection, intent_id, IntentState.sending, *assignments, to=IntentState.indeterminate)


def _counting(sql: str, values: list[object], failures: int | None) -> tuple[str, list[object]]:
    """``sql`` and its ``values``, with the reconciliation's failure count set too when given."""
    return (sql, values) if failures is None else (f"{sql}, reconcile_failures = ?", [*values, failures])


def resolve(connection: sqlite3.Connection, row: IntentRow, move: Move) -> int:
    """A person's ``move`` (``core.resolution``) written onto ``row`` by compare-and-set on the
    state and note it was decided from; the row count. The ledger's triggers and its receipt
    index raise ``sqlite3.IntegrityError`` for the caller to word (``shell.ledger.resolution``)."""
    assignments = ["state = ?", "note = ?", "resolved_by = ?"]
    values: list[object] = [str(move.state), move.note, move.resolved_by]
    if move.receipt_id is not None:
        assignments.append("receipt_id = ?")
        values.append(move.receipt_id)
    if move.reset_reconciliation:
        assignments += [
            "sending_at = NULL", "finished_at = NULL", "reconcile_failures = 0", "reconcile_at = NULL",
            "retrying_since = NULL",
        ]
    elif move.finished_at is not None:
        assignments.append("finished_at = ?")
        values.append(format_timestamp(move.finished_at))
    if move.not_before is not None:
        assignments.append("not_before = ?")
        values.append(format_timestamp(move.not_before))
    return connection.execute(
        f"UPDATE outbox SET {', '.join(assignments)} WHERE id = ? AND state = ? AND note = ?",
        [*values, row.id, str(row.state), row.note],
    ).rowcount


def lifecycle_at(connection: sqlite3.Connection, destination: Destination) -> tuple[frozenset[int], list[str]]:
    """The receipts of every intent at ``destination`` and the bodies of every non-canceled one
    there (the adopted-reply rule's lifecycle filter: a canceled intent's message provably does
    not exist)."""
    receipts: set[int] = set()
    bodies: list[str] = []
    for state, receipt_id, body in connection.execute(
        "SELECT state, receipt_id, body FROM outbox WHERE message_kind = ? AND recording_id = ?",
        [str(destination.kind), destination.recording_id],
    ):
        if receipt_id is not None:
            receipts.add(int(receipt_id))
        if state != IntentState.canceled:
            bodies.append(str(body))
    return frozenset(receipts), bodies


def pending_guard(connection: sqlite3.Connection, event_id: int) -> int | None:
    """The id of record ``event_id``'s guard acknowledgement while it is still pending, or None."""
    found = connection.execute(
        "SELECT id FROM outbox WHERE intent_key = ? AND state = 'pending'", (guard_key(event_id),)
    ).fetchone()
    return None if found is None else int(found[0])
