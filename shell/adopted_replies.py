"""Before a task settles: list the replies the adopted-reply rule reads (spec 3.6).

Rules:
1. ``ReplyAdopter.list_replies(task_id)`` runs before the settlement's transaction, outside any
   transaction: for each row that ``core.adopted_reply.may_become_candidate``, it lists the
   row's reply destination since its delivery with the client's exhaustive listing (bounded by
   ``ADOPTION_SCAN_TIMEOUT``). The settlement's own transaction then adopts from these listings
   (``shell.ledger.deliveries.adopt_listed``) before it writes the completion notice, so the
   notice asks a person only about what adoption left (``core.adopted_reply`` rule 4).
2. A listing that fails (an error, or cut short) leaves its row out: nothing is adopted for it,
   and it is logged. A missing adoption costs a person a look; a wrong one would hide a doubled
   reply.
3. It never raises for Basecamp; a ledger failure is logged and lists nothing.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Protocol

from core.adopted_reply import ListedReplies, may_become_candidate
from core.destinations import Destination, ListedMessage
from shell.basecamp.errors import ListingFailed
from shell.ledger import deliveries
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
    """Lists the replies of tasks about to settle, for one ledger."""

    def __init__(self, ledger: Ledger, lister: ReplyLister, agent_id: int) -> None:
        self._ledger = ledger
        self._lister = lister
        self._agent_id = agent_id

    def list_replies(self, task_id: int) -> ListedReplies:
        """Rule 1: the listings of ``task_id``'s rows that may become candidates, by event id."""
        listed: dict[int, tuple[ListedMessage, ...]] = {}
        try:
            with self._ledger.read() as connection:
                rows = deliveries.settled_rows(connection, task_id, settled=False)
        except LedgerError as error:
            log.error("adoption task=%d: the ledger failed: %s", task_id, error)
            rows = []
        for row, destination in rows:
            if not may_become_candidate(row) or destination is None or row.delivered_at is None:
                continue
            bound = self._ledger.clock.monotonic() + ADOPTION_SCAN_TIMEOUT
            try:
                found = self._lister.list(destination, row.delivered_at, self._agent_id, bound)
            except ListingFailed as error:
                log.info("adoption task=%d event=%d: the listing failed: %s", task_id, row.event_id, error)
                continue
            listed[row.event_id] = tuple(found)
        return ListedReplies(self._agent_id, listed)
