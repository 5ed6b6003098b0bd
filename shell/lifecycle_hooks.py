"""The hooks the owners of transitions call inside their own transaction.

Rules:
1. Each hook runs inside the caller's write transaction and never commits: the intent and
   the transition that calls for it commit or roll back together (invariant 1). A hook that
   fails raises, and the caller's transaction rolls back.
2. Each hook reads the snapshot it needs from the rows the transition just wrote, asks
   ``core.intents`` what is called for, and writes it with ``ON CONFLICT DO NOTHING``: one
   intent per thing answered for (invariant 2).
3. ``--shadow`` installs no hooks: a shadow ledger never has anything to send.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta

from core.edges import DeliveryState, RecordState
from core.intents import GUARD_DELAY, Intent, completion_intent, intents_for_verdict, still_running_intent
from core.settlement import SettledRow, read_back
from core.snapshots import EventOutcome
from shell.ledger import outbox as rows


class HookError(Exception):
    """A hook could not read what it answers for; the transition must roll back."""


@dataclass(frozen=True, slots=True)
class LifecycleHooks:
    """The hooks, with the timings a configuration may shorten (the demo does)."""

    guard_delay: timedelta = GUARD_DELAY

    def verdict_committed(self, connection: sqlite3.Connection, event_id: int, decided_at: datetime) -> int:
        """After a verdict is written: a guard for a request, a holding reply for no route."""
        record = rows.record(connection, event_id)
        if record is None:
            raise HookError(f"event {event_id} has no record")
        return rows.write_intents(
            connection, intents_for_verdict(record, decided_at, self.guard_delay), decided_at
        )

    def still_running(self, connection: sqlite3.Connection, attempt_id: str, now: datetime) -> Intent | None:
        """A still-running tick of a live attempt: count the occurrence, write its notice."""
        counted = connection.execute(
            "UPDATE attempts SET still_running = still_running + 1 WHERE id = ? AND state <> 'ended'",
            (attempt_id,),
        ).rowcount
        if counted != 1:
            return None
        occurrence, originating_event_id = connection.execute(
            "SELECT a.still_running, t.originating_event_id FROM attempts a JOIN tasks t ON t.id = a.task_id"
            " WHERE a.id = ?",
            (attempt_id,),
        ).fetchone()
        attempt = rows.attempt(connection, attempt_id)
        origin = None if originating_event_id is None else rows.record(connection, originating_event_id)
        if attempt is None or origin is None:
            raise HookError(f"attempt {attempt_id} has no task or no originating record")
        intent = still_running_intent(attempt, origin, occurrence, now)
        if intent is not None:
            rows.write_intents(connection, (intent,), now)
        return intent

    def attempt_ended(self, connection: sqlite3.Connection, attempt_id: str, now: datetime) -> Intent | None:
        """After an attempt's settlement: a completion notice when any event needs one."""
        attempt = rows.attempt(connection, attempt_id)
        if attempt is None or attempt.live:
            raise HookError(f"attempt {attempt_id} has not ended")
        (originating_event_id,) = connection.execute(
            "SELECT originating_event_id FROM tasks WHERE id = ?", (attempt.task_id,)
        ).fetchone()
        origin = None if originating_event_id is None else rows.record(connection, originating_event_id)
        if origin is None:
            raise HookError(f"task {attempt.task_id} has no originating record")
        settled = [
            read_back(
                SettledRow(
                    event_id=event_id,
                    delivery=DeliveryState(delivery),
                    outcome=EventOutcome(outcome),
                    reply_id=reply_id,
                    withdrawn=withdrawn_at is not None,
                    record_state=RecordState(state),
                    record_reason=reason,
                )
            )
            for event_id, delivery, outcome, reply_id, withdrawn_at, state, reason in connection.execute(
                "SELECT te.event_id, te.delivery, te.outcome, te.reply_id, te.withdrawn_at, e.state, e.reason"
                " FROM task_events te JOIN events e ON e.id = te.event_id WHERE te.task_id = ?"
                " ORDER BY te.event_id",
                (attempt.task_id,),
            )
        ]
        intent = completion_intent(attempt, settled, origin, now)
        if intent is not None:
            rows.write_intents(connection, (intent,), now)
        return intent
