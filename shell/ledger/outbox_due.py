"""What the outbox's claim reads first: whether the hold stands, and the pending intent to send
next, as a row of only the columns the send path needs (``ClaimRow``).

Rules:
1. Like ``shell.ledger.outbox``, every function runs inside a transaction its caller opened,
   and the claim's write is made in the transaction this read was made in.
2. The heads of every kind are asked in one statement, with the hold inside it (``_heads``); the
   order among due kinds is ``core.urgency``'s, asked only when more than one kind is due.
3. A head carries only ``_CLAIM_COLUMNS``: each column fetched costs (``bin/bench outbox``); a
   whole row (``shell.ledger.outbox.IntentRow``) is read where a person or a reconciliation
   needs one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence, Set
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any

from core.destinations import Destination
from core.intents import IntentKind
from core.timestamps import parse_timestamp
from core.urgency import Due, next_to_send
from shell.ledger.connection import stored_time
from shell.ledger.outbox import _KIND, _MESSAGE_KIND, _stamp


@dataclass(frozen=True, slots=True)
class ClaimRow:
    """A pending outbox row as the claim and its request read it: only the columns the send path
    needs (``_CLAIM_COLUMNS``; each column fetched costs, ``bin/bench outbox``)."""

    id: int
    key: str
    kind: IntentKind
    event_id: int | None
    task_id: int | None
    attempt_id: str | None
    destination: Destination
    body: str
    retrying_since: datetime | None


_CLAIM_COLUMNS = (
    "id, intent_key, kind, event_id, task_id, attempt_id, bucket_id, message_kind, recording_id, body,"
    " not_before, retrying_since"
)
_CLAIM_NOT_BEFORE = 10  # not_before's place in ``_CLAIM_COLUMNS``: urgency orders the heads by it


def _claim_row(values: Sequence[Any]) -> ClaimRow:
    """A head as selected by ``_CLAIM_COLUMNS``, read as ``_row`` reads a whole row."""
    identifier, key, kind, event_id, task_id, attempt_id, bucket_id, message_kind, recording_id, body, _, since = (
        values
    )
    return ClaimRow(
        identifier, key, _KIND[kind], event_id, task_id, attempt_id,
        Destination(_MESSAGE_KIND[message_kind], bucket_id, recording_id), body, stored_time(since),
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class DueNow:
    """What a claim reads first, in one statement: whether the hold stands, and the pending
    intent to send next (None when none is due)."""

    held: bool
    row: ClaimRow | None


def due_now(
    connection: sqlite3.Connection,
    now: datetime,
    passed_over: Set[int],
    leaving: Set[IntentKind] = frozenset(),
) -> DueNow:
    """Whether the hold stands, and the pending intent to send next (``core.urgency``) among
    those due by ``now``: the oldest due of each kind not in ``leaving`` (those stay pending,
    untouched), none this flush has already claimed.

    The heads of every kind are asked in one statement (``_heads``: one seek of
    ``outbox_due_by_kind`` each, one round trip), which finds none while the hold stands; only
    then is the hold asked. Only a head this flush already claimed (a person put it back to
    pending mid-flush) is asked again, past those: excluding every claimed id on every call made
    a long flush quadratic. Only the chosen head is made a row; the order of kinds is asked only
    when more than one kind is due.
    """
    due_by = _stamp(now)
    heads = [
        head
        for found in connection.execute(_heads(frozenset(leaving)), (due_by,))
        for head in [found if found[0] not in passed_over else _oldest_due_past(connection, due_by, found[2], passed_over)]
        if head is not None
    ]
    if not heads:
        return DueNow(connection.execute("SELECT 1 FROM hold_marker").fetchone() is not None, None)
    if len(heads) == 1:  # one kind due: its head goes next, whatever the order of kinds
        return DueNow(False, _claim_row(heads[0]))
    candidates = (Due(head[0], _KIND[head[2]], parse_timestamp(head[_CLAIM_NOT_BEFORE])) for head in heads)
    chosen = next_to_send(candidates, now)
    return DueNow(
        False, None if chosen is None else _claim_row(next(head for head in heads if head[0] == chosen.id))
    )


@cache
def _heads(leaving: frozenset[IntentKind]) -> str:
    """One statement asking the oldest pending intent due by ``?1`` of each kind not in
    ``leaving`` (the kinds are the enum's own words, written into the statement): none while the
    hold stands."""
    heads = [
        f"SELECT * FROM (SELECT {_CLAIM_COLUMNS} FROM outbox WHERE state = 'pending' AND kind = '{kind}'"
        " AND not_before <= ?1 AND NOT EXISTS (SELECT 1 FROM hold_marker) ORDER BY not_before, id LIMIT 1)"
        for kind in IntentKind
        if kind not in leaving
    ]
    return " UNION ALL ".join(heads) if heads else f"SELECT {_CLAIM_COLUMNS} FROM outbox WHERE ?1 AND 0"


def _oldest_due_past(
    connection: sqlite3.Connection, due_by: str, kind: object, passed_over: Set[int]
) -> Sequence[Any] | None:
    """The oldest pending intent of ``kind`` due by ``due_by``, past those this flush claimed."""
    skipped = sorted(passed_over)
    marks = ", ".join("?" for _ in skipped)
    return connection.execute(  # type: ignore[no-any-return]
        f"SELECT {_CLAIM_COLUMNS} FROM outbox WHERE state = 'pending' AND kind = ? AND not_before <= ?"
        f" AND id NOT IN ({marks}) ORDER BY not_before, id LIMIT 1",
        [str(kind), due_by, *skipped],
    ).fetchone()

