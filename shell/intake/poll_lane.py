"""Intake's poll lane: read the account event feed, write the pointer, hand over the id.

Rules:
1. The checkpoint is keyed by the filters' digest (``core.feed``): other filters, another
   lineage. A poll starts at the checkpoint's position; else after its ``last_served_id``; else
   at the configured ``start`` (None: ``now``; or an event id, ``0`` for all history). A lineage
   that never served an event resumes at ``start`` too, never at 0 by accident.
2. One page, one transaction: every event recorded ``seen`` (``shell.ledger.records.insert_seen``:
   one row per id, across lanes and restarts), then the page's position, never ahead of the
   records: a crash loses nothing, a restart reads nothing twice. Intake filters nothing.
3. ``next`` is followed (the client holds the same-origin rule) while present, before the
   deadline, under ``max_pages``; a ``next`` already followed this poll is ``IntakeFailed``.
4. 400 ``invalid_position`` and 409 drop the position and resume after the last served id; 410
   resumes at ``epoch_after_id``, recorded as a gap in the same transaction. At most two such a
   poll. A 400 for a filter is ``FeedFiltersRefused``: retrying will not help.
5. A page that cannot be read or recorded saves nothing and raises ``IntakeFailed`` with the
   reason, for the caller's backoff; pages committed before it stay.
6. The position and query string are never logged, raised or in a repr; logs carry counts, event
   ids and the filter digest's first 12 digits."""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass, field
from typing import Protocol

from core.feed import (
    EpochPassed,
    FeedEvent,
    FeedFilters,
    FeedPage,
    FiltersChanged,
    InvalidFilter,
    InvalidPosition,
)
from core.timestamps import format_timestamp, parse_timestamp
from shell.basecamp.errors import BasecampError, FeedRefused
from shell.clock import Clock
from shell.ledger import records
from shell.ledger.connection import Ledger, LedgerError
from shell.ledger.intake import Lane, record_gap

log = logging.getLogger("connector.intake")

DEFAULT_MAX_PAGES = 50
MAX_RECOVERIES = 2


class IntakeFailed(Exception):
    """A page could not be read or recorded; nothing of it was saved. Back off, retry."""


class FeedFiltersRefused(IntakeFailed):
    """The feed refused the filters (400 ``invalid_filter``); they must be fixed."""


class FeedReader(Protocol):
    """What intake needs of ``shell.basecamp.client.BasecampClient``."""

    def poll_events(
        self,
        since: int | None,
        position: str | None,
        filters: FeedFilters,
        deadline: float,
        *,
        next_url: str | None = None,
    ) -> FeedPage: ...


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """Where a lineage stands. ``position`` is '' when dropped; it never prints."""

    position: str = field(repr=False)
    last_served_id: int


@dataclass(frozen=True, slots=True)
class IntakeResult:
    """What one poll did. ``new_ids``: ids newly recorded as ``seen``, in feed order, to
    hand over. ``more``: it stopped (deadline, page cap) while the feed had more."""

    new_ids: tuple[int, ...]
    pages: int
    more: bool = False
    recoveries: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class _Row:
    event: FeedEvent
    created_at: str


class Intake:
    """The feed reader of one filter set. See the module's rules."""

    def __init__(
        self,
        ledger: Ledger,
        client: FeedReader,
        filters: FeedFilters,
        clock: Clock,
        *,
        start: int | None = None,
        max_pages: int = DEFAULT_MAX_PAGES,
    ) -> None:
        if start is not None and start < 0:
            raise ValueError(f"a start is an event id or 0, not {start}")
        if max_pages < 1:
            raise ValueError("a poll reads at least one page")
        self._ledger = ledger
        self._client = client
        self.filters = filters
        self.digest = filters.digest()
        self._clock = clock
        self._start = start
        self._max_pages = max_pages

    @property
    def _tag(self) -> str:
        return self.digest[:12]

    def checkpoint(self) -> Checkpoint | None:
        """The lineage's checkpoint, as committed."""
        with self._ledger.read() as connection:
            row = records.checkpoint(connection, self.digest)
        return None if row is None else Checkpoint(*row)

    def poll_once(self, deadline: float) -> IntakeResult:
        """Read pages until the feed has no more, the deadline passes or ``max_pages``."""
        checkpoint = self.checkpoint()
        resume_since: int | None = None
        next_url: str | None = None
        fresh: list[int] = []
        recoveries: list[str] = []
        followed: set[str] = set()
        pages = 0
        while True:
            try:
                page = self._fetch(checkpoint, resume_since, next_url, deadline)
            except FeedRefused as refused:
                if len(recoveries) >= MAX_RECOVERIES:
                    raise IntakeFailed(f"the feed refused again after {len(recoveries)} recoveries") from None
                checkpoint, resume_since, note = self._recover(refused, checkpoint)
                recoveries.append(note)
                next_url = None
                continue
            except BasecampError as error:  # its words carry no position (rule 7 of shell.basecamp.client)
                log.info("intake %s: the feed could not be read (%s: %s)", self._tag, type(error).__name__,
                         error)
                raise IntakeFailed(f"the feed could not be read: {type(error).__name__}: {error}") from None
            recorded, checkpoint = self._record(page, checkpoint)
            fresh += recorded
            pages += 1
            resume_since = None
            next_url = page.next_url
            if next_url is None:
                return IntakeResult(tuple(fresh), pages, False, tuple(recoveries))
            if next_url in followed:
                raise IntakeFailed("the feed's next page leads back to a page already read this poll")
            followed.add(next_url)
            if pages >= self._max_pages or self._clock.monotonic() >= deadline:
                return IntakeResult(tuple(fresh), pages, True, tuple(recoveries))

    # -- reading ---------------------------------------------------------------------------------

    def _resume_point(self, checkpoint: Checkpoint | None) -> int | None:
        """Where to start without a position (rule 1)."""
        if checkpoint is not None and checkpoint.last_served_id > 0:
            return checkpoint.last_served_id
        return self._start

    def _fetch(
        self, checkpoint: Checkpoint | None, resume_since: int | None, next_url: str | None, deadline: float
    ) -> FeedPage:
        if next_url is not None:
            return self._client.poll_events(None, None, self.filters, deadline, next_url=next_url)
        if resume_since is not None:
            return self._client.poll_events(resume_since, None, self.filters, deadline)
        if checkpoint is not None and checkpoint.position:
            return self._client.poll_events(None, checkpoint.position, self.filters, deadline)
        return self._client.poll_events(self._resume_point(checkpoint), None, self.filters, deadline)

    def _recover(
        self, refused: FeedRefused, checkpoint: Checkpoint | None
    ) -> tuple[Checkpoint, int | None, str]:
        """Drop the position (rule 4), committed; where to resume, and a note."""
        last = checkpoint.last_served_id if checkpoint is not None else 0
        match refused.refusal:
            case InvalidPosition() | FiltersChanged():
                note = (
                    "invalid_position" if isinstance(refused.refusal, InvalidPosition) else "filters_changed"
                )
                dropped = self._save(Checkpoint("", last))
                since = self._resume_point(dropped)
                log.warning(
                    "intake %s: the feed refused the position (%s); resuming after event %s",
                    self._tag,
                    note,
                    "now" if since is None else since,
                )
                return dropped, since, note
            case EpochPassed(epoch_after_id):
                moved = self._save(Checkpoint("", epoch_after_id), gap_after=last)
                log.warning(
                    "intake %s: the feed's epoch passed; resuming after event %d (last served %d);"
                    " events between may never be served",
                    self._tag,
                    epoch_after_id,
                    last,
                )
                return moved, epoch_after_id, "epoch_passed"
            case InvalidFilter():
                log.error("intake %s: the feed refused the filters", self._tag)
                raise FeedFiltersRefused("the event feed refused the filters; fix them") from None
            case _:
                raise IntakeFailed(f"the event feed refused the request: {type(refused.refusal).__name__}")

    # -- recording (rule 2) ----------------------------------------------------------------------

    def _rows(self, page: FeedPage) -> list[_Row]:
        try:
            return [_Row(event, format_timestamp(parse_timestamp(event.created_at))) for event in page.events]
        except ValueError:
            raise IntakeFailed("the feed served an event with an unreadable created_at") from None

    def _record(self, page: FeedPage, checkpoint: Checkpoint | None) -> tuple[tuple[int, ...], Checkpoint]:
        rows = self._rows(page)
        before = checkpoint.last_served_id if checkpoint is not None else 0
        saved = Checkpoint(page.position, max(before, page.last_id or 0))
        now = format_timestamp(self._clock.now())
        try:
            with self._ledger.write() as connection:
                heard = [(row.event, row.created_at) for row in rows]
                fresh = records.insert_seen(connection, heard, Lane.poll, now)
                records.save_checkpoint(connection, self.digest, saved.position, saved.last_served_id, now)
        except (sqlite3.Error, LedgerError) as error:
            log.error("intake %s: a page could not be recorded (%s)", self._tag, type(error).__name__)
            raise IntakeFailed(f"a page could not be recorded: {type(error).__name__}: {error}") from None
        log.info(
            "intake %s: page of %d events recorded, %d new, last served %d",
            self._tag,
            len(rows),
            len(fresh),
            saved.last_served_id,
        )
        return fresh, saved

    def _save(self, checkpoint: Checkpoint, *, gap_after: int | None = None) -> Checkpoint:
        now = format_timestamp(self._clock.now())
        try:
            with self._ledger.write() as connection:
                if gap_after is not None:
                    record_gap(connection, gap_after, checkpoint.last_served_id, now)
                records.save_checkpoint(
                    connection, self.digest, checkpoint.position, checkpoint.last_served_id, now
                )
        except (sqlite3.Error, LedgerError) as error:
            raise IntakeFailed(f"the checkpoint was not saved: {type(error).__name__}: {error}") from None
        return checkpoint
