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
4. A head whose kind's claim reads the event (``ClaimNeeds.event``) brings that snapshot in the
   same statement, only the columns the claim rules read (``snapshots.CLAIM_EVENT_COLUMNS``: the
   record's, and each task row's of the event), so a claim is one read, not two, and decides
   from what its head was read with (``bin/bench outbox``). Other kinds' heads bring NULLs
   there; their claim reads what it needs itself (``shell.outbox_claims``).
5. ``ClaimRow`` and ``DueNow`` are named tuples: immutable as a frozen dataclass is, and made in
   one call, where a frozen dataclass sets each field by its own call (``bin/bench outbox``: the
   send path makes one of each an intent).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence, Set
from datetime import datetime
from functools import cache
from typing import Any, NamedTuple

from core.destinations import Destination
from core.intents import IntentKind
from core.message_kinds import KINDS, ClaimFacts, ClaimNeeds
from core.timestamps import parse_timestamp
from core.urgency import Due, next_to_send
from shell.ledger import snapshots
from shell.ledger.connection import stored_time
from shell.ledger.outbox import _KIND, _MESSAGE_KIND, _stamp


class ClaimRow(NamedTuple):
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
_EVENT_AT = _CLAIM_COLUMNS.count(",") + 1  # where a head's snapshot of its event begins (rule 4)
_NO_EVENT = ", ".join(["NULL"] * snapshots.CLAIM_EVENT_WIDTH)


def _claim_row(values: Sequence[Any]) -> ClaimRow:
    """A head as selected by ``_CLAIM_COLUMNS``, read as ``_row`` reads a whole row."""
    identifier, key, kind, event_id, task_id, attempt_id, bucket_id, message_kind, recording_id, body, _, since = (
        values[:_EVENT_AT]
    )
    return ClaimRow(
        identifier, key, _KIND[kind], event_id, task_id, attempt_id,
        Destination(_MESSAGE_KIND[message_kind], bucket_id, recording_id), body, stored_time(since),
    )  # fmt: skip


class DueNow(NamedTuple):
    """What a claim reads first, in one statement: whether the hold stands, the pending intent to
    send next (None when none is due), and, when its kind's claim reads the event, that snapshot
    (rule 4; else None)."""

    held: bool
    row: ClaimRow | None
    facts: ClaimFacts | None = None


Head = list[Sequence[Any]]  # the rows a head's statement answered: one a task row of its event


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
    answered: dict[int, Head] = {}
    for found in connection.execute(_heads(frozenset(leaving)), (due_by,)):
        if found[0] in answered:
            answered[found[0]].append(found)  # another task row of the head's event
        else:
            answered[found[0]] = [found]
    heads = [
        head
        for identifier, found in answered.items()
        for head in [found if identifier not in passed_over else _oldest_due_past(connection, due_by, found[0][2], passed_over)]
        if head
    ]
    if not heads:
        return DueNow(connection.execute("SELECT 1 FROM hold_marker").fetchone() is not None, None)
    if len(heads) == 1:  # one kind due: its head goes next, whatever the order of kinds
        return _due(heads[0])
    candidates = (Due(head[0][0], _KIND[head[0][2]], parse_timestamp(head[0][_CLAIM_NOT_BEFORE])) for head in heads)
    chosen = next_to_send(candidates, now)
    return DueNow(False, None) if chosen is None else _due(next(head for head in heads if head[0][0] == chosen.id))


def _due(head: Head) -> DueNow:
    row = _claim_row(head[0])
    if KINDS[row.kind].needs is not ClaimNeeds.event:
        return DueNow(False, row)
    record, task_rows = snapshots.claim_event(head, _EVENT_AT)
    return DueNow(False, row, ClaimFacts(record, task_rows))


def _head(kind: IntentKind, condition: str) -> str:
    """The oldest pending intent of ``kind`` meeting ``condition``, with the snapshot of its event
    when its kind's claim reads it (rule 4)."""
    oldest = (
        f"SELECT {_CLAIM_COLUMNS} FROM outbox WHERE state = 'pending' AND kind = '{kind}' AND {condition}"
        " ORDER BY not_before, id LIMIT 1"
    )
    if KINDS[kind].needs is ClaimNeeds.event:
        join = snapshots.CLAIM_EVENT_JOIN.format(intent="h")
        return f"SELECT h.*, {snapshots.CLAIM_EVENT_COLUMNS} FROM ({oldest}) h {join}"
    return f"SELECT h.*, {_NO_EVENT} FROM ({oldest}) h"


@cache
def _heads(leaving: frozenset[IntentKind]) -> str:
    """One statement asking the oldest pending intent due by ``?1`` of each kind not in
    ``leaving`` (the kinds are the enum's own words, written into the statement): none while the
    hold stands."""
    heads = [
        _head(kind, "not_before <= ?1 AND NOT EXISTS (SELECT 1 FROM hold_marker)")
        for kind in IntentKind
        if kind not in leaving
    ]
    return " UNION ALL ".join(heads) if heads else f"SELECT {_CLAIM_COLUMNS}, {_NO_EVENT} FROM outbox WHERE ?1 AND 0"


def _oldest_due_past(connection: sqlite3.Connection, due_by: str, kind: object, passed_over: Set[int]) -> Head:
    """The oldest pending intent of ``kind`` due by ``due_by``, past those this flush claimed."""
    skipped = sorted(passed_over)
    marks = ", ".join("?" for _ in skipped)
    return connection.execute(
        _head(_KIND[str(kind)], f"not_before <= ? AND id NOT IN ({marks})"), [due_by, *skipped]
    ).fetchall()
