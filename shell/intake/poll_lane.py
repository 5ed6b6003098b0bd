"""Intake's poll lane: read the account's event feed, record each event once, move the position;
beside it the backlog pause before each read, and the walk that repairs what the live lane lost.

A lineage's checkpoint is keyed by the filters' digest. A poll starts at its position, else
after its ``last_served_id``, else at the configured ``start`` (None: now; 0: all history). One
page is one transaction: every event recorded ``seen`` (one row per id, across lanes and
restarts), then the position, never ahead of the records. ``next`` is followed while present,
before the deadline and under ``max_pages``. A refused position (400, 409) resumes after the
last served id; a passed epoch (410) at ``epoch_after_id``, a gap recorded in the same
transaction; at most two such a poll. A page that cannot be read or recorded saves nothing and
raises ``IntakeFailed`` for the caller's backoff. The position and the query are never logged,
raised or in a repr.

The backlog check logs each crossing once; a ledger that cannot be read pauses nothing. A loss
the live lane tells is walked once due, past the feed's safety delay, under a cursor of its own
(the checkpoint is never touched), until ``core.intake_status`` says it is repaired or past its window."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Protocol

from core import feed, intake_status
from core.intake_status import Loss, LossState, settle_state, walk_done
from core.timestamps import format_timestamp, parse_timestamp
from shell.basecamp.errors import BasecampError, FeedRefused
from shell.clock import Clock
from shell.ledger import intake, records
from shell.ledger.connection import Ledger, LedgerError

log = logging.getLogger("connector.intake")
backlog_log = logging.getLogger("connector.intake.backlog")
repair_log = logging.getLogger("connector.intake.repair")

DEFAULT_MAX_PAGES = 50
MAX_RECOVERIES = 2
DEFAULT_REPAIR_INTERVAL = timedelta(seconds=60)
DEFAULT_REPAIR_WINDOW = timedelta(minutes=10)
REPAIR_MAX_PAGES = 20


def stamped(events: Iterable[feed.FeedEvent]) -> list[tuple[feed.FeedEvent, str]]:
    """Each event with its ``created_at`` as the ledger keeps it; ``ValueError`` if one is unreadable."""
    return [(event, format_timestamp(parse_timestamp(event.created_at))) for event in events]


class IntakeFailed(Exception):
    """A page could not be read or recorded; nothing of it was saved. Back off, retry."""


class FeedFiltersRefused(IntakeFailed):
    """The feed refused the filters (400 ``invalid_filter``); they must be fixed."""


class FeedReader(Protocol):
    """What intake needs of ``shell.basecamp.client.BasecampClient``."""

    def poll_events(self, since: int | None, position: str | None, filters: feed.FeedFilters,
                    deadline: float, *, next_url: str | None = None) -> feed.FeedPage: ...


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


class Intake:
    def __init__(self, ledger: Ledger, client: FeedReader, filters: feed.FeedFilters, clock: Clock, *,
                 start: int | None = None, max_pages: int = DEFAULT_MAX_PAGES) -> None:
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
            except BasecampError as error:  # its words carry no position
                log.info("intake %s: the feed could not be read (%s: %s)", self._tag,
                         type(error).__name__, error)  # fmt: skip
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

    def _resume_point(self, checkpoint: Checkpoint | None) -> int | None:
        if checkpoint is not None and checkpoint.last_served_id > 0:
            return checkpoint.last_served_id
        return self._start

    def _fetch(self, checkpoint: Checkpoint | None, resume_since: int | None, next_url: str | None,
               deadline: float) -> feed.FeedPage:
        if next_url is not None:
            return self._client.poll_events(None, None, self.filters, deadline, next_url=next_url)
        if resume_since is not None:
            return self._client.poll_events(resume_since, None, self.filters, deadline)
        if checkpoint is not None and checkpoint.position:
            return self._client.poll_events(None, checkpoint.position, self.filters, deadline)
        return self._client.poll_events(self._resume_point(checkpoint), None, self.filters, deadline)

    def _recover(self, refused: FeedRefused,
                 checkpoint: Checkpoint | None) -> tuple[Checkpoint, int | None, str]:
        """Drop the position, committed; where to resume, and a note."""
        last = checkpoint.last_served_id if checkpoint is not None else 0
        match refusal := refused.refusal:
            case feed.InvalidPosition() | feed.FiltersChanged():
                note = "filters_changed" if isinstance(refusal, feed.FiltersChanged) else "invalid_position"
                dropped = self._save(Checkpoint("", last))
                since = self._resume_point(dropped)
                log.warning("intake %s: the feed refused the position (%s); resuming after event %s",
                            self._tag, note, "now" if since is None else since)  # fmt: skip
                return dropped, since, note
            case feed.EpochPassed(epoch_after_id):
                moved = self._save(Checkpoint("", epoch_after_id), gap_after=last)
                log.warning("intake %s: the feed's epoch passed; resuming after event %d (last served %d);"
                            " events between may never be served",
                            self._tag, epoch_after_id, last)  # fmt: skip
                return moved, epoch_after_id, "epoch_passed"
            case feed.InvalidFilter():
                log.error("intake %s: the feed refused the filters", self._tag)
                raise FeedFiltersRefused("the event feed refused the filters; fix them") from None
            case _:
                raise IntakeFailed(f"the event feed refused the request: {type(refusal).__name__}")

    def _record(self, page: feed.FeedPage,
                checkpoint: Checkpoint | None) -> tuple[tuple[int, ...], Checkpoint]:
        try:
            rows = stamped(page.events)
        except ValueError:
            raise IntakeFailed("the feed served an event with an unreadable created_at") from None
        before = checkpoint.last_served_id if checkpoint is not None else 0
        saved = Checkpoint(page.position, max(before, page.last_id or 0))
        now = format_timestamp(self._clock.now())
        try:
            with self._ledger.write() as connection:
                fresh = records.insert_seen(connection, rows, intake.Lane.poll, now)
                records.save_checkpoint(connection, self.digest, saved.position, saved.last_served_id, now)
        except (sqlite3.Error, LedgerError) as error:
            log.error("intake %s: a page could not be recorded (%s)", self._tag, type(error).__name__)
            raise IntakeFailed(f"a page could not be recorded: {type(error).__name__}: {error}") from None
        log.info("intake %s: page of %d events recorded, %d new, last served %d",
                 self._tag, len(rows), len(fresh), saved.last_served_id)  # fmt: skip
        return fresh, saved

    def _save(self, checkpoint: Checkpoint, *, gap_after: int | None = None) -> Checkpoint:
        now = format_timestamp(self._clock.now())
        try:
            with self._ledger.write() as connection:
                if gap_after is not None:
                    intake.record_gap(connection, gap_after, checkpoint.last_served_id, now)
                saved = checkpoint.position, checkpoint.last_served_id
                records.save_checkpoint(connection, self.digest, *saved, now)
        except (sqlite3.Error, LedgerError) as error:
            raise IntakeFailed(f"the checkpoint was not saved: {type(error).__name__}: {error}") from None
        return checkpoint


class Backlog:
    """The pause intake makes while admission is behind."""

    def __init__(self, ledger: Ledger, limits: intake_status.BacklogLimits) -> None:
        self._ledger = ledger
        self._limits = limits
        self._reason: str | None = None
        self._warned = False

    def paused(self) -> str | None:
        return self._reason

    def check(self) -> str | None:
        try:
            depth = intake.count_in_states(self._ledger, intake_status.BACKLOG_STATES)
        except (sqlite3.Error, LedgerError) as error:
            backlog_log.warning("backlog: could not be read (%s); reading on", type(error).__name__)
            return self._reason
        found = intake_status.backlog_reason(depth, self._limits)
        if found is not None and self._reason is None:
            backlog_log.warning("%s; it reads on below that", found)
        elif found is None and self._reason is not None:
            backlog_log.info("intake reads again: %d records wait (pause at %d)", depth, self._limits.pause)
        warned = intake_status.backlog_warns(depth, self._limits)
        if warned and not self._warned and found is None:
            backlog_log.warning("backlog: %d records wait for a worker (warn at %d)", depth,
                                self._limits.warn)  # fmt: skip
        self._reason, self._warned = found, warned
        return found


class Repair:
    """The losses the live lane tells, and the walks of the feed that look for what they lost."""

    def __init__(self, ledger: Ledger, client: FeedReader, filters: feed.FeedFilters, clock: Clock,
                 on_new: Callable[[int], None], *, interval: timedelta = DEFAULT_REPAIR_INTERVAL,
                 window: timedelta = DEFAULT_REPAIR_WINDOW) -> None:
        self._ledger = ledger
        self._client = client
        self._filters = filters
        self._clock = clock
        self._on_new = on_new
        self._interval = interval
        self._window = window

    def lost(self, cause: str, after_id: int | None) -> None:
        now = self._clock.now()
        due_at, window_ends_at = format_timestamp(now + self._interval), format_timestamp(now + self._window)
        try:
            with self._ledger.write() as connection:
                found = intake.record_loss(connection, cause, after_id, now=format_timestamp(now),
                                           due_at=due_at, window_ends_at=window_ends_at)
        except (sqlite3.Error, LedgerError) as error:
            repair_log.error("repair: a loss could not be recorded (%s)", type(error).__name__)
            return
        if found is not None:
            repair_log.warning("repair: loss %d recorded (%s); walked from %s", found, cause, due_at)

    def heard(self, event_id: int) -> None:
        try:
            with self._ledger.write() as connection:
                intake.bound_losses(connection, event_id, format_timestamp(self._clock.now()))
        except (sqlite3.Error, LedgerError) as error:
            repair_log.error("repair: a loss could not be bounded (%s)", type(error).__name__)

    def run_due(self, deadline: float) -> None:
        with self._ledger.read() as connection:
            due = intake.due_losses(connection, format_timestamp(self._clock.now()))
        for loss in due:
            try:
                self._walk(loss, deadline)
            except BasecampError as error:
                repair_log.info("repair: loss %d: the feed could not be read (%s); later", loss.id,
                                type(error).__name__)
            except (sqlite3.Error, LedgerError) as error:
                repair_log.error("repair: loss %d could not be recorded (%s); later", loss.id,
                                 type(error).__name__)  # fmt: skip

    def _walk(self, loss: Loss, deadline: float) -> None:
        cursor, more, next_url, recovered = loss.cursor, True, None, 0
        for _ in range(REPAIR_MAX_PAGES):
            since = cursor if next_url is None else None
            page = self._client.poll_events(since, None, self._filters, deadline, next_url=next_url)
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
            intake.settle_loss(connection, loss.id, state, format_timestamp(self._clock.now()))
        repair_log.log(logging.INFO if state is LossState.repaired else logging.WARNING,
                "repair: loss %d %s (after event %d; %d recovered by this walk)",
                loss.id, state.value, loss.after_id, recovered)  # fmt: skip

    def _record(self, loss: Loss, page: feed.FeedPage) -> tuple[tuple[int, ...], int]:
        """The ids newly recorded, and how many of them are inside the loss's stretch."""
        try:
            rows = stamped(page.events)
        except ValueError:
            raise BasecampError("the feed served an event with an unreadable created_at") from None
        bound = loss.through_id
        now = format_timestamp(self._clock.now())
        with self._ledger.write() as connection:
            fresh = records.insert_seen(connection, rows, intake.Lane.repair, now)
            inside = sum(1 for event_id in fresh if bound is None or event_id <= bound)
            intake.advance_loss(connection, loss.id, page.last_id or loss.cursor, inside)
        return fresh, inside
