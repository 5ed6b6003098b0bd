"""Intents put into each state the way the sender and the ledger's triggers put them there,
and what an in-process run of the CLI answered."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from core import notes
from core.edges import IntentState
from shell.ledger import outbox as rows
from shell.ledger.connection import Ledger
from tests.support.ledger_world import LedgerWorld


@dataclass
class Intents:
    """Puts guard intents into each state, through the ledger's own writes and triggers."""

    world: LedgerWorld
    _events: Iterator[int]

    @property
    def ledger(self) -> Ledger:
        return self.world.ledger

    def pending(self) -> int:
        event_id = next(self._events)
        self.world.request(event_id)
        with self.ledger.read() as connection:
            (intent_id,) = connection.execute(
                "SELECT id FROM outbox WHERE event_id = ? AND kind = 'guard_ack'", (event_id,)
            ).fetchone()
        return int(intent_id)

    def sending(self) -> int:
        intent_id = self.pending()
        with self.ledger.write() as connection:
            rows.claim(connection, intent_id, self.ledger.clock.now())
        return intent_id

    def indeterminate(self, failures: int | None = None, reconcile_in: float | None = None) -> int:
        intent_id = self.sending()
        now = self.ledger.clock.now()
        with self.ledger.write() as connection:
            if reconcile_in is not None:
                rows.defer(connection, intent_id, now + timedelta(seconds=reconcile_in))
            rows.make_indeterminate(connection, intent_id, notes.matching_messages(2), now, failures)
        return intent_id

    def refused(self) -> int:
        intent_id = self.sending()
        with self.ledger.write() as connection:
            rows.cancel(connection, intent_id, IntentState.sending, notes.REFUSED_NOTE, self.ledger.clock.now())
        return intent_id

    def sent(self, receipt_id: int) -> int:
        intent_id = self.sending()
        with self.ledger.write() as connection:
            rows.record_receipt(connection, intent_id, receipt_id, "", self.ledger.clock.now())
        return intent_id

    def canceled_by_get_dispatch(self) -> int:
        intent_id = self.pending()
        (event_id,) = self.row(intent_id, "event_id")
        task_id = self.world.task(event_id)
        assert self.world.get_dispatch(task_id, event_id) == "canceled"
        return intent_id

    def abandoned(self) -> int:
        intent_id = self.indeterminate()
        with self.ledger.write() as connection:
            connection.execute(
                "UPDATE outbox SET state = 'abandoned', note = ?, resolved_by = 'local:earlier' WHERE id = ?",
                (notes.RESOLVED_ABANDON, intent_id),
            )
        return intent_id

    def holding_reply(self) -> int:
        """A comment intent: a no-route record's holding reply, indeterminate."""
        event_id = next(self._events)
        self.world.seen(event_id)
        self.world.verdict(event_id, "blocked", "no_route")
        with self.ledger.read() as connection:
            (intent_id,) = connection.execute(
                "SELECT id FROM outbox WHERE event_id = ? AND kind = 'holding_reply'", (event_id,)
            ).fetchone()
        now = self.ledger.clock.now()
        with self.ledger.write() as connection:
            rows.claim(connection, intent_id, now)
            rows.make_indeterminate(connection, intent_id, notes.matching_messages(0), now)
        return int(intent_id)

    def row(self, intent_id: int, *columns: str) -> tuple[Any, ...]:
        with self.ledger.read() as connection:
            found = connection.execute(
                f"SELECT {', '.join(columns)} FROM outbox WHERE id = ?", (intent_id,)
            ).fetchone()
        return tuple(found)

    def whole(self, intent_id: int) -> rows.IntentRow:
        with self.ledger.read() as connection:
            found = rows.intent(connection, intent_id)
        assert found is not None
        return found


@dataclass(frozen=True)
class Ran:
    code: int
    out: str
    err: str

    @property
    def error_lines(self) -> list[str]:
        return self.err.splitlines()


Run = Callable[..., Ran]
