"""Loss repair: what the live lane did not hear is looked for by a walk of the feed of its own.

Rules:
1. A loss is recorded (``shell.ledger.losses``) when the live lane hears an overflow or a
   confirmed connection drops; it is due ``interval`` seconds later, past the poll lane's
   safety delay, so the feed serves what was lost.
2. A due loss is walked under its own cursor with the lane's filters, one transaction a page:
   events recorded (``shell.ledger.records.insert_seen``), then the cursor; new ids go to
   ``on_new``. The poll lane's checkpoint is never touched.
3. The walk ends as ``core.intake_status`` says: repaired, or past the loss's window unrecovered; else
   the loss stays open for a later call. A walk that cannot read the feed leaves it as it was.
4. Logs carry loss ids, event ids and counts; never a position or a query."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from datetime import timedelta

from core.feed import FeedFilters, FeedPage
from core.intake_status import Loss, LossState, settle_state, walk_done
from core.timestamps import format_timestamp, parse_timestamp
from shell.basecamp.errors import BasecampError
from shell.clock import Clock
from shell.intake.poll_lane import FeedReader
from shell.ledger.connection import Ledger, LedgerError
from shell.ledger.lanes import Lane
from shell.ledger.losses import advance_loss, bound_losses, due_losses, record_loss, settle_loss
from shell.ledger.records import insert_seen

log = logging.getLogger("connector.intake.repair")

DEFAULT_REPAIR_INTERVAL = timedelta(seconds=60)
DEFAULT_REPAIR_WINDOW = timedelta(minutes=10)
MAX_PAGES = 20


class Repair:
    """See the module's rules."""

    def __init__(
        self,
        ledger: Ledger,
        client: FeedReader,
        filters: FeedFilters,
        clock: Clock,
        on_new: Callable[[int], None],
        *,
        interval: timedelta = DEFAULT_REPAIR_INTERVAL,
        window: timedelta = DEFAULT_REPAIR_WINDOW,
    ) -> None:
        self._ledger = ledger
        self._client = client
        self._filters = filters
        self._clock = clock
        self._on_new = on_new
        self._interval = interval
        self._window = window

    # -- what the live lane tells (rule 1) -----------------------------------------------------------

    def lost(self, cause: str, after_id: int | None) -> None:
        now = self._clock.now()
        try:
            with self._ledger.write() as connection:
                found = record_loss(
                    connection,
                    cause,
                    after_id,
                    now=format_timestamp(now),
                    due_at=format_timestamp(now + self._interval),
                    window_ends_at=format_timestamp(now + self._window),
                )
        except (sqlite3.Error, LedgerError) as error:
            log.error("repair: a loss could not be recorded (%s)", type(error).__name__)
            return
        if found is not None:
            log.warning("repair: loss %d recorded (%s); walked from %s",
                        found, cause, format_timestamp(now + self._interval))  # fmt: skip

    def heard(self, event_id: int) -> None:
        try:
            with self._ledger.write() as connection:
                bound_losses(connection, event_id, format_timestamp(self._clock.now()))
        except (sqlite3.Error, LedgerError) as error:
            log.error("repair: a loss could not be bounded (%s)", type(error).__name__)

    # -- the walk (rules 2 and 3) ----------------------------------------------------------------

    def run_due(self, deadline: float) -> None:
        """Walk every due open loss once."""
        with self._ledger.read() as connection:
            due = due_losses(connection, format_timestamp(self._clock.now()))
        for loss in due:
            try:
                self._walk(loss, deadline)
            except BasecampError as error:
                log.info("repair: loss %d: the feed could not be read (%s); later", loss.id,
                         type(error).__name__)  # fmt: skip
            except (sqlite3.Error, LedgerError) as error:
                log.error("repair: loss %d could not be recorded (%s); later", loss.id, type(error).__name__)

    def _walk(self, loss: Loss, deadline: float) -> None:
        cursor, more, next_url, recovered = loss.cursor, True, None, 0
        for _ in range(MAX_PAGES):
            page = self._page(cursor, next_url, deadline)
            fresh, inside = self._record(loss, page)
            recovered += inside
            for event_id in fresh:
                self._on_new(event_id)
            cursor = max(cursor, page.last_id or cursor)
            next_url = page.next_url
            more = next_url is not None
            if not more or walk_done(loss, cursor, more) or self._clock.monotonic() >= deadline:
                break
        state = settle_state(walk_done(loss, cursor, more), self._clock.now(), loss)
        if state is LossState.open:
            return
        with self._ledger.write() as connection:
            settle_loss(connection, loss.id, state, format_timestamp(self._clock.now()))
        log.log(logging.INFO if state is LossState.repaired else logging.WARNING,
                "repair: loss %d %s (after event %d; %d recovered by this walk)",
                loss.id, state.value, loss.after_id, recovered)  # fmt: skip

    def _page(self, cursor: int, next_url: str | None, deadline: float) -> FeedPage:
        if next_url is not None:
            return self._client.poll_events(None, None, self._filters, deadline, next_url=next_url)
        return self._client.poll_events(cursor, None, self._filters, deadline)

    def _record(self, loss: Loss, page: FeedPage) -> tuple[tuple[int, ...], int]:
        """The ids newly recorded, and how many of them are inside the loss's stretch."""
        try:
            rows = [(event, format_timestamp(parse_timestamp(event.created_at))) for event in page.events]
        except ValueError:
            raise BasecampError("the feed served an event with an unreadable created_at") from None
        bound = loss.through_id
        with self._ledger.write() as connection:
            fresh = insert_seen(connection, rows, Lane.repair, format_timestamp(self._clock.now()))
            inside = sum(1 for event_id in fresh if bound is None or event_id <= bound)
            advance_loss(connection, loss.id, page.last_id or loss.cursor, inside)
        return fresh, inside
