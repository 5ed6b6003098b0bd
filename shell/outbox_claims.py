"""What the outbox's claim reads before it decides: the snapshot its kind's row names.

``core.message_kinds`` says, for each kind, which snapshot its claim reads (``ClaimNeeds``) and
the rule that decides from it; ``READS`` holds the one reader of each snapshot, run in the
claim's own transaction, so the decision and its write see one ledger. The event's snapshot
comes with the head, in its statement (``shell.ledger.outbox_due`` rule 4): its reader reads
nothing more. A new kind names a snapshot already read and needs nothing here; only a new
``ClaimNeeds`` needs a reader.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from core.edges import GuardState
from core.message_kinds import KINDS, ClaimFacts, ClaimNeeds
from shell.ledger import snapshots
from shell.ledger.outbox_due import ClaimRow, DueNow

Reader = Callable[[sqlite3.Connection, ClaimRow, DueNow], ClaimFacts]


def _event(connection: sqlite3.Connection, row: ClaimRow, due: DueNow) -> ClaimFacts:
    """Read with the head (``shell.ledger.outbox_due`` rule 4)."""
    if due.facts is None:
        raise ValueError(f"intent {row.id} ({row.kind}) was read without its event's snapshot")
    return due.facts


def _attempt(connection: sqlite3.Connection, row: ClaimRow, due: DueNow) -> ClaimFacts:
    found = None if row.attempt_id is None else snapshots.attempt(connection, row.attempt_id)
    task_rows = [] if found is None else snapshots.task_events_of_task(connection, found.task_id)
    return ClaimFacts(attempt=found, task_events=task_rows)


def _nothing(connection: sqlite3.Connection, row: ClaimRow, due: DueNow) -> ClaimFacts:
    return ClaimFacts()


READS: dict[ClaimNeeds, Reader] = {
    ClaimNeeds.event: _event,
    ClaimNeeds.attempt: _attempt,
    ClaimNeeds.nothing: _nothing,
}


def claim_facts(connection: sqlite3.Connection, row: ClaimRow, due: DueNow) -> ClaimFacts:
    """The snapshot ``row``'s kind's claim reads, in the caller's transaction (``due``: what
    ``row`` was read with)."""
    return READS[KINDS[row.kind].needs](connection, row, due)


def any_armed(facts: ClaimFacts) -> bool:
    """Whether the snapshot a guard's claim read -- every task row of its event, in the claim's
    transaction -- holds an armed row: with none, marking them fired has nothing to mark, and
    its statement is not run (``bin/bench outbox``)."""
    return any(found.guard is GuardState.armed for found in facts.task_events)
