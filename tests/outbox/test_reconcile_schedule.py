"""When a sending intent is listed, how far back, how a failed listing backs off, when it stops
(``core.posting``; the due intents are the ledger's query)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core import posting
from core.destinations import Destination, ListedMessage, MessageKind
from core.edges import IntentState
from core.intent_kinds import IntentKind
from core.message_kinds import Intent
from core.posting import (
    Backoff,
    GiveUp,
    PostOutcome,
    Uncertain,
    UncertainCause,
    after_failed_listing,
    backoff_delay,
    listing_since,
)
from shell.clock import FakeClock
from shell.ledger import outbox as rows
from shell.ledger.connection import Ledger
from shell.outbox import Outbox
from tests.support.fake_basecamp import AGENT_ID

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
SECOND = timedelta(seconds=1)


def test_the_constants_are_the_specs() -> None:
    durations = {
        "RECONCILE_AFTER": posting.RECONCILE_AFTER,
        "RECONCILE_SLACK": posting.RECONCILE_SLACK,
        "BACKOFF_START": posting.BACKOFF_START,
        "BACKOFF_MAX": posting.BACKOFF_MAX,
        "LISTING_TIMEOUT": posting.LISTING_TIMEOUT,
        "POST_TIMEOUT": posting.POST_TIMEOUT,
        "MIN_POST_WINDOW": posting.MIN_POST_WINDOW,
        "OUTBOX_TICK": posting.OUTBOX_TICK,
    }
    assert {name: value.total_seconds() for name, value in durations.items()} == {
        "RECONCILE_AFTER": 60,
        "RECONCILE_SLACK": 120,
        "BACKOFF_START": 30,
        "BACKOFF_MAX": 1800,
        "LISTING_TIMEOUT": 30,
        "POST_TIMEOUT": 60,
        "MIN_POST_WINDOW": 5,
        "OUTBOX_TICK": 1,
    }
    counts = {
        "MAX_RECONCILE_FAILURES": posting.MAX_RECONCILE_FAILURES,
        "RUN_BATCH": posting.RUN_BATCH,
        "RUN_RECONCILE_BATCH": posting.RUN_RECONCILE_BATCH,
    }
    assert counts == {"MAX_RECONCILE_FAILURES": 10, "RUN_BATCH": 16, "RUN_RECONCILE_BATCH": 1}


# -- the listing window ---------------------------------------------------------------------


def test_a_listing_reaches_back_past_the_sending_time() -> None:
    created = NOW - timedelta(hours=1)
    assert listing_since(NOW, created) == NOW - timedelta(minutes=2)


def test_without_a_sending_time_a_listing_reaches_back_past_the_creation_time() -> None:
    created = NOW - timedelta(hours=1)
    assert listing_since(None, created) == created - timedelta(minutes=2)


# -- when an intent is due (the ledger's query) ----------------------------------------------


def sending(ledger: Ledger, clock: FakeClock, reconcile_at: datetime | None = None) -> int:
    """A sending intent whose request was made at ``clock.now()``."""
    intent = Intent("k", IntentKind.completion, None, None, None, 0, Destination(MessageKind.comment, 1, 7),
                    "<div>done</div>", clock.now())  # fmt: skip
    with ledger.write() as connection:
        rows.write_intents(connection, [intent], clock.now())
        (identifier,) = connection.execute("SELECT id FROM outbox").fetchone()
        rows.claim(connection, identifier, clock.now())
        if reconcile_at is not None:
            rows.defer(connection, identifier, reconcile_at)
    return int(identifier)


def due(ledger: Ledger, now: datetime, wait: timedelta = posting.RECONCILE_AFTER) -> list[int]:
    with ledger.read() as connection:
        return [row.id for row in rows.due_for_reconciliation(connection, now - wait, now, None)]


def test_a_young_sending_intent_is_left_to_land(ledger: Ledger, clock: FakeClock) -> None:
    identifier = sending(ledger, clock)
    assert due(ledger, clock.now() + timedelta(seconds=59)) == []
    assert due(ledger, clock.now() + timedelta(minutes=1)) == [identifier]


def test_a_sending_intent_a_minute_old_is_due(ledger: Ledger, clock: FakeClock) -> None:
    identifier = sending(ledger, clock)
    assert due(ledger, clock.now() + timedelta(minutes=1)) == [identifier]
    assert due(ledger, clock.now() + timedelta(days=3)) == [identifier]


def test_a_backed_off_intent_waits_for_its_time(ledger: Ledger, clock: FakeClock) -> None:
    later = clock.now() + timedelta(hours=1)
    identifier = sending(ledger, clock, reconcile_at=later)
    assert due(ledger, later - SECOND) == []
    assert due(ledger, later) == [identifier]
    assert due(ledger, later + SECOND) == [identifier]


def test_the_wait_can_be_set_by_the_caller(ledger: Ledger, clock: FakeClock) -> None:
    identifier = sending(ledger, clock)
    assert due(ledger, clock.now() + SECOND) == []
    assert due(ledger, clock.now() + SECOND, wait=timedelta(0)) == [identifier]


class SlowUncertain:
    """A Basecamp whose create takes 55 s and then leaves it unknown whether it landed."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock

    def post(self, destination: Destination, body: str, deadline: float | None = None) -> PostOutcome:
        self.clock.advance(55)
        return Uncertain(UncertainCause.timeout, None, "no answer in time")

    def list(self, destination: Destination, since: datetime, creator_id: int, deadline: float) -> list[ListedMessage]:
        return []

    def rate_limited_for(self) -> float:
        return 0.0

    def probe(self, deadline: float) -> None:
        return None


def test_an_uncertain_post_is_given_a_minute_from_its_failure(ledger: Ledger, clock: FakeClock) -> None:
    intent = Intent("k", IntentKind.completion, None, None, None, 0, Destination(MessageKind.comment, 1, 7),
                    "<div>done</div>", clock.now())  # fmt: skip
    with ledger.write() as connection:
        rows.write_intents(connection, [intent], clock.now())
    Outbox(ledger, SlowUncertain(clock), AGENT_ID).flush()
    with ledger.read() as connection:
        (row,) = rows.intents_in(connection, [IntentState.sending])
    assert row.reconcile_at == clock.now() + timedelta(minutes=1)  # the request failed 55 s after its claim


# -- a failed listing -----------------------------------------------------------------------


def test_the_first_failed_listing_backs_off_thirty_seconds() -> None:
    assert after_failed_listing(0, False, NOW) == Backoff(NOW + timedelta(seconds=30), 1)


def test_each_failure_doubles_the_wait_up_to_thirty_minutes() -> None:
    waits = [backoff_delay(failures) for failures in range(1, 10)]
    assert [int(wait.total_seconds()) for wait in waits] == [
        30, 60, 120, 240, 480, 960, 1800, 1800, 1800,
    ]


def test_the_ninth_failure_still_backs_off() -> None:
    assert after_failed_listing(8, False, NOW) == Backoff(NOW + timedelta(minutes=30), 9)


def test_the_tenth_failure_gives_up_with_the_count_that_gave_up() -> None:
    assert after_failed_listing(9, False, NOW) == GiveUp("listing failed 10 times", 10)


def test_a_count_past_the_limit_still_gives_up_with_its_own_count() -> None:
    assert after_failed_listing(14, False, NOW) == GiveUp("listing failed 15 times", 15)


@pytest.mark.parametrize("failures_before", [0, 3, 9])
def test_an_unlistable_destination_gives_up_at_once(failures_before: int) -> None:
    assert after_failed_listing(failures_before, True, NOW) == GiveUp(
        "destination cannot be listed", failures_before + 1
    )


@pytest.mark.parametrize("failures", [0, -1])
def test_a_backoff_follows_a_failure(failures: int) -> None:
    with pytest.raises(ValueError, match="at least one"):
        backoff_delay(failures)


@given(st.integers(1, 10_000), st.integers(1, 10_000))
def test_backoff_is_monotone_and_capped(first: int, second: int) -> None:
    low, high = sorted((first, second))
    assert timedelta(seconds=30) <= backoff_delay(low) <= backoff_delay(high) <= timedelta(minutes=30)


@given(st.integers(0, 10_000))
def test_a_failed_listing_always_counts_itself(failures_before: int) -> None:
    decision = after_failed_listing(failures_before, False, NOW)
    assert decision.failures == failures_before + 1
    match decision:
        case Backoff(reconcile_at, failures):
            assert failures < 10
            assert NOW < reconcile_at <= NOW + timedelta(minutes=30)
        case GiveUp(note, failures):
            assert failures >= 10
            assert note == f"listing failed {failures} times"


# -- the send window (core.posting) ---------------------------------------------------


def test_a_request_is_bounded_by_the_post_timeout() -> None:
    assert posting.request_timeout(NOW, None) == timedelta(minutes=1)
    assert posting.request_timeout(NOW, NOW + timedelta(minutes=5)) == timedelta(minutes=1)


def test_a_request_never_outlives_its_callers_deadline() -> None:
    assert posting.request_timeout(NOW, NOW + 7 * SECOND) == 7 * SECOND
    assert posting.request_timeout(NOW, NOW - SECOND) == timedelta(0)


def test_nothing_is_claimed_with_less_than_the_post_window_left() -> None:
    assert posting.may_claim(NOW, None)
    assert posting.may_claim(NOW, NOW + 5 * SECOND)
    assert not posting.may_claim(NOW, NOW + 5 * SECOND - timedelta(microseconds=1))
    assert not posting.may_claim(NOW, NOW - SECOND)


def test_a_short_post_timeout_shortens_the_window() -> None:
    # PostTimeout 1 s with 1.5 s left: there is time for one bounded request.
    assert posting.may_claim(NOW, NOW + 1.5 * SECOND, post_timeout=SECOND)
    assert not posting.may_claim(NOW, NOW + 0.5 * SECOND, post_timeout=SECOND)
