"""The replies the adopted-reply rule reads, listed before a task settles.

Rules:
1. ``ReplyAdopter.list_replies(task_id, stop)`` runs outside any transaction: for each row that
   ``core.settlement.may_become_candidate`` it lists the reply destination since delivery,
   exhaustively, within ``ADOPTION_SCAN_TIMEOUT``, for the settlement to adopt from before its
   completion notice (the adopted-reply rule, ``core.settlement``).
2. A listing that fails or is cut short leaves its row out, logged: a missing adoption costs a
   person a look; a wrong one would hide a doubled reply.
3. ``stop`` is the shutdown's (in recovery the start's; None: nothing stops it): once set no
   further destination is listed and a listing under way is not waited for
   (``shell.stoppable``); the rest is "not known" (rule 2). So the attempt settles with its real
   reason within the shutdown's bound.
4. It never raises for Basecamp; a ledger failure is logged and lists nothing. Anything else is
   raised on the caller's thread."""

from __future__ import annotations

import logging
import threading
from datetime import datetime
from functools import partial
from typing import Protocol

from core.destinations import Destination, ListedMessage
from core.settlement import ListedReplies, may_become_candidate
from shell.basecamp.errors import ListingFailed
from shell.ledger import deliveries
from shell.ledger.connection import Ledger, LedgerError
from shell.stoppable import unless_stopped

log = logging.getLogger("connector.adoption")

ADOPTION_SCAN_TIMEOUT = 30.0
"""Seconds one listing of a reply destination may take."""


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

    def list_replies(self, task_id: int, stop: threading.Event | None) -> ListedReplies:
        """Rule 1: the listings of ``task_id``'s rows that may become candidates, by event id,
        as far as they got before ``stop`` (rule 3)."""
        listed: dict[int, tuple[ListedMessage, ...]] = {}
        try:
            with self._ledger.read() as connection:
                rows = deliveries.settled_rows(connection, task_id, settled=False)
        except LedgerError as error:
            log.error("adoption task=%d: the ledger failed: %s", task_id, error)
            rows = []
        wanted = [
            (row.event_id, destination, row.delivered_at)
            for row, destination in rows
            if may_become_candidate(row) and destination is not None and row.delivered_at is not None
        ]
        for event_id, destination, since in wanted:
            bound = self._ledger.clock.monotonic() + ADOPTION_SCAN_TIMEOUT
            try:
                listing = partial(self._lister.list, destination, since, self._agent_id, bound)
                found = unless_stopped(listing, stop, "adoption-listing")
            except ListingFailed as error:
                log.info("adoption task=%d event=%d: the listing failed: %s", task_id, event_id, error)
                continue
            if found is None:
                unknown = [event for event, _, _ in wanted if event not in listed]
                log.info(
                    "adoption task=%d: stopped by the shutdown; not known for event(s) %s",
                    task_id,
                    ",".join(map(str, unknown)),
                )
                break
            listed[event_id] = tuple(found)
        return ListedReplies(self._agent_id, listed)
