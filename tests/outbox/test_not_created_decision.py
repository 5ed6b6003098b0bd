"""core.posting: which refused creates provably never reached Basecamp, their backoff and bound."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st
from returns.result import Success

from core import notes
from core.edges import INTENT_EDGES, Actor, IntentState
from core.posting import (
    FIRST_RETRY_WAIT,
    LONGEST_RETRY_WAIT,
    RETRY_BOUND,
    RefusalCause,
    Refuse,
    Refused,
    Retry,
    StopRetrying,
    after_refusal,
    not_created_cause,
)

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
NOT_CONNECTED = Refused(RefusalCause.not_connected, None, "could not connect")
NOT_SENT = Refused(RefusalCause.not_sent, None, "not sent: the rate-limit wait passes the deadline")


def answered(status: int, retry_after: float | None = None) -> Refused:
    return Refused(RefusalCause.answered, status, f"HTTP {status}", retry_after)


def test_a_connection_that_never_opened_is_retried_with_its_cause() -> None:
    assert after_refusal(NOT_CONNECTED, NOW, None) == Retry(notes.NOT_CONNECTED, NOW + FIRST_RETRY_WAIT, NOW)


def test_a_request_never_written_is_retried_with_its_cause() -> None:
    assert after_refusal(NOT_SENT, NOW, None) == Retry(notes.NOT_WRITTEN, NOW + FIRST_RETRY_WAIT, NOW)


def test_a_429_is_retried_no_sooner_than_its_retry_after() -> None:
    assert after_refusal(answered(429, 120.0), NOW, None) == Retry(
        notes.RATE_LIMITED, NOW + timedelta(seconds=120), NOW
    )
    assert after_refusal(answered(429, None), NOW, None) == Retry(notes.RATE_LIMITED, NOW + FIRST_RETRY_WAIT, NOW)


def test_a_408_is_retried() -> None:
    assert not_created_cause(answered(408)) == notes.REQUEST_TIMEOUT


@given(st.integers(400, 499).filter(lambda status: status not in (401, 408, 429)))
def test_basecamp_s_own_refusal_is_canceled_with_the_refused_note(status: int) -> None:
    assert after_refusal(answered(status), NOW, None) == Refuse(notes.REFUSED_NOTE)
    assert not_created_cause(answered(status)) is None


def test_after_a_day_of_retrying_it_is_given_up_with_its_cause_for_a_person() -> None:
    since = NOW - RETRY_BOUND
    assert after_refusal(NOT_CONNECTED, NOW, since) == StopRetrying(notes.given_up(notes.NOT_CONNECTED))
    assert isinstance(after_refusal(NOT_CONNECTED, NOW, since + timedelta(seconds=1)), Retry)


@given(
    st.sampled_from([NOT_CONNECTED, NOT_SENT, answered(429), answered(408), answered(429, 5.0)]),
    st.one_of(st.none(), st.timedeltas(timedelta(0), timedelta(days=3))),
    st.one_of(st.none(), st.floats(0.0, 1e30)),
)
def test_every_outcome_that_never_reached_basecamp_is_retried_later_or_given_up(
    outcome: Refused, tried_for: timedelta | None, retry_after: float | None
) -> None:
    if outcome.status == 429:
        outcome = answered(429, retry_after)
    since = None if tried_for is None else NOW - tried_for
    after = after_refusal(outcome, NOW, since)
    cause = not_created_cause(outcome)
    assert cause in notes.NOT_CREATED_NOTES
    match after:
        case Retry(note, due_at, kept):
            assert note == cause
            assert kept == (NOW if since is None else since)
            assert due_at >= NOW + FIRST_RETRY_WAIT
            if retry_after is None or outcome.status != 429:
                assert due_at <= NOW + LONGEST_RETRY_WAIT
            else:
                assert due_at >= NOW + timedelta(seconds=min(retry_after, RETRY_BOUND.total_seconds()))
            assert INTENT_EDGES.step(IntentState.sending, IntentState.pending, Actor.automatic, note) == Success(
                IntentState.pending
            )
        case StopRetrying(note):
            assert tried_for is not None
            assert tried_for >= RETRY_BOUND
            assert notes.resendable(note)
            assert INTENT_EDGES.step(IntentState.canceled, IntentState.pending, Actor.person, note) == Success(
                IntentState.pending
            )
        case Refuse():
            raise AssertionError(f"{outcome} never reached Basecamp, yet was canceled as refused")


def test_the_waits_grow_with_the_time_spent_retrying() -> None:
    waits = [
        after_refusal(NOT_CONNECTED, NOW, NOW - tried).due_at - NOW  # type: ignore[union-attr]
        for tried in (timedelta(0), timedelta(minutes=2), timedelta(minutes=10), timedelta(hours=5))
    ]
    assert waits == [FIRST_RETRY_WAIT, timedelta(minutes=2), timedelta(minutes=10), LONGEST_RETRY_WAIT]


@given(st.one_of(st.none(), st.timedeltas(timedelta(0), timedelta(days=30))))
def test_a_401_after_the_refresh_is_the_tokens_outage_pending_at_once_and_never_a_persons_resend(
    tried_for: timedelta | None,
) -> None:
    """A lapsed token is not Basecamp refusing the message. It waits, pending,
    due at once (the outbox claims nothing until a token works), however long it has waited."""
    since = None if tried_for is None else NOW - tried_for
    after = after_refusal(answered(401), NOW, since)
    assert after == Retry(notes.TOKEN_REFUSED, NOW, NOW if since is None else since)
    assert not notes.resendable(notes.TOKEN_REFUSED)
    assert notes.given_up(notes.TOKEN_REFUSED) not in notes.RESENDABLE_NOTES
    assert INTENT_EDGES.step(
        IntentState.sending, IntentState.pending, Actor.automatic, notes.TOKEN_REFUSED
    ) == Success(IntentState.pending)


@given(
    st.sampled_from([NOT_CONNECTED, NOT_SENT, answered(429), answered(408)]),
    st.timedeltas(timedelta(0), timedelta(days=3)),
    st.timedeltas(timedelta(0), timedelta(days=30)),
)
def test_the_time_an_intent_sat_due_and_unclaimed_never_counts_toward_the_bound(
    outcome: Refused, tried_for: timedelta, waited_due: timedelta
) -> None:
    """A token outage (or a lost connection, a hold, a stop) the outbox waited out is not a try:
    the run's start moves on by it, so only tries while Basecamp answered count."""
    counted = min(tried_for, tried_for + waited_due)  # the tries; the wait moves the start on
    since = NOW - tried_for - waited_due
    after = after_refusal(outcome, NOW, since, waited_due)
    assert after == after_refusal(outcome, NOW, NOW - counted)
    assert isinstance(after, Retry) == (counted < RETRY_BOUND)


def test_a_day_of_token_outage_then_a_429_is_retried_not_given_up() -> None:
    """A 401 at the start of the run, 25 h of outage waited out, then a blip as sending resumes."""
    outage = timedelta(hours=25)
    first = after_refusal(answered(401), NOW - outage, None)
    assert isinstance(first, Retry)
    for blip in (answered(429, 5.0), NOT_CONNECTED):
        after = after_refusal(blip, NOW, first.since, waited_due=NOW - first.due_at)
        assert isinstance(after, Retry), "the outage never counted against the message"
        assert after.since == NOW
