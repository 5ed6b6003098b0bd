"""Claim, one request, receipt: invariants 3, 4 (sending side), 7 and 9, the hold, the gates."""

import threading
from pathlib import Path

import pytest

from core import notes
from core.destinations import Destination
from core.resolution import Resend
from shell.clock import FakeClock
from shell.connector import StartParts, settle_previous
from shell.ledger import outbox as rows
from shell.ledger.connection import Ledger, open_ledger
from shell.ledger.resolution import resolve_intent
from shell.outbox import Outbox, OutboxLedgerError, OutboxOptions, SendResult
from tests.support.fake_basecamp import AGENT_ID, FakeBasecamp, Post
from tests.support.ids import nth_intent
from tests.support.ledger_world import LedgerWorld, boost_on


def test_a_due_guard_is_claimed_posted_once_and_receipted(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    world.request(101)
    clock.advance(31)
    assert outbox.flush().results == [SendResult.sent, SendResult.nothing_due]
    (message,) = basecamp.messages_at(boost_on(101))
    assert message.text == "👀 received"
    assert world.outbox() == [(nth_intent(1), "guard_ack", "sent", "")]
    with world.ledger.read() as connection:
        assert connection.execute("SELECT receipt_id FROM outbox").fetchone() == (message.id,)


def test_a_guard_waits_its_thirty_seconds(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    world.request(101)
    clock.advance(29)
    assert outbox.flush().results == [SendResult.nothing_due]
    clock.advance(1)
    assert outbox.flush().count(SendResult.sent) == 1


def test_nothing_is_sent_without_a_durable_sending_row(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock, ledger_path: Path
) -> None:
    world.request(101)
    clock.advance(31)
    seen: list[tuple[str, str | None]] = []

    def read_through_another_handle(destination: Destination, body: str) -> None:
        with open_ledger(ledger_path) as other, other.read() as connection:
            seen.append(connection.execute("SELECT state, sending_at IS NOT NULL FROM outbox").fetchone())

    basecamp.before_post = read_through_another_handle
    outbox.flush()
    assert seen == [("sending", 1)]


def test_a_guard_is_reported_fired_from_its_claim(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock, ledger_path: Path
) -> None:
    world.request(101)
    task_id = world.task(101)
    clock.advance(31)
    guards: list[str] = []

    def read_guard(destination: Destination, body: str) -> None:
        with open_ledger(ledger_path) as other, other.read() as connection:
            guards.append(connection.execute("SELECT guard FROM task_events").fetchone()[0])

    basecamp.before_post = read_guard
    outbox.flush()
    assert guards == ["fired"]
    assert world.get_dispatch(task_id, 101) == "fired", (
        "a worker asking now is told the connector acknowledged"
    )


def test_a_refused_request_is_canceled_with_the_note_and_never_listed(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    world.request(101)
    clock.advance(31)
    basecamp.posts = [Post.refuse]
    assert outbox.flush().results[0] is SendResult.refused
    assert world.outbox() == [(nth_intent(1), "guard_ack", "canceled", notes.REFUSED_NOTE)]
    clock.advance(3600)
    outbox.run_once()
    assert (basecamp.post_count(), basecamp.list_count()) == (1, 0)


def test_a_refused_guard_marks_its_rows_refused_never_doubled_nor_told_acknowledged(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    world.request(101)
    task_id = world.task(101)
    clock.advance(31)
    basecamp.posts = [Post.refuse]
    outbox.flush()
    assert world.get_dispatch(task_id, 101) == "refused"
    assert basecamp.messages_at(boost_on(101)) == []


def test_an_uncertain_post_is_never_posted_again(
    world: LedgerWorld, ledger: Ledger, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    world.request(101)
    clock.advance(31)
    basecamp.posts = [Post.lost_before_landing]
    assert outbox.flush().results[0] is SendResult.uncertain
    outbox.flush()
    clock.advance(3600)
    outbox.run_once()
    restarted = Outbox(ledger, basecamp, AGENT_ID)
    settle_previous(StartParts(restarted), clock.monotonic() + 60)
    restarted.run_once()
    assert basecamp.post_count() == 1
    assert world.outbox() == [(nth_intent(1), "guard_ack", "indeterminate", notes.matching_messages(0))]


def test_a_failed_post_is_given_its_minute_from_the_failure_not_the_claim(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    world.request(101)
    clock.advance(31)
    basecamp.posts = [Post.lost_after_landing]
    basecamp.before_post = lambda destination, body: clock.advance(50)  # a slow request
    outbox.flush()
    basecamp.before_post = None
    clock.advance(30)  # 80 s after the claim, 30 s after the failure
    outbox.run_once()
    assert basecamp.list_count() == 0
    clock.advance(31)
    outbox.run_once()
    assert basecamp.list_count() == 1
    assert world.state_of(nth_intent(1)) == "sent"


def test_one_flush_never_claims_an_intent_twice_even_after_a_resend_mid_flush(
    world: LedgerWorld, ledger: Ledger, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    world.request(101)
    world.request(102)
    clock.advance(31)
    basecamp.posts = [Post.refuse, Post.land]

    def a_person_resends_the_first(destination: Destination, body: str) -> None:
        if destination == boost_on(102):
            with ledger.write() as connection:
                connection.execute("UPDATE outbox SET state = 'pending', sending_at = NULL WHERE id = ?", (nth_intent(1),))

    basecamp.before_post = a_person_resends_the_first
    outbox.flush()
    assert basecamp.post_count() == 2, "the resent intent waits for the next flush"
    assert world.state_of(nth_intent(1)) == "pending"
    outbox.flush()
    assert basecamp.post_count() == 3


def test_an_outcome_is_recorded_only_on_the_row_it_claimed(
    world: LedgerWorld, ledger: Ledger, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    world.request(101)
    clock.advance(31)

    def break_the_edge(destination: Destination, body: str) -> None:
        with ledger.write() as connection:  # what only a broken edge trigger could do
            connection.execute("DROP TRIGGER rule_outbox_state_edges")
            connection.execute("UPDATE outbox SET state = 'pending', sending_at = NULL")

    basecamp.before_post = break_the_edge
    with pytest.raises(OutboxLedgerError, match="no longer sending"):
        outbox.flush()
    assert basecamp.post_count() == 1


def test_the_hold_pauses_sending_and_reconciliation_goes_on(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    world.request(101)
    world.request(102)
    clock.advance(31)
    basecamp.posts = [Post.lost_after_landing]
    outbox.flush(limit=1)
    world.hold()
    clock.advance(61)
    summary = outbox.run_once()
    assert summary.results == [SendResult.held]
    assert basecamp.post_count() == 1
    assert world.state_of(nth_intent(1)) == "sent", "the held connector still adopted what it had sent"
    assert world.state_of(nth_intent(2)) == "pending"
    world.release()
    outbox.run_once()
    assert world.state_of(nth_intent(2)) == "sent"


def test_get_dispatch_cancels_the_pending_guard_in_its_own_transaction(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    world.request(101)
    task_id = world.task(101)
    clock.advance(20)
    assert world.get_dispatch(task_id, 101) == "canceled"
    assert world.outbox() == [(nth_intent(1), "guard_ack", "canceled", notes.CANCELED_BY_GET_DISPATCH)]
    clock.advance(60)
    outbox.run_once()
    assert basecamp.post_count() == 0


def test_a_guard_no_longer_called_for_is_canceled_at_claim(
    world: LedgerWorld, ledger: Ledger, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    world.request(101)
    with ledger.write() as connection:  # a person closed the request before its guard was due
        connection.execute("UPDATE events SET state = 'discarded', reason = 'by_operator' WHERE id = 101")
    clock.advance(31)
    assert outbox.flush().results[0] is SendResult.canceled
    assert world.outbox() == [(nth_intent(1), "guard_ack", "canceled", notes.NO_LONGER_CALLED_FOR)]
    assert basecamp.post_count() == 0


def test_a_holding_reply_stands_down_when_the_route_arrives(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp
) -> None:
    world.seen(101)
    world.verdict(101, "blocked", "no_route")
    world.verdict(101, "admitted")  # the route arrived before the reply went out
    outbox.flush()
    holding = [row for row in world.outbox() if row[1] == "holding_reply"]
    assert holding == [(nth_intent(1), "holding_reply", "canceled", notes.NO_LONGER_CALLED_FOR)]
    assert basecamp.post_count() == 0


def test_a_still_running_notice_is_posted_while_its_attempt_runs_with_work_outstanding(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp
) -> None:
    world.request(101)
    task_id = world.task(101)
    world.get_dispatch(task_id, 101)
    attempt_id = world.attempt(task_id)
    world.tick(attempt_id)
    outbox.flush()
    still = [row[1:3] for row in world.outbox() if row[1] == "still_running"]
    assert still == [("still_running", "sent")]
    assert basecamp.post_count() == 1


def test_a_still_running_notice_is_never_posted_after_its_attempt_ended(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    world.request(101)
    task_id = world.task(101)
    world.get_dispatch(task_id, 101)
    attempt_id = world.attempt(task_id)
    world.tick(attempt_id)
    world.report(task_id, 101, "succeeded", reply_id=9)
    world.end_attempt(attempt_id, "finished")
    outbox.flush()
    still = [row for row in world.outbox() if row[1] == "still_running"]
    assert still == [(nth_intent(2), "still_running", "canceled", notes.ATTEMPT_ENDED)]
    assert basecamp.post_count() == 0


def test_after_a_failed_connection_nothing_is_claimed_until_a_read_succeeds(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    for event_id in (101, 102, 103):
        world.request(event_id)
    clock.advance(31)
    basecamp.posts = [Post.not_connected]
    basecamp.reachable = False
    assert outbox.flush().results == [SendResult.retry, SendResult.waiting]
    assert outbox.flush().results == [SendResult.waiting]
    assert basecamp.post_count() == 1, "one failed connection, not a queue of them"
    basecamp.reachable = True
    assert outbox.flush().count(SendResult.sent) == 2
    clock.advance(30)
    assert outbox.flush().count(SendResult.sent) == 1, "the one that never connected, once"


def test_while_a_429_wait_runs_nothing_is_claimed(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    world.request(101)
    world.request(102)
    clock.advance(31)
    basecamp.posts = [Post.rate_limited]
    assert outbox.flush().results == [SendResult.retry, SendResult.waiting]
    assert world.state_of(nth_intent(2)) == "pending"
    clock.advance(30)
    assert outbox.flush().count(SendResult.sent) == 2, "the rate-limited one is due again after Retry-After"


def test_a_flush_claims_nothing_with_under_five_seconds_left(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    world.request(101)
    clock.advance(31)
    assert outbox.flush(deadline=clock.monotonic() + 4.9).results == [SendResult.no_time]
    assert world.state_of(nth_intent(1)) == "pending"
    assert outbox.flush(deadline=clock.monotonic() + 5.0).count(SendResult.sent) == 1


def test_a_request_is_capped_at_the_flush_deadline(
    world: LedgerWorld, ledger: Ledger, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    deadlines: list[float | None] = []
    original = basecamp.post

    def record_deadline(destination: Destination, body: str, deadline: float | None = None) -> object:
        deadlines.append(deadline)
        return original(destination, body, deadline)

    basecamp.post = record_deadline  # type: ignore[method-assign]
    world.request(101)
    clock.advance(31)
    Outbox(ledger, basecamp, AGENT_ID, OutboxOptions()).flush(deadline=clock.monotonic() + 7)
    assert deadlines == [clock.monotonic() + 7]


def test_a_flush_with_a_deadline_does_not_outwait_it_behind_a_request_in_flight(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    """A shutdown's flush (a deadline) while the outbox's own thread waits on a slow POST."""
    world.request(101)
    world.request(102)
    clock.advance(31)
    in_flight, release = threading.Event(), threading.Event()

    def slow(destination: Destination, body: str) -> None:
        in_flight.set()
        release.wait(10)

    basecamp.before_post = slow
    running = threading.Thread(target=outbox.send_next, args=(set(),))
    running.start()
    try:
        assert in_flight.wait(5)
        summary = outbox.flush(deadline=clock.monotonic() + 0.5)
        assert running.is_alive(), "the flush returned while the other request was still in flight"
    finally:
        release.set()
        running.join(10)
    assert summary.results == [SendResult.no_time]
    assert basecamp.post_count() == 1


def test_a_follow_up_a_person_discarded_is_not_work_outstanding(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp
) -> None:
    from core.decisions import Action
    from shell.ledger import decisions as ledger_decisions
    from shell.ledger import tasks
    from tests.support.ledger_world import PROJECT

    world.request(101)
    launched = world.launch(101)
    world.seen(102, recording_id=1_000_101)  # a follow-up on the same card
    world.verdict(102, "queued")
    with world.ledger.write() as connection:
        assert tasks.join_follow_ups(connection, launched.task_id, world.ledger.clock.now()) == (102,)
    ledger_decisions.decide(
        world.ledger, 102, Action.discard, "local:ada", world.ledger.clock.now(), served=frozenset({PROJECT})
    ).unwrap()
    world.get_dispatch(launched.task_id, 101)
    world.report(launched.task_id, 101, "succeeded", reply_id=9)
    world.tick(launched.attempt_id)
    outbox.flush()
    still = [row[1:] for row in world.outbox() if row[1] == "still_running"]
    assert still == [("still_running", "canceled", notes.ALL_REPORTED)]
    assert basecamp.post_count() == 0


@pytest.mark.parametrize("behaviour", [Post.not_connected, Post.rate_limited])
def test_a_request_that_never_reached_basecamp_goes_back_to_pending_and_is_sent_once(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock, behaviour: Post
) -> None:
    world.request(101)
    clock.advance(31)
    basecamp.posts = [behaviour]
    assert outbox.flush().results[0] is SendResult.retry
    (row,) = world.outbox()
    assert row[2] == "pending"
    assert row[3] in notes.NOT_CREATED_NOTES
    clock.advance(3600)
    outbox.run_once()
    outbox.run_once()
    assert world.outbox() == [(nth_intent(1), "guard_ack", "sent", "")]
    assert len(basecamp.messages_at(boost_on(101))) == 1
    assert basecamp.list_count() == 0, "nothing was created, so nothing is listed"


def test_a_retried_guard_still_goes_through_the_claim_check(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    world.request(101)
    task_id = world.task(101)
    clock.advance(31)
    basecamp.posts = [Post.not_connected]
    outbox.flush()
    assert world.get_dispatch(task_id, 101) == "fired", "fired at the claim is final for its workers"
    world.ack(task_id, 101, ack_id=5_000_001)  # what a worker told guard_acknowledged cannot post
    clock.advance(3600)
    outbox.run_once()
    assert world.outbox() == [(nth_intent(1), "guard_ack", "sent", "")], "the rows it fired are its own, not a cancel"
    assert len(basecamp.messages_at(boost_on(101))) == 1


def tried_until_given_up(world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock) -> None:
    """Intent 1 tried each time it falls due, as the running outbox claims it, never reaching
    Basecamp (which answers reads: the outbox does not wait out an outage), until it is given up."""
    for _ in range(100):
        basecamp.posts = [Post.not_connected]
        outbox.flush()
        if world.state_of(nth_intent(1)) != "pending":
            return
        with world.ledger.read() as connection:
            found = rows.intent(connection, nth_intent(1))
        assert found is not None
        clock.advance(max((found.not_before - clock.now()).total_seconds(), 0.0))
    raise AssertionError("never given up")


def test_a_request_that_never_reaches_basecamp_for_a_day_is_given_up_for_a_person(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    world.request(101)
    clock.advance(31)
    tried_until_given_up(world, outbox, basecamp, clock)
    assert world.outbox() == [(nth_intent(1), "guard_ack", "canceled", notes.given_up(notes.NOT_CONNECTED))]
    # The waits double from 30 s to 30 min, then one try each 30 min to the end of the day.
    assert basecamp.post_count() == 8 + 47
    assert basecamp.messages_at(boost_on(101)) == []


def test_a_resent_intent_counts_its_day_afresh(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    world.request(101)
    clock.advance(31)
    tried_until_given_up(world, outbox, basecamp, clock)
    assert world.outbox() == [(nth_intent(1), "guard_ack", "canceled", notes.given_up(notes.NOT_CONNECTED))]
    resolve_intent(world.ledger, nth_intent(1), Resend("local:test"))
    basecamp.posts = [Post.not_connected]
    assert outbox.flush().results[0] is SendResult.retry, "a new day of retries, not given up at once"
    assert world.outbox() == [(nth_intent(1), "guard_ack", "pending", notes.NOT_CONNECTED)]
