"""Reconciliation lists each destination once for every intent in doubt there."""

from __future__ import annotations

from core import notes
from core.destinations import Destination, MessageKind
from core.posting import by_destination
from shell.clock import FakeClock
from shell.outbox import Outbox, SendResult
from tests.support.fake_basecamp import FakeBasecamp, Listing, Post
from tests.support.ledger_world import LedgerWorld

RECORDINGS = (7001, 7002, 7003)


def lose_answers_over_three_destinations(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock, *, each: int
) -> None:
    """``each`` holding replies at each of three recordings, landed but their answers lost."""
    for number in range(each * len(RECORDINGS)):
        event_id = 100 + number
        world.seen(event_id, recording_id=RECORDINGS[number % len(RECORDINGS)])
        world.verdict(event_id, "blocked", reason="no_route")
    basecamp.posts = [Post.lost_after_landing] * (each * len(RECORDINGS))
    assert outbox.flush().count(SendResult.uncertain) == each * len(RECORDINGS)
    clock.advance(61)


def test_a_restart_lists_each_destination_once_and_adopts_every_intent(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    lose_answers_over_three_destinations(world, outbox, basecamp, clock, each=4)
    assert outbox.reconcile() == 12
    assert basecamp.list_count() == len(RECORDINGS)
    assert [(state, note) for _, _, state, note in world.outbox()] == [("sent", notes.ADOPTED)] * 12
    with world.ledger.read() as connection:
        receipts = [row[0] for row in connection.execute("SELECT receipt_id FROM outbox")]
    assert len(set(receipts)) == 12, "each intent adopted its own message"
    assert basecamp.post_count() == 12


def test_a_failed_listing_backs_off_every_intent_at_that_destination(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    lose_answers_over_three_destinations(world, outbox, basecamp, clock, each=2)
    basecamp.listings = [Listing.fail]
    outbox.reconcile()
    with world.ledger.read() as connection:
        failures = dict(
            connection.execute(
                "SELECT recording_id, sum(reconcile_failures) FROM outbox GROUP BY recording_id"
            )
        )
    assert failures == {RECORDINGS[0]: 2, RECORDINGS[1]: 0, RECORDINGS[2]: 0}
    assert basecamp.list_count() == len(RECORDINGS)


class At:
    def __init__(self, name: str, recording: int) -> None:
        self.name = name
        self.destination = Destination(MessageKind.comment, 1, recording)


def test_grouping_keeps_first_come_order_within_and_between_destinations() -> None:
    rows = [At("a", 1), At("b", 2), At("c", 1), At("d", 3), At("e", 2)]
    assert [[row.name for row in group] for group in by_destination(rows)] == [["a", "c"], ["b", "e"], ["d"]]


def test_one_listing_reaches_back_to_the_earliest_intent_of_its_destination(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    for event_id in (100, 101):
        world.seen(event_id, recording_id=RECORDINGS[0])
        world.verdict(event_id, "blocked", reason="no_route")
        basecamp.posts = [Post.lost_after_landing]
        assert outbox.flush(limit=1).results == [SendResult.uncertain]
        clock.advance(600)  # the second is sent ten minutes after the first
    outbox.reconcile()
    assert basecamp.list_count() == 1
    assert [(state, note) for _, _, state, note in world.outbox()] == [("sent", notes.ADOPTED)] * 2
