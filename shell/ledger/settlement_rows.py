"""A task's rows as an attempt's settlement reads them: live, before it is settled
(``core.settlement.settle``), and as the settlement left them, for the completion notice
(``core.settlement.read_back``). Reads only, in the caller's transaction; the writes are
``shell.ledger.tasks``' and ``deliveries``'."""

from __future__ import annotations

import sqlite3

from core.edges import DeliveryState, RecordState
from core.settlement import LiveRow, SettledRow
from core.states import EventOutcome


def live_rows(connection: sqlite3.Connection, task_id: int, attempt_id: str) -> list[LiveRow]:
    """Task ``task_id``'s live (unretired) rows as attempt ``attempt_id``'s end finds them."""
    return [
        LiveRow(
            event_id=event_id,
            delivery=DeliveryState(delivery),
            exposed_by_this_attempt=exposed_by == attempt_id,
            pulled=pulled_at is not None,
            withdrawn_before=bool(withdrawn_before),
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


def settled_rows(connection: sqlite3.Connection, task_id: int) -> list[SettledRow]:
    """Every row of task ``task_id`` as its settlement and adoption left it, with whether a worker's
    reply is on its way for it (an outbox intent not canceled)."""
    return [
        SettledRow(
            event_id=event_id,
            delivery=DeliveryState(delivery),
            outcome=EventOutcome(outcome),
            reply_id=reply_id,
            withdrawn=withdrawn_at is not None,
            record_state=RecordState(state),
            record_reason=reason,
            adopted_reply_id=adopted,
            reply_on_its_way=bool(on_its_way),
        )
        for event_id, delivery, outcome, reply_id, withdrawn_at, state, reason, adopted, on_its_way in (
            connection.execute(
                "SELECT te.event_id, te.delivery, te.outcome, te.reply_id, te.withdrawn_at, e.state, e.reason,"
                " te.adopted_reply_id, EXISTS (SELECT 1 FROM outbox o WHERE o.event_id = te.event_id"
                " AND o.task_id = te.task_id AND o.kind = 'worker_reply' AND o.state <> 'canceled')"
                " FROM task_events te JOIN events e ON e.id = te.event_id WHERE te.task_id = ?"
                " ORDER BY te.event_id",
                (task_id,),
            )
        )
    ]
