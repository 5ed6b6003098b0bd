"""What the outbox's claim reads before it decides: the snapshot its kind's row names.

``core.message_kinds`` says, for each kind, which snapshot its claim reads (``ClaimNeeds``) and
the rule that decides from it; ``READS`` holds the one reader of each snapshot, run in the
claim's own transaction, so the decision and its write see one ledger. A new kind names a
snapshot already read and needs nothing here; only a new ``ClaimNeeds`` needs a reader.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from core.edges import GuardState
from core.message_kinds import KINDS, ClaimFacts, ClaimNeeds
from shell.ledger import snapshots
from shell.ledger.outbox_due import ClaimRow

Reader = Callable[[sqlite3.Connection, ClaimRow], ClaimFacts]


def _event(connection: sqlite3.Connection, row: ClaimRow) -> ClaimFacts:
    if row.event_id is None:
        return ClaimFacts()
    record, task_events = snapshots.record_and_task_events(connection, row.event_id)
    return ClaimFacts(record=record, task_events=task_events)


def _attempt(connection: sqlite3.Connection, row: ClaimRow) -> ClaimFacts:
    found = None if row.attempt_id is None else snapshots.attempt(connection, row.attempt_id)
    task_rows = [] if found is None else snapshots.task_events_of_task(connection, found.task_id)
    return ClaimFacts(attempt=found, task_events=task_rows)


def _nothing(connection: sqlite3.Connection, row: ClaimRow) -> ClaimFacts:
    return ClaimFacts()


READS: dict[ClaimNeeds, Reader] = {
    ClaimNeeds.event: _event,
    ClaimNeeds.attempt: _attempt,
    ClaimNeeds.nothing: _nothing,
}


def claim_facts(connection: sqlite3.Connection, row: ClaimRow) -> ClaimFacts:
    """The snapshot ``row``'s kind's claim reads, in the caller's transaction."""
    return READS[KINDS[row.kind].needs](connection, row)


def any_armed(facts: ClaimFacts) -> bool:
    """Whether the snapshot a guard's claim read -- every task row of its event, in the claim's
    transaction -- holds an armed row: with none, marking them fired has nothing to mark, and
    its statement is not run (``bin/bench outbox``)."""
    return any(found.guard is GuardState.armed for found in facts.task_events)
