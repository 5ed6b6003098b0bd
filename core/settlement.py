"""How an attempt's settlement reads back from the rows it wrote.

The completion notice is rendered from the ledger, not from what the settling code meant to
write: this turns one task row and its record, as they stand after the settlement, into the
``SettledEvent`` the notice reads.

Rules:
1. A row withdrawn for its one automatic retry is ``withdrawn``: no line.
2. A record left ``blocked`` for ``spawn_failed`` is ``blocked_again``, read from the record.
3. A row never exposed (delivery ``admitted``) was ``returned`` to wait for a task of its own.
4. A row with a reported outcome (``succeeded`` or ``failed``) keeps it: ``reported``.
5. Anything else exposed ends ``unknown``: the worker may have acted on it.
6. An exposed row whose record is ``admitted`` after the settlement was ``redispatched`` by a
   person while the task ran (``core.decisions`` rule 6): no line asks what a person decided.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.edges import DeliveryState, RecordState
from core.snapshots import SettledEvent, Settlement
from core.states import EventOutcome

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
    adopted_reply_id: int | None = None
    reply_on_its_way: bool = False  # a worker's reply the outbox posts for it (not canceled)


def read_back(row: SettledRow) -> SettledEvent:
    """The settled event the completion notice reads for ``row``."""
    if row.record_state == RecordState.blocked and row.record_reason == SPAWN_FAILED:
        settlement = Settlement.blocked_again
    elif row.withdrawn:
        settlement = Settlement.withdrawn
    elif row.delivery == DeliveryState.admitted:
        settlement = Settlement.returned
    elif row.record_state == RecordState.admitted:
        settlement = Settlement.redispatched
    elif row.outcome in (EventOutcome.succeeded, EventOutcome.failed):
        settlement = Settlement.reported
    else:
        settlement = Settlement.unknown
    outcome = row.outcome if settlement is Settlement.reported else EventOutcome.unknown
    return SettledEvent(
        row.event_id, outcome, row.reply_id, settlement, row.adopted_reply_id, row.reply_on_its_way
    )


# -- the settlement itself ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LiveRow:
    """One live row of the task whose attempt is ending, as the settlement finds it."""

    event_id: int
    delivery: DeliveryState
    exposed_by_this_attempt: bool
    pulled: bool
    withdrawn_before: bool  # the event already used its one automatic retry, on an earlier task
    record_state: RecordState


@dataclass(frozen=True, slots=True)
class RowSettlement:
    """What the settlement writes for one row: its settlement, and the record's new state."""

    event_id: int
    settlement: Settlement
    record_to: RecordState | None  # None: the record stays where it is
    record_reason: str = ""


def settle(rows: tuple[LiveRow, ...] | list[LiveRow], spawn_failed: bool) -> tuple[RowSettlement, ...]:
    """How an attempt's end settles each live row of its task: the write side of the module's
    rules. A reported row stands (rule 4); one never pulled nor exposed is returned (rule 3: a
    pull means a worker saw it, whatever its delivery says); a launch exposure no worker pulled,
    on a proven spawn failure, is withdrawn for its one retry, or blocked again once used (rules
    1-2); anything else exposed ends unknown, record completed (rule 5). A record a person
    already moved is settled where it was put."""
    settled = []
    for row in rows:
        dispatched = row.record_state == RecordState.dispatched
        if row.delivery == DeliveryState.completed:
            settled.append(RowSettlement(row.event_id, Settlement.reported, None))
        elif row.delivery == DeliveryState.admitted and not row.pulled:
            settled.append(
                RowSettlement(row.event_id, Settlement.returned, RecordState.admitted if dispatched else None)
            )
        elif (
            spawn_failed
            and row.exposed_by_this_attempt
            and not row.pulled
            and row.delivery == DeliveryState.exposed
        ):
            if row.withdrawn_before:
                settled.append(
                    RowSettlement(
                        row.event_id,
                        Settlement.blocked_again,
                        RecordState.blocked if dispatched else None,
                        SPAWN_FAILED,
                    )
                )
            else:
                settled.append(
                    RowSettlement(
                        row.event_id, Settlement.withdrawn, RecordState.admitted if dispatched else None
                    )
                )
        else:
            settled.append(
                RowSettlement(row.event_id, Settlement.unknown, RecordState.completed if dispatched else None)
            )
    return tuple(settled)


# -- the plan ``shell.ledger.tasks.end_attempt`` applies ----------------------------------------


@dataclass(frozen=True, slots=True)
class RowStep:
    """One row's writes in a settlement's plan, in the state the settlement found it."""

    event_id: int
    delivery: DeliveryState  # as found
    complete_delivery: bool  # exposed or delivered, unreported: completed, outcome unknown
    withdraw: bool  # the row is withdrawn (its one automatic retry, or blocked again)
    record_to: RecordState | None  # None: the record stays where it is
    record_reason: str = ""


@dataclass(frozen=True, slots=True)
class SettlementPlan:
    """An attempt's settlement as writes, in their order: ``before`` the task is superseded (the
    ``unknown`` rows), then ``after`` it (the rows withdrawn, blocked again or returned)."""

    settled: tuple[RowSettlement, ...]
    before: tuple[RowStep, ...]
    after: tuple[RowStep, ...]


_AFTER_SUPERSESSION = frozenset({Settlement.withdrawn, Settlement.blocked_again, Settlement.returned})


def settlement_plan(rows: tuple[LiveRow, ...] | list[LiveRow], spawn_failed: bool) -> SettlementPlan:
    """The writes ``settle`` calls for: an unknown row's exposed or delivered delivery is
    completed and its record moved before the supersession; a withdrawn or blocked-again row is
    withdrawn, and its record (and a returned row's) moved, after it; a reported row writes
    nothing."""
    settled = settle(rows, spawn_failed)
    delivery_of = {row.event_id: row.delivery for row in rows}

    def step(decision: RowSettlement) -> RowStep:
        delivery = delivery_of[decision.event_id]
        unknown = decision.settlement is Settlement.unknown
        return RowStep(
            decision.event_id,
            delivery,
            complete_delivery=unknown and delivery in (DeliveryState.exposed, DeliveryState.delivered),
            withdraw=decision.settlement in (Settlement.withdrawn, Settlement.blocked_again),
            record_to=decision.record_to,
            record_reason=decision.record_reason,
        )

    return SettlementPlan(
        settled,
        before=tuple(step(decision) for decision in settled if decision.settlement is Settlement.unknown),
        after=tuple(step(decision) for decision in settled if decision.settlement in _AFTER_SUPERSESSION),
    )
