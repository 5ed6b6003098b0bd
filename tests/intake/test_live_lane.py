"""Intake's live lane against the real stand-in: real tickets, a real WebSocket, a real ledger.

The stand-in's poll lane waits 30 s here (as Basecamp's does), so what the ledger holds within
a second was heard on the live lane.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from core.feed import FeedFilters
from core.intake_status import LaneState
from core.pacing import DEFAULT_LIMIT, ticket_allowance
from core.timestamps import format_timestamp
from shell.basecamp.client import BasecampClient
from shell.basecamp.standin.faults import LiveAction, LiveFault
from shell.basecamp.standin.server import StandIn
from shell.clock import SystemClock
from shell.intake.live_lane import RESUBSCRIBING, LiveLane
from shell.intake.poll_lane import Intake
from shell.ledger.connection import Ledger
from shell.ledger.intake import read_lane_state
from tests.support.child import wait_until


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo", feed_delay=30.0, ping_interval=0.2) as running:
        yield running


@dataclass
class Running:
    lane: LiveLane
    heard: list[int]
    stop: threading.Event
    thread: threading.Thread
    standin: StandIn
    ledger: Ledger
    stopped: list[bool] = field(default_factory=list)

    def finish(self) -> None:
        self.stop.set()
        self.thread.join(timeout=5)
        assert not self.thread.is_alive(), "the lane stops within its slice"

    def connected(self) -> bool:
        return self.lane.state is LaneState.connected

    def mention(self, text: str = "hello") -> int:
        standin = self.standin
        person = next(found for found in standin.world.people if found.id != standin.world.agent.id)
        return standin.mention(person, standin.world.projects[0].recording_ids[0], text)

    def rows(self) -> list[tuple[int, str, str]]:
        with self.ledger.read() as connection:
            return [
                (int(row[0]), str(row[1]), str(row[2]))
                for row in connection.execute("SELECT id, state, lane FROM events ORDER BY id")
            ]


@pytest.fixture
def running(
    standin: StandIn, ledger: Ledger, client: BasecampClient, filters: FeedFilters
) -> Iterator[Running]:
    heard: list[int] = []
    lane = LiveLane(
        ledger,
        client,
        filters,
        SystemClock(),
        heard.append,
        stale_after=1.0,
        backoff_base=0.05,
        backoff_cap=0.2,
    )
    stop = threading.Event()
    thread = threading.Thread(target=lane.run, args=(stop,), daemon=True)
    thread.start()
    found = Running(lane, heard, stop, thread, standin, ledger)
    wait_until(found.connected, timeout=10)
    yield found
    found.finish()


def test_an_event_heard_live_is_recorded_and_handed_on_the_position_untouched(running: Running) -> None:
    event_id = running.mention()
    wait_until(lambda: running.heard == [event_id], timeout=2)
    assert running.rows() == [(event_id, "seen", "live")]
    with running.ledger.read() as connection:
        assert connection.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0] == 0, (
            "the poll lane alone keeps the position"
        )


def test_the_poll_lane_finds_a_live_event_recorded_and_hands_nothing_twice(
    running: Running, make_intake: type[Intake]
) -> None:
    running.standin.feed.delay = 0.0
    event_id = running.mention()
    wait_until(lambda: running.heard == [event_id], timeout=2)
    result = make_intake(start=0).poll_once(SystemClock().monotonic() + 10)
    assert result.new_ids == (), "the live lane recorded it first"
    assert running.rows() == [(event_id, "seen", "live")]


def test_the_live_lane_hands_on_nothing_the_poll_lane_recorded_first(
    standin: StandIn, ledger: Ledger, client: BasecampClient, filters: FeedFilters, make_intake: type[Intake]
) -> None:
    standin.feed.delay = 0.0
    intake = make_intake(start=0)
    heard: list[int] = []
    lane = LiveLane(ledger, client, filters, SystemClock(), heard.append, stale_after=5.0)
    stop = threading.Event()
    thread = threading.Thread(target=lane.run, args=(stop,), daemon=True)
    thread.start()
    wait_until(lambda: lane.state is LaneState.connected, timeout=10)
    standin.live.faults.add(LiveFault(LiveAction.stall, delay=1.0))  # the live lane hears it late
    person = next(found for found in standin.world.people if found.id != standin.world.agent.id)
    event_id = standin.mention(person, standin.world.projects[0].recording_ids[0], "hi")
    assert intake.poll_once(SystemClock().monotonic() + 10).new_ids == (event_id,)
    time.sleep(2.0)  # the stalled frame arrives
    stop.set()
    thread.join(timeout=5)
    with ledger.read() as connection:
        assert connection.execute("SELECT id, lane FROM events").fetchall() == [(event_id, "poll")]
    assert heard == [], "the poll lane recorded it first and handed it on; the live lane hands on nothing"


def test_a_dropped_socket_reconnects_with_a_fresh_ticket(running: Running) -> None:
    running.standin.live.faults.add(LiveFault(LiveAction.drop))
    lost = running.mention("lost")
    wait_until(lambda: running.standin.live.tickets.minted == 2 and running.connected(), timeout=10)
    heard = running.mention("heard")
    wait_until(lambda: running.heard == [heard], timeout=2)
    assert lost not in running.heard, "the poll lane serves what the drop lost"


def test_a_refused_upgrade_is_down_with_its_reason_then_retried(running: Running) -> None:
    standin = running.standin
    standin.live.faults.add(LiveFault(LiveAction.refuse, status=503))
    standin.live.drop_all()
    wait_until(lambda: standin.live.tickets.minted >= 3 and running.connected(), timeout=10)
    state = read_lane_state(running.ledger)
    assert state is not None
    assert (state.state, state.connects) == (LaneState.connected, 2)
    assert running.lane.failures == 2, "the drop and the refusal: a confirmation alone proves nothing"
    wait_until(lambda: running.lane.failures == 0, timeout=10)  # a ping interval up (3 s) ends the backoff


def test_the_lane_down_is_in_the_ledger_with_why_and_since(running: Running) -> None:
    standin = running.standin
    standin.live.faults.add(LiveFault(LiveAction.refuse, status=503, times=1000))
    standin.live.drop_all()

    def down() -> bool:
        state = read_lane_state(running.ledger)
        return state is not None and state.state is LaneState.down and "HTTP 503" in state.why

    wait_until(down, timeout=10)
    state = read_lane_state(running.ledger)
    assert state is not None
    assert state.since <= format_timestamp(SystemClock().now())
    standin.clear_faults()
    wait_until(running.connected, timeout=10)


def test_an_expired_ticket_is_replaced_by_a_fresh_one(running: Running) -> None:
    standin = running.standin
    standin.live.faults.add(LiveFault(LiveAction.expire_ticket))
    standin.live.drop_all()
    wait_until(lambda: standin.live.tickets.minted >= 3 and running.connected(), timeout=10)
    event_id = running.mention()
    wait_until(lambda: running.heard == [event_id], timeout=2)


def test_a_stalled_connection_is_given_up_and_reopened(running: Running) -> None:
    standin = running.standin
    standin.live.faults.add(LiveFault(LiveAction.stall, delay=5.0))
    running.mention("stalls")
    wait_until(lambda: standin.live.tickets.minted == 2 and running.connected(), timeout=4)
    heard = running.mention("after")
    wait_until(lambda: heard in running.heard, timeout=2)


def test_an_overflow_is_counted_and_the_connection_kept(running: Running) -> None:
    standin = running.standin
    standin.live.faults.add(LiveFault(LiveAction.skip))
    skipped = running.mention("skipped")
    heard = running.mention("heard")
    wait_until(lambda: running.heard == [heard], timeout=2)
    assert skipped not in running.heard
    state = read_lane_state(running.ledger)
    assert state is not None
    assert state.overflows == 1
    assert state.connects == 1
    assert standin.live.tickets.minted == 1


def test_stopping_writes_the_lane_down(running: Running) -> None:
    running.finish()
    state = read_lane_state(running.ledger)
    assert state is not None
    assert (state.state, state.why) == (LaneState.down, "the connector stopped")


def test_no_log_line_carries_the_ticket_or_the_urls_query(
    standin: StandIn,
    ledger: Ledger,
    client: BasecampClient,
    filters: FeedFilters,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    lane = LiveLane(ledger, client, filters, SystemClock(), lambda event_id: None, stale_after=1.0)
    stop = threading.Event()
    thread = threading.Thread(target=lane.run, args=(stop,), daemon=True)
    thread.start()
    wait_until(lambda: lane.state is LaneState.connected, timeout=10)
    standin.live.drop_all()
    wait_until(lambda: standin.live.tickets.minted == 2 and lane.state is LaneState.connected, timeout=10)
    stop.set()
    thread.join(timeout=5)
    assert any("/cable" in record.getMessage() for record in caplog.records), "the lane does log its URL"
    for record in caplog.records:
        assert "ticket=" not in record.getMessage()
        assert "?" not in record.getMessage() or "/cable" not in record.getMessage()


def test_subscribing_again_is_connecting_until_confirmed_so_a_refused_upgrade_then_is_no_loss(
    standin: StandIn, ledger: Ledger, client: BasecampClient, filters: FeedFilters
) -> None:
    """Between the hang-up and the new confirmation the lane is not ``connected``: a
    connection that fails meanwhile is no loss of a connected lane (it heard nothing to lose)."""
    lost: list[str] = []

    class Book:  # what the lane tells the repair, kept
        def lost(self, cause: str, after_id: int | None) -> None:
            lost.append(cause)

        def heard(self, event_id: int) -> None:
            pass

    lane = LiveLane(ledger, client, filters, SystemClock(), lambda event_id: None, stale_after=1.0,
                    backoff_base=0.05, backoff_cap=0.2, losses=Book())  # fmt: skip
    stop = threading.Event()
    thread = threading.Thread(target=lane.run, args=(stop,), daemon=True)
    thread.start()
    try:
        wait_until(lambda: lane.state is LaneState.connected, timeout=10)
        standin.live.faults.add(LiveFault(LiveAction.refuse, delay=2.0))
        lane.resubscribe()

        def written() -> tuple[LaneState, str] | None:
            found = read_lane_state(ledger)
            return None if found is None else (found.state, found.why)

        wait_until(lambda: written() != (LaneState.connected, ""), timeout=1.5)  # within the refusal's delay
        assert written() == (LaneState.connecting, RESUBSCRIBING), "status reads it from the ledger"
        lane.resubscribe()  # again, before any new subscription: the next one answers both
        # the second ticket's upgrade is refused (down for a moment), the third's subscribed
        wait_until(lambda: standin.live.tickets.minted >= 3 and lane.state is LaneState.connected, timeout=10)
        assert standin.live.faults.pending() == [], "the refusal was taken"
        assert lost == [], "no connected lane was lost: it was subscribing again"
        time.sleep(1.0)  # a hang-up for the second request would come at the next frame (pings: 0.2 s)
        assert (standin.live.tickets.minted, lane.state) == (3, LaneState.connected), "no connection wasted"
    finally:
        stop.set()
        thread.join(timeout=5)


# -- a hostile cable: one unreadable frame after every subscription it confirms ----------------------


def hostile_lane(standin: StandIn, ledger: Ledger, client: BasecampClient, filters: FeedFilters,
                 **options: float) -> tuple[LiveLane, list[int], threading.Event, threading.Thread]:
    standin.live.faults.add(LiveFault(LiveAction.garble, times=None))
    heard: list[int] = []
    lane = LiveLane(ledger, client, filters, SystemClock(), heard.append, stale_after=5.0, **options)
    stop = threading.Event()
    thread = threading.Thread(target=lane.run, args=(stop,), daemon=True)
    thread.start()
    return lane, heard, stop, thread


def test_a_cable_that_garbles_every_subscription_backs_off_further_each_time(
    standin: StandIn, ledger: Ledger, client: BasecampClient, filters: FeedFilters
) -> None:
    """The failure count resets once a connection is healthy, never at its confirmation: each
    confirmed connection that fails at once counts on, so the waits between tickets grow."""
    lane, heard, stop, thread = hostile_lane(standin, ledger, client, filters, backoff_base=0.02,
                                             backoff_cap=0.5, healthy_after=30.0)  # fmt: skip
    try:
        wait_until(lambda: lane.failures >= 4, timeout=10)
        assert standin.live.tickets.minted >= 4, "each failure was a confirmed connection"
        standin.live.faults.clear()
        wait_until(lambda: lane.state is LaneState.connected, timeout=10)
        assert lane.failures >= 4, "confirmed again, but not yet shown healthy"
        event_id = Running(lane, heard, stop, thread, standin, ledger).mention()
        wait_until(lambda: heard == [event_id], timeout=5)
        assert lane.failures == 0, "its first event shows the connection healthy"
    finally:
        stop.set()
        thread.join(timeout=5)


def test_a_hostile_cable_gets_stream_tickets_only_up_to_their_share_of_the_budget(
    standin: StandIn, ledger: Ledger, filters: FeedFilters, caplog: pytest.LogCaptureFixture
) -> None:
    """However fast the lane would reconnect, it asks at most ``ticket_allowance`` tickets in any
    window of the request budget (2 of the 47 requests of 10 s; a 2 s window here, to be quick)."""
    window = 2.0
    client = BasecampClient(standin.base_url, standin.world.account_id, standin.world.token,
                            "basecamp-connector tests (tests@example.com)", window_seconds=window)  # fmt: skip
    allowed = ticket_allowance(DEFAULT_LIMIT)
    assert allowed == 2, "the share the README states: 2 of 47, under 5%"
    lane, _, stop, thread = hostile_lane(standin, ledger, client, filters, backoff_base=0.001,
                                         backoff_cap=0.002)  # fmt: skip
    try:
        time.sleep(3 * window + 0.5)
        wait_until(lambda: lane.failures >= 3, timeout=5)  # the lane was down, reconnecting, all along
    finally:
        stop.set()
        thread.join(timeout=5)
    asked = sorted(request.at.timestamp() for request in standin.requests() if "stream_ticket" in request.path)
    assert len(asked) >= 2 * allowed, "the lane kept reconnecting"
    travel = 0.1  # the stand-in stamps a request as it reads it, a moment after the lane's turn
    busiest = max(sum(1 for later in asked if first <= later < first + window - travel) for first in asked)
    assert busiest <= allowed, f"{busiest} tickets asked in {window} s, more than the {allowed} allowed"
    refused = [record for record in caplog.records if "no stream ticket" in record.getMessage()]
    assert refused == [], "the lane waits for a ticket's turn: the client never has to refuse one"
