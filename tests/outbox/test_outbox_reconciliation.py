"""Reconciliation by listing, never by posting: invariants 4, 5 and 10."""

import contextlib

from core import notes
from core.posting import MAX_RECONCILE_FAILURES
from shell.clock import FakeClock
from shell.connector import StartParts, settle_previous
from shell.ledger.connection import Ledger
from shell.outbox import Outbox, SendResult
from tests.support.fake_basecamp import AGENT_ID, SOMEONE_ELSE, FakeBasecamp, Listing, Post
from tests.support.ids import nth_intent
from tests.support.ledger_world import LedgerWorld, boost_on


def lose_the_answer(
    world: LedgerWorld,
    outbox: Outbox,
    basecamp: FakeBasecamp,
    clock: FakeClock,
    *,
    event_id: int = 101,
    landed: bool = True,
) -> None:
    world.request(event_id)
    clock.advance(31)
    basecamp.posts = [Post.lost_after_landing if landed else Post.lost_before_landing]
    assert outbox.flush(limit=1).results == [SendResult.uncertain]


def test_a_landed_request_whose_answer_was_lost_is_adopted_without_posting(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    lose_the_answer(world, outbox, basecamp, clock)
    outbox.run_once()
    assert basecamp.list_count() == 0, "not listed before it had its minute to land"
    clock.advance(61)
    outbox.run_once()
    (message,) = basecamp.messages_at(boost_on(101))
    assert world.outbox() == [(nth_intent(1), "guard_ack", "sent", notes.ADOPTED)]
    with world.ledger.read() as connection:
        assert connection.execute("SELECT receipt_id FROM outbox").fetchone() == (message.id,)
    assert basecamp.post_count() == 1


def test_a_request_that_never_landed_is_indeterminate_not_resent(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    lose_the_answer(world, outbox, basecamp, clock, landed=False)
    clock.advance(61)
    outbox.run_once()
    assert world.outbox() == [(nth_intent(1), "guard_ack", "indeterminate", notes.matching_messages(0))]
    assert basecamp.post_count() == 1


def test_two_matching_messages_are_indeterminate(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    lose_the_answer(world, outbox, basecamp, clock)
    basecamp.seed(boost_on(101), "👀 received")
    clock.advance(61)
    outbox.run_once()
    assert world.outbox() == [(nth_intent(1), "guard_ack", "indeterminate", notes.matching_messages(2))]


def test_someone_else_quoting_the_agent_is_not_a_candidate(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    lose_the_answer(world, outbox, basecamp, clock)
    basecamp.seed(boost_on(101), "👀 received", creator_id=SOMEONE_ELSE)
    clock.advance(61)
    outbox.run_once()
    assert world.state_of(nth_intent(1)) == "sent"


def test_reconciliation_passes_over_a_match_another_intent_owns(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    world.request(101, recording_id=555)
    world.request(102, recording_id=555)  # two requests on one recording: two identical guards
    clock.advance(31)
    basecamp.posts = [Post.land, Post.lost_before_landing]
    outbox.flush()
    clock.advance(61)
    outbox.run_once()
    assert world.outbox() == [
        (nth_intent(1), "guard_ack", "sent", ""),
        (nth_intent(2), "guard_ack", "indeterminate", notes.matching_messages(0)),
    ]


def test_a_pending_rival_that_could_claim_the_same_message_makes_it_indeterminate(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    world.request(101, recording_id=555)
    clock.advance(31)
    basecamp.posts = [Post.lost_after_landing]
    outbox.flush()
    world.request(102, recording_id=555)  # its guard is pending
    clock.advance(61)
    outbox.reconcile()  # listing only: the rival stays pending
    assert world.outbox()[0] == (nth_intent(1), "guard_ack", "indeterminate", notes.rival_could_claim(nth_intent(2)))


def test_indeterminate_and_abandoned_rivals_block_adoption(
    world: LedgerWorld, ledger: Ledger, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    for rival_state in ("indeterminate", "abandoned"):
        event_id = 200 if rival_state == "indeterminate" else 300
        world.request(event_id, recording_id=event_id)
        world.request(event_id + 1, recording_id=event_id)
        with ledger.write() as connection:
            connection.execute(
                "UPDATE outbox SET state = 'sending', sending_at = ? WHERE event_id = ?",
                (world.now(), event_id + 1),
            )
            connection.execute(
                "UPDATE outbox SET state = 'indeterminate', note = 'x' WHERE event_id = ?", (event_id + 1,)
            )
            if rival_state == "abandoned":
                connection.execute(
                    "UPDATE outbox SET state = 'abandoned' WHERE event_id = ?", (event_id + 1,)
                )
        clock.advance(31)
        basecamp.posts = [Post.lost_after_landing]
        outbox.flush()
        clock.advance(61)
        outbox.run_once()
        with ledger.read() as connection:
            ((state, note),) = connection.execute(
                "SELECT state, note FROM outbox WHERE event_id = ?", (event_id,)
            )
        assert state == "indeterminate", rival_state
        assert note.startswith("intent "), rival_state


def test_a_workers_own_acknowledgement_is_never_adopted(
    world: LedgerWorld, ledger: Ledger, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    lose_the_answer(world, outbox, basecamp, clock, landed=False)
    worker_boost = basecamp.seed(boost_on(101), "👀 received")  # the worker's words happen to match
    task_id = world.task(101)
    world.get_dispatch(task_id, 101)
    world.ack(task_id, 101, worker_boost)
    clock.advance(61)
    outbox.run_once()
    assert world.outbox() == [(nth_intent(1), "guard_ack", "indeterminate", notes.matching_messages(0))]


def test_a_workers_message_is_matched_by_kind(
    world: LedgerWorld, ledger: Ledger, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    lose_the_answer(world, outbox, basecamp, clock)
    (boost,) = basecamp.messages_at(boost_on(101))
    task_id = world.task(101)
    with ledger.write() as connection:  # a comment reply whose id happens to equal the boost's
        connection.execute("UPDATE task_events SET reply_id = ? WHERE task_id = ?", (boost.id, task_id))
    clock.advance(61)
    outbox.run_once()
    assert world.state_of(nth_intent(1)) == "sent"


def test_a_failed_listing_settles_nothing_and_backs_off_doubling_until_it_gives_up(
    world: LedgerWorld, ledger: Ledger, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    lose_the_answer(world, outbox, basecamp, clock)
    basecamp.listings = [Listing.fail] * MAX_RECONCILE_FAILURES
    clock.advance(61)
    waits = []
    for _ in range(MAX_RECONCILE_FAILURES):
        assert outbox.reconcile() == 1
        with ledger.read() as connection:
            state, failures, reconcile_at = connection.execute(
                "SELECT state, reconcile_failures, reconcile_at FROM outbox"
            ).fetchone()
        if state == "sending":
            from core.timestamps import parse_timestamp

            wait = (parse_timestamp(reconcile_at) - clock.now()).total_seconds()
            waits.append(wait)
            assert outbox.reconcile() == 0, "backed off: not listed again before its time"
            clock.advance(wait)
    assert waits == [30, 60, 120, 240, 480, 960, 1800, 1800, 1800]
    assert (state, failures) == ("indeterminate", MAX_RECONCILE_FAILURES)
    assert world.outbox()[0][3] == notes.listing_failed(MAX_RECONCILE_FAILURES)
    assert basecamp.post_count() == 1


def test_an_unlistable_destination_is_indeterminate_at_once(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    lose_the_answer(world, outbox, basecamp, clock)
    basecamp.listings = [Listing.unlistable]
    clock.advance(61)
    outbox.reconcile()
    assert world.outbox() == [(nth_intent(1), "guard_ack", "indeterminate", notes.UNLISTABLE)]


def test_a_running_outbox_sends_a_batch_then_lists_at_most_one_destination(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    for event_id in (1, 2):
        lose_the_answer(world, outbox, basecamp, clock, event_id=event_id)
    for event_id in range(10, 40):
        world.request(event_id)
    clock.advance(61)
    summary = outbox.run_once()
    assert summary.count(SendResult.sent) == 16
    assert basecamp.list_count() == 1
    assert basecamp.calls[-1][0] == "list", "the due sends went first"
    outbox.run_once()
    assert basecamp.list_count() == 2


class Crash(Exception):
    """The process died here."""


def test_a_restart_leaves_a_young_sending_intent_its_minute_to_land(
    world: LedgerWorld, ledger: Ledger, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    world.request(101)
    clock.advance(31)

    def die(destination: object, body: str) -> None:
        raise Crash

    basecamp.before_post = die
    with contextlib.suppress(Crash):  # the claim committed; the process died before the request
        Outbox(ledger, basecamp, AGENT_ID).flush()
    basecamp.before_post = None
    restarted = Outbox(ledger, basecamp, AGENT_ID)
    clock.advance(10)
    settle_previous(StartParts(restarted), clock.monotonic() + 60)
    restarted.run_once()
    assert basecamp.list_count() == 0, "listing it now could only call it indeterminate for want of patience"
    clock.advance(51)
    restarted.run_once()
    assert basecamp.list_count() == 1
    assert world.outbox() == [(nth_intent(1), "guard_ack", "indeterminate", notes.matching_messages(0))]
    assert basecamp.post_count() == 0
