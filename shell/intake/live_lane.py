"""Intake's live lane: a stream ticket, a WebSocket to its URL, ``EventsChannel``; each event
recorded by the poll lane's own path. Beside it, the agent's projects re-read on a schedule.

Each connection has a ticket minted just before and used once, and waits while the tickets'
share of the request budget is spent; neither ticket nor query is logged or stored. The lane is
``connected`` once the subscription is confirmed, within ``CONFIRM_WITHIN`` of the opening (pings
alone never keep it ``connecting``); a frame's events are recorded in one transaction, then its
new ids go to ``on_new`` in order. Any failure, the unexpected too, leaves the lane ``down`` with
its reason for ``core.feed.reconnect_delay`` while the poll lane goes on alone; the failures count
on until a connection is ``core.feed.proven_healthy``. An overflow, or a confirmed connection that
drops, is a loss told to the repair, bounded by the next event heard. While intake pauses, the
lane hangs up: no loss, no failure. Its state is written at each change, for ``status``; only
``stop`` ends it.

Basecamp's cable snapshots the agent's projects when it subscribes, so ``Membership.check``
answers the projects granted since its last read, and the connector has the lane subscribe
again (``connecting`` until confirmed). A project withdrawn needs nothing."""

from __future__ import annotations

import logging
import random
import sqlite3
import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Protocol

from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI
from websockets.sync.client import ClientConnection, connect
from websockets.typing import Subprotocol

from core import feed as live
from core.feed import FeedEvent, FeedFilters
from core.intake_status import LaneState
from core.timestamps import format_timestamp
from shell.basecamp.errors import BasecampError
from shell.basecamp.wire import NoQueryStrings
from shell.clock import Clock
from shell.intake.poll_lane import stamped
from shell.ledger.connection import Ledger, LedgerError
from shell.ledger.intake import Lane, reset_lane_counts, write_lane_state
from shell.ledger.records import insert_seen

log = logging.getLogger("connector.intake.live")
_WIRE = logging.getLogger("connector.intake.live.websockets")
_WIRE.setLevel(logging.WARNING)
_WIRE.addFilter(NoQueryStrings())

STOP_SLICE = 0.5
DEFAULT_STALE_AFTER = 10.0
OPEN_TIMEOUT = 10.0
CLOSE_TIMEOUT = 2.0
TICKET_DEADLINE = 15.0
CONFIRM_WITHIN = 10.0  # from the opening to the subscription's confirmation
RESUBSCRIBING = "subscribing again: the agent's projects changed"
DEFAULT_MEMBERSHIP_INTERVAL = timedelta(minutes=10)


class TicketMinter(Protocol):
    """What the lane needs of ``shell.basecamp.client.BasecampClient``."""

    def stream_ticket(self, deadline: float) -> live.StreamTicket: ...
    def ticket_wait(self) -> float: ...
    def deadline_in(self, seconds: float) -> float: ...


class LossBook(Protocol):
    """Where the lane tells what it did not hear (``shell.intake.poll_lane.Repair``)."""

    def lost(self, cause: str, after_id: int | None) -> None: ...
    def heard(self, event_id: int) -> None: ...


class _NoLosses:
    def lost(self, cause: str, after_id: int | None) -> None:
        pass

    def heard(self, event_id: int) -> None:
        pass


class _HungUp(Exception):
    """The lane hangs up on purpose (intake pauses, or it subscribes again): no loss, no failure."""


class _Down(Exception):
    """Why this connection ended (a short reason, no secret in it)."""


class LiveLane:
    def __init__(self, ledger: Ledger, client: TicketMinter, filters: FeedFilters, clock: Clock,
                 on_new: Callable[[int], None], *, stale_after: float = DEFAULT_STALE_AFTER,
                 backoff_base: float = 0.5, backoff_cap: float = 30.0, rng: random.Random | None = None,
                 losses: LossBook | None = None, paused: Callable[[], str | None] = lambda: None,
                 beat: Callable[[], None] = lambda: None, healthy_after: float = live.HEALTHY_AFTER,
                 confirm_within: float = CONFIRM_WITHIN) -> None:
        self._beat = beat
        self._healthy_after = healthy_after
        self._confirm_within = confirm_within
        self._confirmed_at: float | None = None  # this connection's confirmation
        self._events_heard = 0  # since it
        self._ledger = ledger
        self._client = client
        self._filters = filters
        self._clock = clock
        self._on_new = on_new
        self._stale_after = stale_after
        self._backoff = (backoff_base, backoff_cap)
        self._random = rng or random.Random()  # noqa: S311 -- jitter, not security
        self._losses: LossBook = losses or _NoLosses()
        self._paused = paused
        self._resubscribe = threading.Event()
        self.failures = 0
        self.state = LaneState.connecting
        self.why = ""

    def run(self, stop: threading.Event) -> None:
        self._write_state(LaneState.connecting, "", reset=True)
        while not stop.is_set():
            self._beat()
            if self._wait_while_paused(stop) or self._wait_for_ticket(stop):
                break
            try:
                self._session_guarded(stop)
            except _HungUp:
                continue
            except _Down as down:
                if stop.is_set():
                    break
                if self.state is LaneState.connected:
                    self._losses.lost("dropped", None)  # what it did not hear meanwhile
                self.failures += 1
                self._write_state(LaneState.down, str(down))
                base, cap = self._backoff
                delay = live.reconnect_delay(self.failures - 1, self._random.random(), base=base, cap=cap)
                log.warning("live lane down (%s); polling alone, reconnecting in %.1f s", down, delay)
                if stop.wait(delay):
                    break
                self._write_state(LaneState.connecting, "")
        if self.state is not LaneState.down:
            self._write_state(LaneState.down, "the connector stopped")

    def resubscribe(self) -> None:
        """Hang up and subscribe again at once, with a fresh ticket."""
        self._resubscribe.set()

    def _wait_while_paused(self, stop: threading.Event) -> bool:
        """Down while intake pauses on purpose; True when stopped meanwhile."""
        while (why := self._paused()) is not None:
            self._beat()  # a lane held on purpose still turns
            if (self.state, self.why) != (LaneState.down, why):
                self._write_state(LaneState.down, why)
                log.warning("live lane: hung up (%s)", why)
            if stop.wait(STOP_SLICE):
                return True
        if self.state is LaneState.down and not stop.is_set():
            self._write_state(LaneState.connecting, "")
        return stop.is_set()

    def _wait_for_ticket(self, stop: threading.Event) -> bool:
        """Until a ticket may be asked (``core.pacing.ticket_wait``); True when stopped meanwhile."""
        while (wait := self._client.ticket_wait()) > 0:
            self._beat()
            if stop.wait(min(wait, STOP_SLICE)):
                return True
        return False

    def _session_guarded(self, stop: threading.Event) -> None:
        """One connection; what it did not expect is one more way to be down."""
        try:
            self._session(stop)
        except (_HungUp, _Down):
            raise
        except Exception as error:
            log.exception("live lane: an unexpected failure")
            raise _Down(f"an unexpected failure ({type(error).__name__})") from None

    def _session(self, stop: threading.Event) -> None:
        self._resubscribe.clear()  # this subscription is made with the projects as they are now
        self._confirmed_at, self._events_heard = None, 0
        ticket = self._mint()
        shown = live.redacted(ticket.url)
        try:
            connection = connect(ticket.url, subprotocols=[Subprotocol(live.SUBPROTOCOL)], proxy=None,
                                 compression=None, open_timeout=OPEN_TIMEOUT, close_timeout=CLOSE_TIMEOUT,
                                 logger=_WIRE)
        except InvalidStatus as refused:
            raise _Down(f"the upgrade was refused: HTTP {refused.response.status_code}") from None
        except InvalidURI:
            raise _Down("the ticket's url is not a WebSocket URL") from None
        except (InvalidHandshake, OSError, TimeoutError) as error:
            raise _Down(f"could not connect: {type(error).__name__}") from None
        log.info("live lane: connected to %s", shown)
        with connection:
            try:
                self._hear(connection, stop)
            except ConnectionClosed as closed:
                raise _Down(f"the connection closed ({type(closed).__name__})") from None
            except OSError as error:
                raise _Down(f"the connection failed: {type(error).__name__}") from None

    def _mint(self) -> live.StreamTicket:
        try:
            return self._client.stream_ticket(self._client.deadline_in(TICKET_DEADLINE))
        except BasecampError as error:
            raise _Down(f"no stream ticket ({type(error).__name__})") from None

    def _hear(self, connection: ClientConnection, stop: threading.Event) -> None:
        subscribed = False
        quiet_since = opened = self._clock.monotonic()
        while not stop.is_set():
            self._beat()
            unconfirmed = self._clock.monotonic() - opened >= self._confirm_within
            if unconfirmed and self.state is not LaneState.connected:
                raise _Down(f"no confirmation of the subscription within {self._confirm_within:g} s")
            if self._paused() is not None:
                raise _HungUp
            if self._resubscribe.is_set():  # cleared as the next session begins
                log.info("live lane: subscribing again (the agent's projects changed)")
                self._write_state(LaneState.connecting, RESUBSCRIBING)  # not heard until confirmed
                raise _HungUp
            try:
                text = connection.recv(timeout=STOP_SLICE)
            except TimeoutError:
                if self._clock.monotonic() - quiet_since >= self._stale_after:
                    raise _Down(f"stalled: nothing heard for {self._stale_after:g} s") from None
                self._forget_failures_once_healthy()
                continue
            quiet_since = self._clock.monotonic()
            frame = live.read_frame(text)
            if frame is live.Signal.welcome and not subscribed:
                connection.send(live.subscribe_command(self._filters))
                subscribed = True
            else:
                self.on_frame(frame)

    def on_frame(self, frame: live.Frame) -> None:
        """Each frame read after subscribing; public, so the whole-connector simulation needs no socket."""
        match frame:
            case live.Signal.confirmed:
                self._confirmed_at = self._clock.monotonic()
                self._write_state(LaneState.connected, "")
                log.info("live lane: subscribed to EventsChannel")
            case live.Delivered(events):
                self._record(events)
                if events:
                    self._events_heard += len(events)
                    self._losses.heard(events[0].id)
            case live.Overflow(after_id):
                self._losses.lost("overflow", after_id)
                log.warning("live lane: the server dropped events after %d; the poll lane will serve them",
                            after_id)  # fmt: skip
                self._write_state(LaneState.connected, "", overflow=True)
            case live.Signal.rejected:
                raise _Down("the subscription was rejected")
            case live.Disconnect(reason, _):
                raise _Down(f"the server disconnected ({reason or 'no reason'})")
            case live.Unreadable(why):
                raise _Down(f"an unreadable frame ({why})")
            case live.Signal.ping | live.Signal.welcome:
                pass
        self._forget_failures_once_healthy()

    def _forget_failures_once_healthy(self) -> None:
        confirmed = self._confirmed_at
        confirmed_for = None if confirmed is None else self._clock.monotonic() - confirmed
        healthy = live.proven_healthy(confirmed_for, self._events_heard, after=self._healthy_after)
        if self.failures and healthy:
            self.failures = 0

    def _record(self, events: tuple[FeedEvent, ...]) -> None:
        try:
            rows = stamped(events)
        except ValueError:
            raise _Down("an event with an unreadable created_at") from None
        try:
            with self._ledger.write() as connection:
                fresh = insert_seen(connection, rows, Lane.live, format_timestamp(self._clock.now()))
        except (sqlite3.Error, LedgerError) as error:
            raise _Down(f"an event could not be recorded ({type(error).__name__})") from None
        if fresh:
            log.info("live lane: recorded %s", ", ".join(map(str, fresh)))
        for event_id in fresh:
            self._on_new(event_id)

    def _write_state(self, state: LaneState, why: str, *, reset: bool = False,
                     overflow: bool = False) -> None:
        self.state, self.why = state, why
        now = format_timestamp(self._clock.now())
        try:
            with self._ledger.write() as connection:
                if reset:
                    reset_lane_counts(connection)
                write_lane_state(connection, state, why, now, overflow=overflow)
        except (sqlite3.Error, LedgerError) as error:
            log.warning("live lane: its state could not be written (%s)", type(error).__name__)


class ProjectLister(Protocol):
    """What membership needs of ``shell.basecamp.client.BasecampClient``."""

    def projects(self, deadline: float) -> frozenset[int]: ...


class Membership:
    def __init__(self, client: ProjectLister, clock: Clock,
                 interval: timedelta = DEFAULT_MEMBERSHIP_INTERVAL) -> None:
        self._client = client
        self._clock = clock
        self._interval = interval.total_seconds()
        self._known: frozenset[int] | None = None
        self._next_at = clock.monotonic()

    def due(self) -> bool:
        return self._clock.monotonic() >= self._next_at

    def check(self, deadline: float) -> frozenset[int]:
        """The projects granted since the last read; raises what the client raises (a read that
        fails changes nothing, and is tried at the next interval)."""
        self._next_at = self._clock.monotonic() + self._interval
        now = self._client.projects(deadline)
        granted = frozenset() if self._known is None else now - self._known
        self._known = now
        return granted
