"""core.reconcile_schedule and core.outbox_policy: when to list, how far back, how to back off, when to stop."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core import outbox_policy, reconcile_schedule
from core.reconcile_schedule import (
    Backoff,
    GiveUp,
    after_failed_listing,
    backoff_delay,
    due_for_reconciliation,
    listing_since,
    reconcile_at_after_uncertain_post,
)

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
SECOND = timedelta(seconds=1)


def test_the_constants_are_the_specs() -> None:
    durations = {
        "RECONCILE_AFTER": reconcile_schedule.RECONCILE_AFTER,
        "RECONCILE_SLACK": reconcile_schedule.RECONCILE_SLACK,
        "BACKOFF_START": reconcile_schedule.BACKOFF_START,
        "BACKOFF_MAX": reconcile_schedule.BACKOFF_MAX,
        "LISTING_TIMEOUT": reconcile_schedule.LISTING_TIMEOUT,
        "POST_TIMEOUT": outbox_policy.POST_TIMEOUT,
        "MIN_POST_WINDOW": outbox_policy.MIN_POST_WINDOW,
        "OUTBOX_TICK": outbox_policy.OUTBOX_TICK,
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
        "MAX_RECONCILE_FAILURES": reconcile_schedule.MAX_RECONCILE_FAILURES,
        "RUN_BATCH": outbox_policy.RUN_BATCH,
        "RUN_RECONCILE_BATCH": outbox_policy.RUN_RECONCILE_BATCH,
    }
    assert counts == {"MAX_RECONCILE_FAILURES": 10, "RUN_BATCH": 16, "RUN_RECONCILE_BATCH": 1}


# -- the listing window ---------------------------------------------------------------------


def test_a_listing_reaches_back_past_the_sending_time() -> None:
    created = NOW - timedelta(hours=1)
    assert listing_since(NOW, created) == NOW - timedelta(minutes=2)


def test_without_a_sending_time_a_listing_reaches_back_past_the_creation_time() -> None:
    created = NOW - timedelta(hours=1)
    assert listing_since(None, created) == created - timedelta(minutes=2)


# -- when an intent is due ------------------------------------------------------------------


def test_a_young_sending_intent_is_left_to_land() -> None:
    sending_at = NOW - timedelta(seconds=59)
    assert not due_for_reconciliation(sending_at, None, NOW)
    assert due_for_reconciliation(sending_at, None, NOW + SECOND)


def test_a_sending_intent_a_minute_old_is_due() -> None:
    assert due_for_reconciliation(NOW - timedelta(minutes=1), None, NOW)
    assert due_for_reconciliation(NOW - timedelta(days=3), None, NOW)


def test_a_backed_off_intent_waits_for_its_time() -> None:
    sending_at = NOW - timedelta(hours=1)
    assert not due_for_reconciliation(sending_at, NOW + SECOND, NOW)
    assert due_for_reconciliation(sending_at, NOW, NOW)
    assert due_for_reconciliation(sending_at, NOW - SECOND, NOW)


def test_the_wait_can_be_set_by_the_caller() -> None:
    sending_at = NOW - SECOND
    assert not due_for_reconciliation(sending_at, None, NOW)
    assert due_for_reconciliation(sending_at, None, NOW, wait=timedelta(0))


def test_an_uncertain_post_is_given_a_minute_from_its_failure() -> None:
    failed_at = NOW + timedelta(seconds=55)  # the request timed out long after the claim
    assert reconcile_at_after_uncertain_post(failed_at) == failed_at + timedelta(minutes=1)


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


# -- the send window (core.outbox_policy) ---------------------------------------------------


def test_a_request_is_bounded_by_the_post_timeout() -> None:
    assert outbox_policy.request_timeout(NOW, None) == timedelta(minutes=1)
    assert outbox_policy.request_timeout(NOW, NOW + timedelta(minutes=5)) == timedelta(minutes=1)


def test_a_request_never_outlives_its_callers_deadline() -> None:
    assert outbox_policy.request_timeout(NOW, NOW + 7 * SECOND) == 7 * SECOND
    assert outbox_policy.request_timeout(NOW, NOW - SECOND) == timedelta(0)


def test_nothing_is_claimed_with_less_than_the_post_window_left() -> None:
    assert outbox_policy.may_claim(NOW, None)
    assert outbox_policy.may_claim(NOW, NOW + 5 * SECOND)
    assert not outbox_policy.may_claim(NOW, NOW + 5 * SECOND - timedelta(microseconds=1))
    assert not outbox_policy.may_claim(NOW, NOW - SECOND)


def test_a_short_post_timeout_shortens_the_window() -> None:
    # PostTimeout 1 s with 1.5 s left: there is time for one bounded request.
    assert outbox_policy.may_claim(NOW, NOW + 1.5 * SECOND, post_timeout=SECOND)
    assert not outbox_policy.may_claim(NOW, NOW + 0.5 * SECOND, post_timeout=SECOND)
