"""How an attempt's settlement reads back from the rows it wrote.

The completion notice is rendered from the ledger, not from what the settling code meant to
write: "what is posted is what the ledger says". This module turns one task row and its
record, as they stand after the settlement, into the ``SettledEvent`` the notice reads.

Rules:
1. A row withdrawn for its one automatic retry is ``withdrawn``: no line.
2. A record left ``blocked`` for ``spawn_failed`` is ``blocked_again``: the worker could not be
   started a second time. This is read from the record, not assumed.
3. A row never exposed (delivery ``admitted``) was ``returned`` to wait for a task of its own.
4. A row with a reported outcome (``succeeded`` or ``failed``) keeps it: ``reported``.
5. Anything else exposed ends ``unknown``: the worker may have acted on it.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.edges import DeliveryState, RecordState
from core.snapshots import EventOutcome, SettledEvent, Settlement

SPAWN_FAILED = "spawn_failed"


@dataclass(frozen=True, slots=True)
class SettledRow:
    """One task row and its record, as the settlement's transaction left them."""

    event_id: int
    delivery: DeliveryState
    outcome: EventOutcome
    reply_id: int | None
    withdrawn: bool
    record_state: RecordState
    record_reason: str


def read_back(row: SettledRow) -> SettledEvent:
    """The settled event the completion notice reads for ``row``."""
    if row.record_state == RecordState.blocked and row.record_reason == SPAWN_FAILED:
        settlement = Settlement.blocked_again
    elif row.withdrawn:
        settlement = Settlement.withdrawn
    elif row.delivery == DeliveryState.admitted:
        settlement = Settlement.returned
    elif row.outcome in (EventOutcome.succeeded, EventOutcome.failed):
        settlement = Settlement.reported
    else:
        settlement = Settlement.unknown
    outcome = row.outcome if settlement is Settlement.reported else EventOutcome.unknown
    return SettledEvent(row.event_id, outcome, row.reply_id, settlement)
