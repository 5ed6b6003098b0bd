"""Start (``shell.connector.settle_previous``): reconcile what a previous process left, sweep its
session files, recover its attempts, then send, in that order; a ledger failure stops it, and so
does a stop, which leaves what it had not settled exactly as it was."""

import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import pytest

from core.destinations import Destination, ListedMessage
from core.posting import PostOutcome
from shell.basecamp.errors import ListingFailed
from shell.clock import FakeClock
from shell.connector import START_STEPS, StartParts, settle_previous
from shell.ledger.connection import Ledger
from shell.outbox import Outbox, OutboxLedgerError, SendResult
from tests.support.fake_basecamp import AGENT_ID, FakeBasecamp, Listing, Post
from tests.support.ids import nth_intent
from tests.support.ledger_world import LedgerWorld, boost_on


def test_start_settles_what_a_previous_process_left_before_sending(
    world: LedgerWorld, ledger: Ledger, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    previous = Outbox(ledger, basecamp, AGENT_ID)
    world.request(1)
    clock.advance(31)
    basecamp.posts = [Post.lost_after_landing]
    previous.flush()  # ... and the process died: intent 1 is sending, its message landed
    clock.advance(600)
    world.request(2)
    clock.advance(31)
    basecamp.posts = [Post.lost_after_landing]
    previous.flush()  # intent 2 went sending just now: young
    world.request(3)
    clock.advance(31)
    basecamp.calls.clear()
    restarted = Outbox(ledger, basecamp, AGENT_ID)
    settle_previous(StartParts(restarted), clock.monotonic() + 60)
    assert [name for name, _ in basecamp.calls] == ["list", "post"]
    assert basecamp.calls[0][1] == boost_on(1)
    assert [world.state_of(nth_intent(n)) for n in (1, 2, 3)] == ["sent", "sending", "sent"]


def test_start_stops_sending_at_the_first_send_that_may_not_have_landed(
    world: LedgerWorld, ledger: Ledger, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    for event_id in (1, 2, 3):
        world.request(event_id)
    clock.advance(31)
    basecamp.posts = [Post.land, Post.lost_before_landing]
    summary = settle_previous(StartParts(Outbox(ledger, basecamp, AGENT_ID)), clock.monotonic() + 60).sent
    assert summary.results == [SendResult.sent, SendResult.uncertain]
    assert world.state_of(nth_intent(3)) == "pending"


def test_start_carries_on_past_a_listing_that_fails(
    world: LedgerWorld, ledger: Ledger, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    world.request(1)
    clock.advance(31)
    basecamp.posts = [Post.lost_after_landing]
    Outbox(ledger, basecamp, AGENT_ID).flush()
    clock.advance(120)
    world.request(2)
    clock.advance(31)
    basecamp.listings = [Listing.fail]
    settle_previous(StartParts(Outbox(ledger, basecamp, AGENT_ID)), clock.monotonic() + 60)
    assert [world.state_of(nth_intent(1)), world.state_of(nth_intent(2))] == ["sending", "sent"]


def test_start_stops_on_a_ledger_that_cannot_be_settled(
    world: LedgerWorld, ledger: Ledger, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    world.request(1)
    clock.advance(31)
    basecamp.posts = [Post.lost_after_landing]
    Outbox(ledger, basecamp, AGENT_ID).flush()
    clock.advance(120)
    with ledger.write() as connection:
        connection.execute("ALTER TABLE task_events RENAME TO task_events_gone")
    with pytest.raises(OutboxLedgerError):
        settle_previous(StartParts(Outbox(ledger, basecamp, AGENT_ID)), clock.monotonic() + 60)


def test_a_ledger_failure_recording_a_receipt_stops_the_start_whatever_the_deadline(
    world: LedgerWorld, ledger: Ledger, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    world.request(1)
    clock.advance(31)
    with ledger.write() as connection:
        connection.execute(
            "CREATE TRIGGER refuse_receipts BEFORE UPDATE OF receipt_id ON outbox"
            " BEGIN SELECT RAISE(ABORT, 'injected'); END"
        )
    deadline = clock.monotonic() + 6
    basecamp.before_post = lambda destination, body: clock.advance(10)  # the bound passes mid-request
    with pytest.raises(OutboxLedgerError, match="injected"):
        settle_previous(StartParts(Outbox(ledger, basecamp, AGENT_ID)), deadline)
    assert world.state_of(nth_intent(1)) == "sending", "left for reconciliation, never resent"


class _Watching(FakeBasecamp):
    """A Basecamp that notes, at each request, whether the previous process's session files remain."""

    def __init__(self, clock: FakeClock, sessions: Path, seen: list[tuple[object, ...]]) -> None:
        super().__init__(clock)
        self.sessions, self.seen = sessions, seen

    def list(
        self, destination: Destination, since: datetime, creator_id: int, deadline: float
    ) -> list[ListedMessage]:
        self.seen.append(("list", self.sessions.exists()))
        return super().list(destination, since, creator_id, deadline)

    def post(self, destination: Destination, body: str, deadline: float | None = None) -> PostOutcome:
        self.seen.append(("post", self.sessions.exists()))
        return super().post(destination, body, deadline)


class _WatchingRecovery:
    """A recovery that notes what the steps before it left behind."""

    def __init__(self, world: LedgerWorld, sessions: Path, seen: list[tuple[object, ...]]) -> None:
        self.world, self.sessions, self.seen = world, sessions, seen

    def recover(self, stop: threading.Event | None) -> list[str]:
        self.seen.append(("recover", self.world.state_of(nth_intent(1)), self.sessions.exists()))
        return ["att_held"]


def test_start_runs_every_step_once_in_the_designs_order(
    world: LedgerWorld, ledger: Ledger, clock: FakeClock, tmp_path: Path
) -> None:
    sessions = tmp_path / "sessions"
    (sessions / "att_previous").mkdir(parents=True)  # a previous process's session files
    seen: list[tuple[object, ...]] = []
    basecamp = _Watching(clock, sessions / "att_previous", seen)
    world.request(1)
    clock.advance(31)
    basecamp.posts = [Post.lost_after_landing]
    Outbox(ledger, basecamp, AGENT_ID).flush()  # ... and the process died: intent 1 is sending
    clock.advance(600)
    world.request(2)
    clock.advance(31)
    seen.clear()
    parts = StartParts(
        Outbox(ledger, basecamp, AGENT_ID),
        sessions=sessions,
        recovery=_WatchingRecovery(world, sessions / "att_previous", seen),
    )
    started = settle_previous(parts, clock.monotonic() + 60)
    assert START_STEPS == ("reconcile", "sweep", "recover", "send")
    assert seen == [
        ("list", True),  # reconcile, before the sweep
        ("recover", "sent", False),  # after reconcile settled intent 1 and the sweep ran
        ("post", False),  # the send, last
    ]
    assert started.held == ["att_held"]
    assert [world.state_of(nth_intent(n)) for n in (1, 2)] == ["sent", "sent"]


@dataclass
class _Hanging(FakeBasecamp):
    """Its listings do not answer until ``release``; the start's stop comes while one hangs."""

    stop: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)

    def list(
        self, destination: Destination, since: datetime, creator_id: int, deadline: float
    ) -> list[ListedMessage]:
        self.calls.append(("list", destination))
        self.stop.set()  # a SIGTERM lands while Basecamp keeps this listing waiting
        self.release.wait(30)
        raise ListingFailed("no answer")


def _left_sending(world: LedgerWorld, ledger: Ledger, basecamp: FakeBasecamp, clock: FakeClock) -> list[object]:
    """Intent 1 left sending by a previous process, due for reconciliation; intent 2 pending."""
    world.request(1)
    clock.advance(31)
    basecamp.posts = [Post.lost_after_landing]
    Outbox(ledger, basecamp, AGENT_ID).flush()
    clock.advance(600)
    world.request(2)
    clock.advance(31)
    with ledger.read() as connection:
        return list(connection.execute("SELECT * FROM outbox WHERE id = ?", (nth_intent(1),)).fetchone())


def test_a_stop_during_the_starts_listing_ends_the_start_and_leaves_the_intent_as_it_was(
    world: LedgerWorld, ledger: Ledger, clock: FakeClock, tmp_path: Path
) -> None:
    hanging = _Hanging(clock)
    before = _left_sending(world, ledger, hanging, clock)
    seen: list[tuple[object, ...]] = []
    parts = StartParts(Outbox(ledger, hanging, AGENT_ID), recovery=_WatchingRecovery(world, tmp_path, seen))
    began = time.monotonic()
    try:
        started = settle_previous(parts, clock.monotonic() + 60, hanging.stop)
    finally:
        hanging.release.set()
    assert time.monotonic() - began < 5, "the hanging listing was not waited for"
    assert started.stopped == "reconcile"
    assert seen == [], "no step begins after the stop"
    assert hanging.post_count() == 1, "only the previous process's post: nothing sent"
    with ledger.read() as connection:
        after = list(connection.execute("SELECT * FROM outbox WHERE id = ?", (nth_intent(1),)).fetchone())
    assert after == before, "sending stays sending, its failures uncounted"
    assert world.state_of(nth_intent(2)) == "pending"


def test_a_stop_before_the_start_lists_nothing_and_leaves_everything_as_it_was(
    world: LedgerWorld, ledger: Ledger, basecamp: FakeBasecamp, clock: FakeClock, tmp_path: Path
) -> None:
    _left_sending(world, ledger, basecamp, clock)
    basecamp.calls.clear()
    seen: list[tuple[object, ...]] = []
    stop = threading.Event()
    stop.set()
    parts = StartParts(Outbox(ledger, basecamp, AGENT_ID), recovery=_WatchingRecovery(world, tmp_path, seen))
    started = settle_previous(parts, clock.monotonic() + 60, stop)
    assert (started.stopped, basecamp.calls, seen) == ("reconcile", [], [])
    assert [world.state_of(nth_intent(n)) for n in (1, 2)] == ["sending", "pending"]


def test_a_stop_during_the_starts_send_claims_nothing_more(
    world: LedgerWorld, ledger: Ledger, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    for event_id in (1, 2, 3):
        world.request(event_id)
    clock.advance(31)
    stop = threading.Event()
    basecamp.before_post = lambda destination, body: stop.set()  # a SIGTERM lands during the first post
    started = settle_previous(StartParts(Outbox(ledger, basecamp, AGENT_ID)), clock.monotonic() + 60, stop)
    assert (started.stopped, started.sent.results) == ("send", [SendResult.sent])
    assert [world.state_of(nth_intent(n)) for n in (1, 2, 3)] == ["sent", "pending", "pending"]
