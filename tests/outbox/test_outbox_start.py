"""Start: reconcile what a previous process left, then send; a ledger failure stops it."""

import pytest

from shell.clock import FakeClock
from shell.ledger.connection import Ledger
from shell.outbox import Outbox, OutboxLedgerError, SendResult
from tests.support.fake_basecamp import AGENT_ID, FakeBasecamp, Listing, Post
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
    restarted.start(deadline=clock.monotonic() + 60)
    assert [name for name, _ in basecamp.calls] == ["list", "post"]
    assert basecamp.calls[0][1] == boost_on(1)
    assert [world.state_of(n) for n in (1, 2, 3)] == ["sent", "sending", "sent"]


def test_start_stops_sending_at_the_first_send_that_may_not_have_landed(
    world: LedgerWorld, ledger: Ledger, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    for event_id in (1, 2, 3):
        world.request(event_id)
    clock.advance(31)
    basecamp.posts = [Post.land, Post.lost_before_landing]
    summary = Outbox(ledger, basecamp, AGENT_ID).start(deadline=clock.monotonic() + 60)
    assert summary.results == [SendResult.sent, SendResult.uncertain]
    assert world.state_of(3) == "pending"


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
    Outbox(ledger, basecamp, AGENT_ID).start(deadline=clock.monotonic() + 60)
    assert [world.state_of(1), world.state_of(2)] == ["sending", "sent"]


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
        Outbox(ledger, basecamp, AGENT_ID).start(deadline=clock.monotonic() + 60)


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
        Outbox(ledger, basecamp, AGENT_ID).start(deadline=deadline)
    assert world.state_of(1) == "sending", "left for reconciliation, never resent"
