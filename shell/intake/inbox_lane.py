"""Intake's inbox lane: what was addressed to the agent, read as a backstop to the other lanes.

Basecamp serves the inbox to agents only: a 403 is recorded once and not asked again this run. A
read starts at the lane's position, else after its last item; the first read ever at ``since=0``
above a floor, the feed's last served event (``since=now`` when it served none); nothing at or
below the floor is recorded, and the floor is kept from the first try on. One page is one
transaction. The inbox's 410 starts again at ``since=0``; a refused position resumes after the
last item; at most two such a poll. Any other failure is verdict ``failing``, nothing of the page
saved. The lane is due every ``every_polls``-th intake turn, and at once after ``ask_now``,
inside the client's one budget. The position and the query are never logged, raised or in a repr."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from typing import Protocol

from core.feed import InboxGone, InboxPage, NotForPrincipal, PositionRefused, addressed_events
from core.intake_status import InboxVerdict
from core.timestamps import format_timestamp
from shell.basecamp.errors import BasecampError, InboxRefused
from shell.clock import Clock
from shell.intake.poll_lane import MAX_RECOVERIES, stamped
from shell.ledger import intake, records
from shell.ledger.connection import Ledger, LedgerError
from shell.ledger.intake import Lane

log = logging.getLogger("connector.intake.inbox")

DEFAULT_EVERY_POLLS = 6  # a backstop: every sixth intake turn (30 s at the default 5 s poll)
MAX_PAGES = 20


class InboxReader(Protocol):
    """What the lane needs of ``shell.basecamp.client.BasecampClient``."""

    def poll_inbox(self, since: int | None, position: str | None, deadline: float, *,
                   next_url: str | None = None) -> InboxPage: ...


class _Stop(Exception):
    """This poll ends here; what it says is already written."""


class InboxLane:
    def __init__(self, ledger: Ledger, client: InboxReader, clock: Clock, account_floor: Callable[[], int], *,
                 every_polls: int = DEFAULT_EVERY_POLLS) -> None:
        if every_polls < 1:
            raise ValueError("the inbox is read at least every turn")
        self._ledger = ledger
        self._client = client
        self._clock = clock
        self._account_floor = account_floor
        self._every = every_polls
        self._turns = 0
        self._asked = True  # the first turn reads it
        self.refused = False  # a 403 this run
        self._floor = 0

    def ask_now(self) -> None:
        """The account lane's position went stale; read what was addressed meanwhile."""
        self._asked = True

    def due(self) -> bool:
        """One intake turn: whether the inbox is read in it."""
        self._turns += 1
        if self.refused:
            return False
        if self._asked or self._turns >= self._every:
            self._asked, self._turns = False, 0
            return True
        return False

    def poll_once(self, deadline: float) -> tuple[int, ...]:
        """Read pages until the inbox has no more, the deadline or ``MAX_PAGES``; the new ids."""
        with self._ledger.read() as connection:
            state = intake.read_inbox_state(connection)
        if state is None or state.read_at is None:
            kept = state.floor_id if state is not None else 0
            floor = kept or max(0, self._account_floor())
            position, since, last = "", (0 if floor else None), 0
        else:
            floor, position, last = state.floor_id, state.position, state.last_item_id
            since = last
        self._floor = floor
        fresh: list[int] = []
        followed: set[str] = set()
        next_url: str | None = None
        recoveries = 0
        try:
            for _ in range(MAX_PAGES):
                try:
                    page = self._client.poll_inbox(since, position or None, deadline, next_url=next_url)
                except InboxRefused as refused:
                    recoveries += 1
                    position, since, last = self._recover(refused, recoveries, last)
                    next_url = None
                    continue
                last = max(last, page.last_item_id or 0)
                fresh += self._record(page, last, floor)
                position, next_url = page.position, page.next_url
                if next_url is None or self._clock.monotonic() >= deadline:
                    break
                if next_url in followed:  # a loop, not a long inbox
                    raise self._failing("the inbox's next page leads back to a page already read")
                followed.add(next_url)
        except BasecampError as error:  # its words carry no position
            self._failing(f"{type(error).__name__}: {error}")
        except _Stop:
            pass
        if fresh:
            log.info("inbox: %d event(s) no other lane had brought: %s", len(fresh),
                     ",".join(map(str, fresh)))
        return tuple(fresh)

    def _recover(self, refused: InboxRefused, recoveries: int, last: int) -> tuple[str, int, int]:
        """The position, since and last item to read on with after a refusal."""
        match refused.refusal:
            case NotForPrincipal():
                self.refused = True
                self._verdict(InboxVerdict.not_for_principal, "403: Basecamp's inbox is for agents only")
                log.warning("inbox: this principal has no inbox (403); intake hears by the feed alone")
                raise _Stop
            case _ if recoveries > MAX_RECOVERIES:
                raise self._failing(f"the inbox refused again after {MAX_RECOVERIES} recoveries")
            case InboxGone():
                self._verdict(InboxVerdict.available, "410: resumed at since=0", position="", last_item_id=0)
                log.warning("inbox: the position fell behind the inbox's retention; "
                            "starting again at since=0")
                return "", 0, 0
            case PositionRefused():
                self._verdict(InboxVerdict.available, "the position was refused", position="")
                log.warning("inbox: the position was refused; resuming after item %d", last)
                return "", last, last
            case _:
                raise self._failing(f"the inbox refused the request: {type(refused.refusal).__name__}")

    def _record(self, page: InboxPage, last: int, floor: int) -> tuple[int, ...]:
        try:
            rows = stamped(addressed_events(page.items, floor))
        except ValueError:
            raise self._failing("the inbox served an event with an unreadable created_at") from None
        now = format_timestamp(self._clock.now())
        try:
            with self._ledger.write() as connection:
                fresh = records.insert_seen(connection, rows, Lane.inbox, now)
                intake.save_inbox_page(connection, page.position, last, floor, now)
        except (sqlite3.Error, LedgerError) as error:
            log.error("inbox: a page could not be recorded (%s)", type(error).__name__)
            raise _Stop from None
        return fresh

    def _failing(self, why: str) -> _Stop:
        log.info("inbox: %s; tried again later", why)
        self._verdict(InboxVerdict.failing, why)
        return _Stop()

    def _verdict(self, verdict: InboxVerdict, why: str, *, position: str | None = None,
                 last_item_id: int | None = None) -> None:
        try:
            with self._ledger.write() as connection:
                now = format_timestamp(self._clock.now())
                intake.write_inbox_verdict(connection, verdict, why, now, position=position,
                                         last_item_id=last_item_id, floor_id=self._floor)  # fmt: skip
        except (sqlite3.Error, LedgerError) as error:
            log.error("inbox: its verdict could not be recorded (%s)", type(error).__name__)
