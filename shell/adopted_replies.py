"""After a task settles: adopt the reply a worker wrote but never reported (spec 3.6).

Rules:
1. ``ReplyAdopter.adopt(task_id)`` runs after the settlement committed, outside it: for each
   row ``core.adopted_reply`` calls a candidate, it lists the reply destination with the client's
   exhaustive listing (bounded by ``ADOPTION_SCAN_TIMEOUT``), then, in one write transaction,
   re-reads the worker's and the lifecycle's messages there, asks ``core.adopted_reply`` for the
   one reply, and writes ``adopted_reply_id`` by compare-and-set. The outcome stays ``unknown``.
2. A listing that fails (an error, or cut short) adopts nothing for that row and is logged: a
   missing adoption costs a person a look; a wrong one would hide a doubled reply.
3. It never raises for Basecamp; a ledger failure is logged and adopts nothing more.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Protocol

from core.adopted_reply import Lifecycle, choose_reply, is_candidate, next_acknowledgement
from core.destinations import Destination, ListedMessage
from core.text import message_text
from shell.basecamp.errors import ListingFailed
from shell.ledger import deliveries, snapshots
from shell.ledger import outbox as intents
from shell.ledger.connection import Ledger, LedgerError

log = logging.getLogger("connector.adoption")

ADOPTION_SCAN_TIMEOUT = 30.0
"""Seconds one listing of a reply destination may take (spec 3.6's AdoptionScanTimeout)."""


class ReplyLister(Protocol):
    """The client's exhaustive listing of the agent's messages at a destination."""

    def list(
        self, destination: Destination, since: datetime, creator_id: int, deadline: float
    ) -> list[ListedMessage]: ...


class ReplyAdopter:
    """Adopts replies for settled tasks of one ledger."""

    def __init__(self, ledger: Ledger, lister: ReplyLister, agent_id: int) -> None:
        self._ledger = ledger
        self._lister = lister
        self._agent_id = agent_id

    def adopt(self, task_id: int) -> list[tuple[int, int]]:
        """Rule 1: the (event id, adopted reply id) pairs written for ``task_id``."""
        try:
            return self._adopt(task_id)
        except LedgerError as error:
            log.error("adoption task=%d: the ledger failed: %s", task_id, error)
            return []

    def _adopt(self, task_id: int) -> list[tuple[int, int]]:
        with self._ledger.read() as connection:
            rows = deliveries.settled_rows(connection, task_id)
        adopted: list[tuple[int, int]] = []
        for row, destination in rows:
            if not is_candidate(row) or destination is None or row.delivered_at is None:
                continue
            bound = self._ledger.clock.monotonic() + ADOPTION_SCAN_TIMEOUT
            try:
                listed = self._lister.list(destination, row.delivered_at, self._agent_id, bound)
            except ListingFailed as error:
                log.info("adoption task=%d event=%d: the listing failed: %s", task_id, row.event_id, error)
                continue
            with self._ledger.write() as connection:
                task_rows = [found for found, _ in deliveries.settled_rows(connection, task_id)]
                current = next((found for found in task_rows if found.event_id == row.event_id), None)
                if current is None:
                    continue
                listed_ids = [message.id for message in listed]
                worker = {
                    identifier
                    for found in snapshots.worker_task_events(connection, listed_ids)
                    for identifier in (found.ack_id, found.reply_id, found.adopted_reply_id)
                    if identifier is not None
                }
                receipts, bodies = intents.lifecycle_at(connection, destination)
                reply_id = choose_reply(
                    current,
                    listed,
                    agent_id=self._agent_id,
                    next_ack_at=next_acknowledgement(current, task_rows),
                    workers_own=frozenset(worker),
                    lifecycle=Lifecycle(receipts, frozenset(message_text(body) for body in bodies)),
                )
                if reply_id is None:
                    continue
                if deliveries.adopt_reply(connection, task_id, row.event_id, reply_id) != 1:
                    continue
            adopted.append((row.event_id, reply_id))
            log.info("adoption task=%d event=%d: adopted reply %d", task_id, row.event_id, reply_id)
        return adopted
